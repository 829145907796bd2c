// Editing a spec's YAML text in a test: one occurrence replaced; a missing one is a broken test.
// Reading a shipped file's text, and the refusal a reader gives a text ("" when it accepts it).
#pragma once
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "kvcim/error.hpp"

namespace kvcim::test {
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("test setup: '" + from + "' not in the spec text");
  return text.replace(at, from.size(), to);
}

// The text of a file of the source tree (KVCIM_SOURCE_DIR + "/" + path).
inline std::string source_text(const std::string& path) {
  std::ifstream in(std::string(KVCIM_SOURCE_DIR) + "/" + path);
  if (!in) throw std::runtime_error("test setup: cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// What `read(text)` throws as a kvcim::Error; "" when it accepts the text.
template <class Read>
std::string refusal_of(Read&& read, const std::string& text) {
  try {
    read(text);
  } catch (const kvcim::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace kvcim::test
