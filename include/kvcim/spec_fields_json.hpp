// JSON from a spec struct's field table (spec_fields.hpp): the struct's fields as its section of
// the spec file writes them, and the table itself as data (for the docs page, Python and tests).
#pragma once
#include <filesystem>

#include <nlohmann/json.hpp>

#include "kvcim/spec_fields.hpp"

namespace kvcim {

namespace detail {
// A path as the file form writes it: absolute, so that the tree reads back from anywhere.
inline std::string absolute_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = path.empty() ? std::filesystem::path() : std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}
template <class S, class T>
nlohmann::json field_json(const SpecField<S, T>& row, const T& v) {
  if constexpr (is_optional_field_v<T>) return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  else if constexpr (std::is_enum_v<T>) return choice_name(row, v);
  else if constexpr (std::is_same_v<T, std::string>) return row.type() == SpecType::path ? absolute_path(v) : v;
  else return v;
}
// A sourced row's value as the file writes it: {value: V, source: "..."} (or assumption:), from
// the provenance text "source: ..." / "assumption: ..." (only {value: V} when a program left it empty).
template <class S, class T>
nlohmann::json row_json(const SpecField<S, T>& row, const S& s) {
  nlohmann::json v = field_json(row, s.*row.member);
  if (!row.provenance || v.is_null()) return v;
  nlohmann::json j = {{"value", v}};
  const std::string& text = s.*row.provenance;
  for (const char* which : {"source", "assumption"}) {
    const std::string prefix = std::string(which) + ": ";
    if (text.rfind(prefix, 0) == 0) j[which] = text.substr(prefix.size());
  }
  return j;
}
// Whether the file form holds the field: an optional one only when set, a sparse one only when
// it differs from its default, a path only when it names a file.
template <class S, class T>
bool written(const SpecField<S, T>& row, const T& v, const T& fallback) {
  if constexpr (is_optional_field_v<T>) return v.has_value();
  else if constexpr (std::is_same_v<T, std::string>)
    return row.type() == SpecType::path ? !v.empty() : !(row.omit_default && v == fallback);
  else return !(row.omit_default && v == fallback);
}
}  // namespace detail

// The section as the spec file holds it: every field of the file that applies to s's kind
// (a sparse field only when it differs from its default, an optional one only when set). The
// parser's inverse.
template <SpecTable S>
nlohmann::json write_fields(const S& s) {
  const S d{};
  const unsigned kind = kind_mask(s);
  nlohmann::json j = nlohmann::json::object();
  for_each_spec_field<S>([&](const auto& row) {
    if (!row.in_file || !row.applies(kind) || !detail::written(row, s.*row.member, d.*row.member)) return;
    j[row.key] = detail::row_json(row, s);
  });
  return j;
}

// The section as a report records it: write_fields, and the rows marked always_reported() at
// their values whatever the kind (a digital macro's ADC width and drift too).
template <SpecTable S>
nlohmann::json report_fields(const S& s) {
  nlohmann::json j = write_fields(s);
  for_each_spec_field<S>([&](const auto& row) {
    if (row.reported) j[row.key] = detail::field_json(row, s.*row.member);
  });
  return j;
}

// write_fields with each sourced row's value alone: what a report records beside the figures'
// provenance (provenance_json).
template <SpecTable S>
nlohmann::json value_fields(const S& s) {
  nlohmann::json j = write_fields(s);
  for_each_spec_field<S>([&](const auto& row) {
    if (row.provenance && j.contains(row.key) && j[row.key].is_object()) j[row.key] = j[row.key]["value"];
  });
  return j;
}

// provenance_of(s) as an object, key to text.
template <SpecTable S>
nlohmann::json provenance_json(const S& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, text] : provenance_of(s)) j[key] = text;
  return j;
}

// The table as data: per row key, type, unit, min, max, default, kinds, choices, files (a path's
// shipped files), doc, required, in_file (false: not a key of the file), defaults_to, sourced
// (written {value, source}).
template <SpecTable S>
nlohmann::json describe_fields() {
  const S d{};
  nlohmann::json rows = nlohmann::json::array();
  for_each_spec_field<S>([&](const auto& row) {
    nlohmann::json r = {{"key", row.key},
                        {"type", spec_type_name(row.type())},
                        {"unit", row.unit},
                        {"doc", row.doc},
                        {"required", row.required},
                        {"in_file", row.in_file},
                        {"sparse", row.omit_default},
                        {"optional", is_optional_field_v<std::remove_cvref_t<decltype(d.*row.member)>>},
                        {"sourced", row.provenance != nullptr},
                        {"defaults_to", row.defaults_to},
                        {"default", detail::field_json(row, d.*row.member)},
                        {"kinds", row.kinds == kAllKinds ? std::string("all") : kind_names<S>(row.kinds)}};
    const SpecType t = row.type();
    if (t == SpecType::integer || t == SpecType::bytes) {
      r["min"] = row.ilo();
      r["max"] = row.ihi();
    } else if (t == SpecType::number) {
      r["min"] = row.lo;
      r["max"] = row.hi;
    } else if (t == SpecType::choice) {
      nlohmann::json c = nlohmann::json::array();
      for (const auto& name : row.choices) c.push_back(std::string(name));
      r["choices"] = c;
    } else if (t == SpecType::path) {
      r["files"] = row.files;
    }
    rows.push_back(r);
  });
  return rows;
}

}  // namespace kvcim
