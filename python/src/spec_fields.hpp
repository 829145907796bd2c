// Python attributes of a spec struct from its field table (kvcim/spec_fields.hpp): one property
// per row, with the row's doc line, so that the attributes, the .pyi stub (kvcim._stubgen reads
// the properties) and the spec's parser cannot disagree on a field.
#pragma once
#include <string>

#include "bindings.hpp"
#include "kvcim/spec_fields.hpp"

namespace kvcim::python {

// Read-write attributes of the struct's own types (enums as their bound py::enum_): the C models'
// parameter structs (MacroSpec, TileParams), which a caller fills in and validates.
template <SpecTable S, class... Options>
void bind_fields_readwrite(py::class_<S, Options...>& c) {
  for_each_spec_field<S>([&](const auto& row) { c.def_readwrite(row.key, row.member, row.doc); });
}

// Read-only attributes, choices by their name in the spec file ("analog", "calibrated"): a
// section of a HardwareSpec, which changes through to_dict / from_dict.
template <SpecTable S, class... Options>
void bind_fields_readonly(py::class_<S, Options...>& c) {
  for_each_spec_field<S>([&](const auto& row) {
    using T = std::remove_cvref_t<decltype(std::declval<S>().*row.member)>;
    if constexpr (std::is_enum_v<T>)
      c.def_property_readonly(row.key, [row](const S& s) { return choice_name(row, s.*row.member); }, row.doc);
    else
      c.def_readonly(row.key, row.member, row.doc);
  });
}

}  // namespace kvcim::python
