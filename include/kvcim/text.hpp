// Small pieces of text handling shared by the readers of options, headers and configs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvcim {

// Every item between `sep`s, empty ones included: "a,,b," -> {"a", "", "b", ""}; "" -> {""}.
std::vector<std::string> split(const std::string& text, char sep);

// The whole of `text` as a decimal integer (std::stoll's syntax: leading white space and a sign
// allowed), or nothing when it is empty, has anything after the number, or does not fit.
std::optional<int64_t> parse_integer(const std::string& text);

// One number in a printf format ("%.3g", "%g mm2"): report lines and messages.
std::string formatted(const char* format, double v);

}  // namespace kvcim
