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
  bind_file_form(c, &mm::load_constants, &mm::constants_from_json, &mm::constants_to_json, "MacroModel.from_dict");
  c.def_property_readonly(
       "constants", [](const mm::Constants& k) -> mm::MacroConstants { return k; }, "The `constants` section.")
      .def_readonly("source", &mm::Constants::file, "The file it was read from ('<dict>' for a dict).")
      .def("__repr__", [](const mm::Constants& k) { return "MacroModel(source='" + k.file + "')"; });
  bind_fields_readonly(c);
  m.def("load_macro_model", file_reader(&mm::load_constants), py::arg("path"),
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
  py::class_<mm::MacroFile> file(m, "MacroFile", "A CIM macro as its paper describes it (configs/macros/*.yaml).");
  bind_file_form(file, &mm::load_macro_file, &mm::macro_file_from_json, &mm::macro_file_to_json, "MacroFile.from_dict");
  file.def_readonly("name", &mm::MacroFile::name)
      .def_readonly("description", &mm::MacroFile::description)
      .def_readonly("source", &mm::MacroFile::source_file, "The file it was read from ('<dict>' for a dict).")
      .def_readonly("macro", &mm::MacroFile::desc, "The macro section, derived fields filled in.")
      .def_readonly("published", &mm::MacroFile::published)
      .def("__repr__", [](const mm::MacroFile& f) { return "MacroFile(name='" + f.name + "', source='" + f.source_file + "')"; });
  m.def("load_macro", file_reader(&mm::load_macro_file), py::arg("path"),
        "A macro file (configs/macros/*.yaml) as a MacroFile: `kvcim macro --hw PATH` prices it.");
}

}  // namespace kvcim::python
