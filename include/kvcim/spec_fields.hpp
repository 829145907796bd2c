// Spec structs described once by a field table, as KVCIM_FIELDS describes event counters. Each
// section of the hardware spec (KvSpec, Organization, Precision, MacroSpec, BaselineConfig,
// NodePoint, the attention tile's TileParams) has one table beside its struct: per field its key,
// member, unit, legal range, the kinds of the struct it applies to and one line of doc. The
// default is the value of a default-constructed struct (or, when the parser derives it from
// another field, what `defaults_to` names). Everything else walks the table:
//
//   read_fields   (cmodel/energy/read_fields.hpp)  YAML / dict reading with validation
//   write_fields, describe_fields (spec_fields_json.hpp)  JSON writing, the table as data
//   check_fields  (below)                   a struct's values re-checked (after a program set them)
//   bind_fields   (python/src/spec_fields.hpp)  the Python attributes (and so the .pyi stub)
//   docs/hardware_fields.md                 made from describe_fields (kvcim._fieldsdoc)
//
// A table is found by argument-dependent lookup: `constexpr auto spec_fields(const S*)` returns a
// std::tuple of SpecField rows; a struct with kinds also declares `int spec_kind(const S&)` (the
// index of its kind in its `kind` row's choices), and rows that apply to some kinds only say so
// with `.only(...)`. Adding a field is one member and one row.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kvcim/error.hpp"

namespace kvcim {

// path: a text naming a file (a technology table, a macro file), resolved against the folder of
// the spec file that names it (a dict's: the caller's base folder) and refused when no such
// regular file exists; written absolute.
enum class SpecType { integer, number, boolean, choice, text, bytes, path };
constexpr const char* spec_type_name(SpecType t) {
  constexpr const char* names[] = {"integer", "number", "boolean", "choice", "text", "bytes", "path"};
  return names[static_cast<int>(t)];
}

inline constexpr unsigned kAllKinds = ~0u;
constexpr unsigned kind_bit(int kind) { return 1u << kind; }

// The value type of a member: T, or U for an optional field (std::optional<U>: absent from the
// file unless given, written only when set).
template <class T>
struct SpecValue {
  using type = T;
  static constexpr bool optional = false;
};
template <class T>
struct SpecValue<std::optional<T>> {
  using type = T;
  static constexpr bool optional = true;
};
template <class T>
using spec_value_t = typename SpecValue<T>::type;
template <class T>
inline constexpr bool is_optional_field_v = SpecValue<T>::optional;

template <class S, class T>
struct SpecField {
  const char* key;
  T S::*member;
  const char* unit = "";    // "bytes" is read as a quantity ("2 MiB"); the others are documentation
  double lo = 0, hi = 0;    // legal range (integer, number, bytes)
  const char* doc = "";
  std::span<const std::string_view> choices{};  // choice: the names, in enum order
  unsigned kinds = kAllKinds;  // the struct's kinds (spec_kind) the field applies to
  bool required = false;       // no default: a spec must name it
  bool in_file = true;         // false: the struct's field only (set from other sections)
  bool omit_default = false;   // written only when it differs from the default
  const char* defaults_to = "";  // a default the parser derives from another field
  bool reported = false;       // a report records it on every kind (what the struct computes with)
  bool whole = false;          // a floating member that holds whole numbers only (read as an integer)
  const char* files = "";      // path: the shipped files it names, from the data root ("configs/tech/*.yaml")
  // A sourced number: the file writes `{value: V, source: "..."}` or `{value: V, assumption: "..."}`
  // and the text lands in this member ("source: ..." / "assumption: ..."): every figure of a data
  // table says where it comes from.
  std::string S::*provenance = nullptr;

  constexpr SpecField only(unsigned k) const { auto f = *this; f.kinds = k; return f; }
  constexpr SpecField needed() const { auto f = *this; f.required = true; return f; }
  constexpr SpecField derived() const { auto f = *this; f.in_file = false; return f; }
  constexpr SpecField sparse() const { auto f = *this; f.omit_default = true; return f; }
  constexpr SpecField by_default(const char* what) const { auto f = *this; f.defaults_to = what; return f; }
  constexpr SpecField always_reported() const { auto f = *this; f.reported = true; return f; }
  constexpr SpecField whole_number() const { auto f = *this; f.whole = true; return f; }
  constexpr SpecField sourced(std::string S::*p) const { auto f = *this; f.provenance = p; return f; }

