// Python attributes of a spec struct from its field table (kvcim/spec_fields.hpp): one property
// per row, with the row's doc line, so that the attributes, the .pyi stub (kvcim._stubgen reads
// the properties) and the spec's parser cannot disagree on a field.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "bindings.hpp"
#include "kvcim/spec_fields.hpp"
#include "kvcim/spec_fields_json.hpp"

namespace kvcim::python {

// A py::enum_ whose values are the enum's names table (the spec's spelling), in enum order.
template <class E>
  requires std::is_enum_v<E>
py::enum_<E> bind_enum(py::module_& m, const char* name, std::span<const std::string_view> names) {
  py::enum_<E> e(m, name);
  for (size_t i = 0; i < names.size(); ++i) e.value(std::string(names[i]).c_str(), static_cast<E>(i));
  return e;
}

// Read-write attributes of the struct's own types (enums as their bound py::enum_): the C models'
// parameter structs (MacroSpec, TileParams), which a caller fills in and validates.
template <SpecTable S, class... Options>
void bind_fields_readwrite(py::class_<S, Options...>& c) {
  for_each_spec_field<S>([&](const auto& row) { c.def_readwrite(row.key, row.member, row.doc); });
}

// Read-only attributes, choices by their name in the spec file ("analog", "calibrated"): a
// section of a HardwareSpec, which changes through to_dict / from_dict. A table with sourced rows
// also gets `provenance`, each figure's "source: ..." or "assumption: ..." by key.
template <SpecTable S, class... Options>
void bind_fields_readonly(py::class_<S, Options...>& c) {
  bool sourced = false;
  for_each_spec_field<S>([&](const auto& row) {
    using T = std::remove_cvref_t<decltype(std::declval<S>().*row.member)>;
    sourced = sourced || row.provenance != nullptr;
    if constexpr (std::is_enum_v<T>)
      c.def_property_readonly(row.key, [row](const S& s) { return choice_name(row, s.*row.member); }, row.doc);
    else
      c.def_readonly(row.key, row.member, row.doc);
  });
  if (!sourced) return;
  c.def_property_readonly(
      "provenance",
      [](const S& s) {
        py::dict d;
        for (const auto& [key, text] : provenance_of(s)) d[key.c_str()] = text;
        return d;
      },
      "Where each figure comes from, by key: 'source: ...' or 'assumption: ...'.");
}

// A section of a spec as a typed value: its C++ fields as attributes (bind_fields_readonly), and
// the read-only mapping protocol over its serialiser's dict (`json_of`, the section alone), so
// that `hw.kv["tokens_per_tile"]`, `hw.precision == {...}` and `dict(hw.organization)` work.
template <typename S>
py::class_<S> bind_spec_section(py::module_& m, const char* name, const char* doc, nlohmann::json (*json_of)(const S&)) {
  auto dict_of = [json_of](const S& s) { return to_python(json_of(s)).template cast<py::dict>(); };
  py::class_<S> c(m, name, doc);
  c.def("to_dict", dict_of, "The section as the spec's YAML writes it.")
      .def("keys", [dict_of](const S& s) { return dict_of(s).attr("keys")(); })
      .def("__iter__", [dict_of](const S& s) { return dict_of(s).attr("__iter__")(); })
      .def("__len__", [dict_of](const S& s) { return py::len(dict_of(s)); })
      .def("__contains__", [dict_of](const S& s, const py::object& key) { return dict_of(s).contains(key); })
      .def("__getitem__",
           [dict_of](const S& s, const std::string& key) -> py::object {
             py::dict d = dict_of(s);
             if (!d.contains(key)) throw py::key_error(key);
             return d[key.c_str()];
           })
      .def("__eq__",
           [dict_of](const S& s, const py::object& other) {
             if (py::isinstance<S>(other)) return dict_of(s).equal(dict_of(other.cast<S>()));
             return py::isinstance<py::dict>(other) && dict_of(s).equal(other);
           })
      .def("__repr__", [dict_of, name](const S& s) {
        return std::string(name) + "(" + std::string(py::str(dict_of(s))) + ")";
      });
  c.attr("__hash__") = py::none();
  bind_fields_readonly(c);
  return c;
}

// A function reading a spec file from a path-like object (str, pathlib.Path) with `load`.
template <class Doc>
auto file_reader(Doc (*load)(const std::string&)) {
  return [load](const py::object& path) {
    const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
    py::gil_scoped_release release;
    return load(p);
  };
}

// A spec file kind's file form: from_yaml(path), from_dict(d) (the file's tree, `dict_where`
// naming it in errors) and to_dict() (the parser's inverse), so that from_dict(f.to_dict()) gives
// f back.
template <class Doc, class... Options>
void bind_file_form(py::class_<Doc, Options...>& c, Doc (*load)(const std::string&),
                    Doc (*from_json)(const nlohmann::json&, const std::string&), nlohmann::json (*tree)(const Doc&),
                    const char* dict_where) {
  c.def_static("from_yaml", file_reader(load), py::arg("path"), "Reads and checks the file.")
      .def_static(
          "from_dict",
          [from_json, dict_where](const py::dict& d) {
            const nlohmann::json j = to_json(d, dict_where);
            py::gil_scoped_release release;
            return from_json(j, "<dict>");
          },
          py::arg("d"), "The same from the file's tree as a dict.")
      .def("to_dict", [tree](const Doc& f) { return to_python(tree(f)); },
           "The file's tree, every field written (derived ones at their values).");
}

}  // namespace kvcim::python
