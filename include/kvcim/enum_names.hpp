#pragma once
// An enum's names as one table in declaration order, instead of a switch per enum:
//
//   constexpr std::array kWhereNames{"cim", "offchip", "evicted"};
//   static_assert(kWhereNames.size() == enum_count(Where::evicted));
//   const char* name(Where w) { return enum_name(w, kWhereNames); }
//
// The static_assert against the last enumerator keeps the check a switch's -Wswitch gave: adding an
// enumerator without its name fails to compile.
#include <array>
#include <cstddef>

namespace kvcim {

template <class E>
constexpr std::size_t enum_count(E last) {
  return static_cast<std::size_t>(last) + 1;
}

template <class E, std::size_t N>
constexpr const char* enum_name(E e, const std::array<const char*, N>& names) {
  const auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : "?";
}

}  // namespace kvcim