  constexpr SpecType type() const {
    using V = spec_value_t<T>;
    if constexpr (std::is_same_v<V, bool>) return SpecType::boolean;
    else if constexpr (std::is_enum_v<V>) return SpecType::choice;
    else if constexpr (std::is_same_v<V, std::string>) return files[0] ? SpecType::path : SpecType::text;
    else if constexpr (std::is_integral_v<V>) return std::string_view(unit) == "bytes" ? SpecType::bytes : SpecType::integer;
    else return whole ? SpecType::integer : SpecType::number;
  }
  bool applies(unsigned kind_mask) const { return (kinds & kind_mask) != 0; }
  // The integer bounds (lo and hi are doubles: INT64_MAX is held as 2^63).
  int64_t ilo() const { return static_cast<int64_t>(lo); }
  int64_t ihi() const { return hi >= 9.2e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi); }
};

// Row makers: an integer or number in [lo, hi], a flag, one of named choices, a text, a file.
template <class S, class T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
constexpr SpecField<S, T> range_field(const char* key, T S::*m, double lo, double hi, const char* unit,
                                      const char* doc) {
  return {key, m, unit, lo, hi, doc};
}
template <class S>
constexpr SpecField<S, bool> flag_field(const char* key, bool S::*m, const char* doc) {
  return {key, m, "", 0, 1, doc};
}
// An optional number: absent unless the file gives it.
template <class S, class T>
  requires std::is_arithmetic_v<T>
constexpr SpecField<S, std::optional<T>> optional_field(const char* key, std::optional<T> S::*m, double lo, double hi,
                                                        const char* unit, const char* doc) {
  return {key, m, unit, lo, hi, doc};
}
template <class S>
constexpr SpecField<S, std::string> text_field(const char* key, std::string S::*m, const char* doc) {
  return {key, m, "", 0, 0, doc};
}
// A file (SpecType::path): `files` the shipped ones it may name (a glob from the data root); "" is
// none (written only when set).
template <class S>
constexpr SpecField<S, std::string> path_field(const char* key, std::string S::*m, const char* files, const char* doc) {
  SpecField<S, std::string> f{key, m, "", 0, 0, doc};
  f.files = files;
  return f;
}
template <class S, class E>
  requires std::is_enum_v<E>
constexpr SpecField<S, E> choice_field(const char* key, E S::*m, std::span<const std::string_view> names,
                                       const char* doc) {
  return {key, m, "", 0, static_cast<double>(names.size() - 1), doc, names};
}

template <class S>
concept SpecTable = requires { spec_fields(static_cast<const S*>(nullptr)); };
template <class S>
concept KindedSpec = requires(const S& s) { { spec_kind(s) } -> std::convertible_to<int>; };

// f(row) for each row of S's table, in order.
template <SpecTable S, class F>
constexpr void for_each_spec_field(F&& f) {
  std::apply([&](const auto&... row) { (f(row), ...); }, spec_fields(static_cast<const S*>(nullptr)));
}

// The bit of s's kind (every bit for a struct without kinds).
template <SpecTable S>
unsigned kind_mask(const S& s) {
  if constexpr (KindedSpec<S>) return kind_bit(spec_kind(s));
  else return kAllKinds;
}

// The names of the kinds a mask covers ("analog", "digital|analog"), from the `kind` row.
template <SpecTable S>
std::string kind_names(unsigned mask) {
  std::string out;
  for_each_spec_field<S>([&](const auto& row) {
    if (row.type() != SpecType::choice || std::string_view(row.key) != "kind") return;
    for (size_t i = 0; i < row.choices.size(); ++i)
      if (mask & kind_bit(static_cast<int>(i))) {
        if (!out.empty()) out += '|';  // (not "" or "|" + name: g++ 12 -Wrestrict sees a false overlap)
        out += row.choices[i];
      }
  });
  return out;
}

// A choice's name (the enum's number when out of the table).
template <class S, class E>
std::string choice_name(const SpecField<S, E>& row, E v) {
  const auto i = static_cast<size_t>(v);
  return i < row.choices.size() ? std::string(row.choices[i]) : std::to_string(i);
}

// The value as text, for messages (V: the row's value type).
template <class S, class T, class V>
std::string show_plain(const SpecField<S, T>& row, const V& v) {
  if constexpr (std::is_same_v<V, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_enum_v<V>) {
    const auto i = static_cast<size_t>(v);
    return i < row.choices.size() ? std::string(row.choices[i]) : std::to_string(i);
  } else if constexpr (std::is_same_v<V, std::string>) {
    return "'" + v + "'";
  } else {
    return std::to_string(v);
  }
}
template <class S, class T>
std::string show_value(const SpecField<S, T>& row, const T& v) {
  if constexpr (is_optional_field_v<T>) return v ? show_plain(row, *v) : std::string("(absent)");
  else return show_plain(row, v);
}

