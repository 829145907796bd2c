// The one exception type at kvcim's library boundary. Its message names the file (or source),
// the field and the value at fault; the CLI prints it on one line and exits with code 2.
#pragma once
#include <stdexcept>
#include <string>

namespace kvcim {

// Messages are one line: control characters quoted from the input (a YAML parser's excerpt, a
// header's bytes) are shown escaped as \n, \r, \t or \xNN.
inline std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out.push_back(ch);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(one_line(message)) {}
  // "<where>: <field> = <value>: <what was expected>". `where` is a file, or in library code the
  // struct that holds the field (SessionOptions, Policy, MapRequest, ...), never a command-line
  // option: the CLI alone knows its options and puts the option's name in place of `where`
  // (runtime/cli/error_flags.cpp), so a Python user reads the fields they passed.
  Error(const std::string& where, const std::string& field, const std::string& value,
        const std::string& expected)
      : std::runtime_error(one_line(where + ": " + field + " = " + value + ": " + expected)),
        where_(where),
        field_(field),
        detail_(one_line(field + " = " + value + ": " + expected)) {}

  const std::string& where() const { return where_; }  // empty for a free-form message
  const std::string& field() const { return field_; }
  const std::string& detail() const { return detail_; }  // the message without "<where>: "

 private:
  std::string where_, field_, detail_;
};

[[noreturn]] inline void fail(const std::string& where, const std::string& field,
                              const std::string& value, const std::string& expected) {
  throw Error(where, field, value, expected);
}

}  // namespace kvcim
