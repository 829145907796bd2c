// Structs described once by a field table. A struct lists its fields once, as an X-macro table of
// (type, name, doc) rows, and KVCIM_FIELDS declares from that one table the members, fields() (the
// table as values: name, member pointer, doc), a field-by-field operator+= and operator==. Every
// other use - differences, scaling, the Python dicts, JSON, the RTL's counter package, a test's
// field-by-field diff - walks fields() through the functions below, so adding a counter is one
// row in its struct's table (plus its pricing in the energy model).
//
//   #define KVCIM_SOFTMAX_EVENTS(X) X(int64_t, multiplies, "s_t x qmul") X(int64_t, cycles, "busy")
//   struct SoftmaxEvents { KVCIM_FIELDS(SoftmaxEvents, KVCIM_SOFTMAX_EVENTS) };
//
// A field is a counter (int64_t) or another described struct (a TileEvents holds two
// MacroEvents); the leaves are the counters, named by their dotted path ("k_macro.cycles").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace kvcim {

template <class S, class T>
struct Field {
  const char* name;  // the C++ member's name (a string literal: null-terminated)
  T S::*member;
  const char* doc;
};
struct FieldsEnd {};  // closes a table (the X-macro rows each end with a comma)

template <class T>
concept Described = requires { T::fields(); };

namespace detail {
template <class F>
constexpr void visit_one(const FieldsEnd&, F&) {}
template <class S, class T, class F>
constexpr void visit_one(const Field<S, T>& field, F& f) {
  f(field);
}
}  // namespace detail

// f(Field<S, T>) for each row of S's table, in order.
template <Described S, class F>
constexpr void for_each_field(F&& f) {
  std::apply([&](const auto&... field) { (detail::visit_one(field, f), ...); }, S::fields());
}

// The table's rows, counted (nested structs count as one).
template <Described S>
constexpr int field_count() {
  int n = 0;
  for_each_field<S>([&](const auto&) { ++n; });
  return n;
}

// a += b, field by field (nested structs recursively).
template <Described S>
constexpr S& add_fields(S& a, const S& b) {
  for_each_field<S>([&](const auto& field) {
    if constexpr (Described<std::remove_cvref_t<decltype(a.*field.member)>>)
      add_fields(a.*field.member, b.*field.member);
    else
      a.*field.member += b.*field.member;
  });
  return a;
}

// a - b, field by field: the events between two snapshots of a running count.
template <Described S>
constexpr S minus_fields(S a, const S& b) {
  for_each_field<S>([&](const auto& field) {
    if constexpr (Described<std::remove_cvref_t<decltype(a.*field.member)>>)
      a.*field.member = minus_fields(a.*field.member, b.*field.member);
    else
      a.*field.member -= b.*field.member;
  });
  return a;
}

// a x n, field by field: one stream's events for n streams alike.
template <Described S>
constexpr S times_fields(S a, int64_t n) {
  for_each_field<S>([&](const auto& field) {
    if constexpr (Described<std::remove_cvref_t<decltype(a.*field.member)>>)
      a.*field.member = times_fields(a.*field.member, n);
    else
      a.*field.member *= n;
  });
  return a;
}

// f(path, counter) for every counter of s, depth first in table order; path is the dotted name
// ("k_macro.row_activations"). S may be const (read) or not (write through the reference).
template <class S, class F>
  requires Described<std::remove_const_t<S>>
void for_each_counter(S& s, F&& f, const std::string& prefix = "") {
  for_each_field<std::remove_const_t<S>>([&](const auto& field) {
    auto& value = s.*field.member;
    const std::string path = prefix + field.name;
    if constexpr (Described<std::remove_cvref_t<decltype(value)>>)
      for_each_counter(value, f, path + ".");
    else
      f(path, value);
  });
}

// A row of the table per field, for a table's declaration (see the header comment).
#define KVCIM_FIELD_MEMBER(type, name, doc) type name{};
#define KVCIM_FIELD_ENTRY(type, name, doc) ::kvcim::Field<Self_, type>{#name, &Self_::name, doc},
#define KVCIM_FIELDS(Self, TABLE)                                                      \
  TABLE(KVCIM_FIELD_MEMBER)                                                            \
  using Self_ = Self;                                                                  \
  static constexpr auto fields() { return std::tuple{TABLE(KVCIM_FIELD_ENTRY) ::kvcim::FieldsEnd{}}; } \
  Self& operator+=(const Self& o) { return ::kvcim::add_fields(*this, o); }            \
  bool operator==(const Self&) const = default;

}  // namespace kvcim