// What a legal value of the row is, as the parser's messages say it.
template <class S, class T>
std::string expected_text(const SpecField<S, T>& row) {
  auto num = [](double v) {
    if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  switch (row.type()) {
    case SpecType::integer: return "expected an integer in [" + std::to_string(row.ilo()) + ", " + std::to_string(row.ihi()) + "]";
    case SpecType::bytes: return "expected a whole number of bytes in [" + num(row.lo) + ", " + num(row.hi) + "]";
    case SpecType::number: return "expected a number in [" + num(row.lo) + ", " + num(row.hi) + "]";
    case SpecType::boolean: return "expected true or false";
    case SpecType::choice: {
      std::string list;
      for (const auto& c : row.choices) {
        if (!list.empty()) list += ", ";
        list += c;
      }
      return "expected one of: " + list;
    }
    case SpecType::text: return "expected a text";
    case SpecType::path: return std::string("expected an existing file (") + row.files + ")";
  }
  return "";
}

namespace detail {
template <class S, class T, class V>
void check_value(const SpecField<S, T>& row, const V& v, const std::string& where, const std::string& field) {
  if constexpr (std::is_enum_v<V>) {
    if (static_cast<size_t>(v) >= row.choices.size()) fail(where, field, show_plain(row, v), expected_text(row));
  } else if constexpr (std::is_floating_point_v<V>) {
    if (!(v >= row.lo && v <= row.hi) || (row.whole && v != std::floor(v)))  // NaN too
      fail(where, field, show_plain(row, v), expected_text(row));
  } else if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) {
    if constexpr (std::is_unsigned_v<V>) {
      if (v > static_cast<uint64_t>(row.ihi())) fail(where, field, show_plain(row, v), expected_text(row));
    } else if (v < row.ilo() || v > row.ihi()) {
      fail(where, field, show_plain(row, v), expected_text(row));
    }
  }
}
}  // namespace detail

// Throws kvcim::Error naming `where`, the field (prefix + key), its value and its legal range
// when a field of s that applies to its kind lies outside its row's range. Fields with a
// dependent range (rows_per_cycle <= rows) are the struct's validate()'s.
template <SpecTable S>
void check_fields(const S& s, const std::string& where, const std::string& prefix = "") {
  const unsigned kind = kind_mask(s);
  for_each_spec_field<S>([&](const auto& row) {
    if (!row.applies(kind)) return;
    const auto& v = s.*row.member;
    if constexpr (is_optional_field_v<std::remove_cvref_t<decltype(v)>>) {
      if (v) detail::check_value(row, *v, where, prefix + row.key);
    } else {
      detail::check_value(row, v, where, prefix + row.key);
    }
  });
}

// Where each figure of s comes from, by key in table order: the text of each sourced row ("source:
// ..." or "assumption: ..."), a row left empty (a figure a program set) left out.
template <SpecTable S>
std::vector<std::pair<std::string, std::string>> provenance_of(const S& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for_each_spec_field<S>([&](const auto& row) {
    if (row.provenance && !(s.*row.provenance).empty()) out.emplace_back(row.key, s.*row.provenance);
  });
  return out;
}

// The keys of the rows (of every kind) on which a and b differ: a struct compared field by field
// through its table, so that a new row is compared too.
template <SpecTable S>
std::vector<std::string> differing_fields(const S& a, const S& b) {
  std::vector<std::string> out;
  for_each_spec_field<S>([&](const auto& row) {
    if (!(a.*row.member == b.*row.member)) out.emplace_back(row.key);
  });
  return out;
}

// Copies into `to` every field that S's table shares with From's (same key, same type) and that
// applies to from's kind: the spec's kv section into the tile it describes.
template <SpecTable From, SpecTable To>
void copy_shared_fields(const From& from, To& to) {
  const unsigned kind = kind_mask(from);
  for_each_spec_field<To>([&](const auto& dst) {
    using T = std::remove_cvref_t<decltype(to.*dst.member)>;
    for_each_spec_field<From>([&](const auto& src) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(from.*src.member)>, T>)
        if (src.applies(kind) && std::string_view(src.key) == dst.key) to.*dst.member = from.*src.member;
    });
  });
}

}  // namespace kvcim
