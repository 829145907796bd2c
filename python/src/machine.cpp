// Named conventional machines from Python (configs/machines/*.yaml: an A100, an H100, what
// `--baseline NAME` runs): Machine from a file or a dict, its fields as attributes from their
// field table with each field's provenance (its sourced rows), and to_dict, the file's tree, so that
// Machine.from_dict(m.to_dict()) round-trips.
#include "bindings.hpp"
#include "kvcim/mapper/machine.hpp"
#include "spec_fields.hpp"

namespace kvcim::python {

void bind_machine(py::module_& m) {
  using mapper::Machine;
  py::class_<Machine> machine(m, "Machine",
                              "A named conventional machine (configs/machines/*.yaml), every field sourced or an assumption.");
  bind_fields_readonly(machine);
  bind_file_form(machine, &mapper::load_machine, &mapper::machine_file_from_json, &mapper::machine_file_to_json,
                 "Machine.from_dict");
  machine.def_readonly("name", &Machine::name)
      .def_readonly("description", &Machine::description)
      .def_readonly("source", &Machine::source, "The file it was read from ('<dict>' for a dict).")
      .def("__repr__", [](const Machine& mc) { return "Machine(name='" + mc.name + "', source='" + mc.source + "')"; });
  m.def("load_machine", file_reader(&mapper::load_machine), py::arg("path"),
        "A machine file (configs/machines/*.yaml) as a Machine: what `--baseline NAME` runs.");
}

}  // namespace kvcim::python
