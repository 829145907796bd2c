#include "kvcim/text.hpp"

#include <cstdio>

namespace kvcim {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t end; (end = text.find(sep, start)) != std::string::npos; start = end + 1)
    items.push_back(text.substr(start, end - start));
  items.push_back(text.substr(start));
  return items;
}

std::optional<int64_t> parse_integer(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used, 10);
  } catch (...) {
    return std::nullopt;
  }
  if (used != text.size()) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::string formatted(const char* format, double v) {
  char buf[128];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace kvcim
