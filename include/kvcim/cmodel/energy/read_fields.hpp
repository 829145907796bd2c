// Reading a section of a spec file (or of a dict, read as the YAML tree it is) into a struct with
// a field table (kvcim/spec_fields.hpp). Every key must be a row of the table (or one the caller
// reads by hand); each value is checked against its row's type and range; a field that does not
// apply to the section's kind is refused. Errors name the file and line, the key, the value and
// the legal range ("hw.yaml:12: kv.adc_bits = 40: expected an integer in [2, 30]"). A sourced row
// (SpecField::sourced) is read as `{value: V, source: "..."}` or `{value: V, assumption: "..."}`.
#pragma once
#include <cmath>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/spec_fields.hpp"

namespace kvcim::cmodel::energy {

// A plain integer ("17179869184"), read exactly, rather than a quantity ("16 GiB") read as a
// double, which holds whole numbers exactly only up to 2^53.
inline bool plain_integer(const Section& sec, const std::string& key) {
  const YAML::Node n = sec.node()[key];
  if (!n.IsScalar()) return false;
  const std::string& t = n.Scalar();
  return !t.empty() && t.size() <= 19 && t.find_first_not_of("0123456789") == std::string::npos;
}

// Reads every row of S's table that `sec` holds into s; a row it does not hold keeps s's value
// (the caller's default; an optional row stays absent) unless the row is required. `by_hand` are
// further keys the caller reads itself (a section, `macros: auto`). A path row is resolved against
// the section's folder (Section::get_file). Rows for every kind (the kind among them) are
// read first, so that the kind is known when the others are checked against it.
template <SpecTable S>
void read_fields(const Section& sec, S& s, std::initializer_list<std::string_view> by_hand = {}) {
  std::vector<std::string> keys;
  for_each_spec_field<S>([&](const auto& row) {
    if (row.in_file) keys.emplace_back(row.key);
  });
  for (std::string_view k : by_hand) keys.emplace_back(k);
  sec.check_keys(keys);
  auto manual = [&](std::string_view key) {
    for (std::string_view k : by_hand)
      if (k == key) return true;
    return false;
  };
  for (const bool general : {true, false}) {
    for_each_spec_field<S>([&](const auto& row) {
      if (!row.in_file || manual(row.key) || (row.kinds == kAllKinds) != general) return;
      const std::string key = row.key;
      if (!sec.has(key) && !row.required) return;
      if (!sec.has(key)) sec.error(key, std::string("required field is missing: ") + row.doc);
      if (!row.applies(kind_mask(s)))
        sec.error(key, "only meaningful for " + sec.field("kind") + ": " + kind_names<S>(row.kinds));
      auto& member = s.*row.member;
      using M = std::remove_cvref_t<decltype(member)>;
      using T = spec_value_t<M>;
      if constexpr (std::is_floating_point_v<T>) {
        if (row.provenance) {  // {value: V, source: "..."} or {value: V, assumption: "..."}
          const Sourced got = get_sourced(sec, key, row.lo, row.hi);
          member = static_cast<T>(got.value);
          s.*row.provenance = got.provenance;
          return;
        }
      }
      T v{};
      if constexpr (!is_optional_field_v<M>) v = member;
      if constexpr (std::is_same_v<T, bool>) {
        v = sec.get_bool(key, v);
      } else if constexpr (std::is_enum_v<T>) {
        v = static_cast<T>(sec.get_choice(key, std::vector<std::string>(row.choices.begin(), row.choices.end())));
      } else if constexpr (std::is_same_v<T, std::string>) {
        v = row.type() == SpecType::path ? sec.get_file(key, expected_text(row)) : sec.get_string(key);
      } else if constexpr (std::is_integral_v<T>) {
        if (row.type() == SpecType::bytes && plain_integer(sec, key)) {
          v = static_cast<T>(sec.get_int(key, row.ilo(), row.ihi()));  // exact beyond 2^53 too
        } else if (row.type() == SpecType::bytes) {
          const double b = sec.get_quantity(key, Unit::bytes);
          if (b != std::floor(b) || b < row.lo || b > row.hi) sec.error(key, expected_text(row));
          v = static_cast<T>(b);
        } else {
          v = static_cast<T>(sec.get_int(key, row.ilo(), row.ihi()));
        }
      } else if (row.whole) {
        v = static_cast<T>(sec.get_int(key, row.ilo(), row.ihi()));
      } else {
        v = static_cast<T>(sec.get_number(key, row.lo, row.hi));
      }
      member = v;
    });
  }
}

}  // namespace kvcim::cmodel::energy
