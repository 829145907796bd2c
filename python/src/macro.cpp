// Published CIM macros from Python (configs/macros/*.yaml: a macro as its paper describes it, what
// `kvcim macro` prices): MacroFile from a file or a dict, its sections MacroDesc and Published as
// typed values whose attributes come from their field tables, and to_dict, the file's tree, so
// that MacroFile.from_dict(f.to_dict()) round-trips.
#include "bindings.hpp"
#include "kvcim/cmodel/macro_model/macro_components.hpp"
#include "kvcim/cmodel/macro_model/macro_desc.hpp"
#include "spec_fields.hpp"

namespace kvcim::python {

namespace mm = kvcim::cmodel::macro_model;

namespace {

mm::MacroFile macro_from_yaml(const py::object& path) { return doc_from_path(path, &mm::load_macro_file); }
mm::MacroFile macro_from_dict(const py::dict& d) { return doc_from_dict(d, "MacroFile.from_dict", &mm::macro_file_from_json); }
mm::Constants model_from_yaml(const py::object& path) { return doc_from_path(path, &mm::load_constants); }
mm::Constants model_from_dict(const py::dict& d) { return doc_from_dict(d, "MacroModel.from_dict", &mm::constants_from_json); }

// The component model's constants (configs/macro_model.yaml): MacroModel, its held-out errors
// and its `constants` section, each constant an attribute from its row with its source.
void bind_macro_model(py::module_& m) {
  bind_spec_section<mm::MacroConstants>(m, "MacroConstants",
                                        "The component constants of the macro model (MacroModel.constants).",
                                        &write_fields<mm::MacroConstants>)
      .def_property_readonly(
          "fitted",
          [](const mm::MacroConstants&) {
            std::vector<std::string> names;
            for_each_spec_field<mm::MacroConstants>([&](const auto& row) {
              if (mm::fitted_constant(row.key)) names.emplace_back(row.key);
            });
            return names;
          },
          "The constants scripts/fit_macro_model.py fits (the others are fixed assumptions).");
  py::class_<mm::Constants> c(m, "MacroModel",
                              "The component macro model's constants and stated uncertainty (configs/macro_model.yaml).");
  c.def_static("from_yaml", &model_from_yaml, py::arg("path"), "Reads and checks a constants file.")
      .def_static("from_dict", &model_from_dict, py::arg("d"), "The same from the file's tree as a dict.")
      .def_property_readonly(
          "constants", [](const mm::Constants& k) -> mm::MacroConstants { return k; }, "The `constants` section.")
      .def_readonly("source", &mm::Constants::file, "The file it was read from ('<dict>' for a dict).")
      .def("to_dict", [](const mm::Constants& k) { return to_python(mm::constants_to_json(k)); },
           "The file's tree: the held-out errors and constants: {name: {'value': V, 'source': ...}}.")
      .def("__repr__", [](const mm::Constants& k) { return "MacroModel(source='" + k.file + "')"; });
  bind_fields_readonly(c);
  m.def("load_macro_model", &model_from_yaml, py::arg("path"),
        "The macro model's constants (configs/macro_model.yaml, or a file `kvcim macro --constants` takes).");
}

}  // namespace

void bind_macro(py::module_& m) {
  bind_macro_model(m);
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
