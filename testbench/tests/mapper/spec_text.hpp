// Editing a spec's YAML text in a test: one occurrence replaced; a missing one is a broken test.
#pragma once
#include <stdexcept>
#include <string>

namespace kvcim::test {
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("test setup: '" + from + "' not in the spec text");
  return text.replace(at, from.size(), to);
}
}  // namespace kvcim::test
