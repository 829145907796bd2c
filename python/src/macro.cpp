// Published CIM macros from Python (configs/macros/*.yaml: a macro as its paper describes it, what
// `kvcim macro` prices): MacroFile from a file or a dict, its sections MacroDesc and Published as
// typed values whose attributes come from their field tables, and to_dict, the file's tree, so
// that MacroFile.from_dict(f.to_dict()) round-trips.
#include "bindings.hpp"
#include "kvcim/cmodel/macro_model/macro_desc.hpp"
#include "spec_fields.hpp"

namespace kvcim::python {

namespace mm = kvcim::cmodel::macro_model;

namespace {

mm::MacroFile macro_from_yaml(const py::object& path) {
  const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
  py::gil_scoped_release release;
  return mm::load_macro_file(p);
}

mm::MacroFile macro_from_dict(const py::dict& d) {
  const nlohmann::json j = to_json(d, "MacroFile.from_dict");
  py::gil_scoped_release release;
  return mm::macro_file_from_json(j, "<dict>");
}

}  // namespace

void bind_macro(py::module_& m) {
  bind_spec_section<mm::MacroDesc>(m, "MacroDesc", "A macro as its paper describes it (MacroFile.macro).",
                                   &write_fields<mm::MacroDesc>);
  auto published = bind_spec_section<mm::Published>(m, "Published", "The paper's figures (MacroFile.published).",
                                                    &mm::published_to_json);
  published
      .def_property_readonly(
          "breakdown", [](const mm::Published& p) { return to_python(mm::published_to_json(p).value("breakdown", nlohmann::json::object())); },
          "Shares of the published energy by category ('array+input': a share of categories reported as one).")
      .def_property_readonly(
          "excludes", [](const mm::Published& p) { return to_python(mm::published_to_json(p).value("excludes", nlohmann::json::array())); },
          "The categories the published TOPS/W leaves out.");
  py::class_<mm::MacroFile>(m, "MacroFile", "A CIM macro as its paper describes it (configs/macros/*.yaml).")
      .def_static("from_yaml", &macro_from_yaml, py::arg("path"), "Reads and checks a macro file.")
      .def_static("from_dict", &macro_from_dict, py::arg("d"), "The same from the file's tree as a dict.")
      .def_readonly("name", &mm::MacroFile::name)
      .def_readonly("description", &mm::MacroFile::description)
      .def_readonly("source", &mm::MacroFile::source_file, "The file it was read from ('<dict>' for a dict).")
      .def_readonly("macro", &mm::MacroFile::desc, "The macro section, derived fields filled in.")
      .def_readonly("published", &mm::MacroFile::published)
      .def("to_dict", [](const mm::MacroFile& f) { return to_python(mm::macro_file_to_json(f)); },
           "The file's tree (name, description, macro, published), derived fields at their values.")
      .def("__repr__", [](const mm::MacroFile& f) { return "MacroFile(name='" + f.name + "', source='" + f.source_file + "')"; });
  m.def("load_macro", &macro_from_yaml, py::arg("path"),
        "A macro file (configs/macros/*.yaml) as a MacroFile: `kvcim macro --hw PATH` prices it.");
}

}  // namespace kvcim::python
