// The one exception type at kvcim's library boundary. Its message names the file (or source),
// the field and the value at fault; the CLI prints it on one line and exits with code 2.
#pragma once
#include <stdexcept>
#include <string>

namespace kvcim {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// "<where>: <field> = <value>: <what was expected>"
[[noreturn]] inline void fail(const std::string& where, const std::string& field,
                              const std::string& value, const std::string& expected) {
  throw Error(where + ": " + field + " = " + value + ": " + expected);
}

}  // namespace kvcim
