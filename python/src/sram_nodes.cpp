// The SRAM node table from Python (configs/memory/sram_nodes.yaml: the bit cell, the macro density
// and the access energy of high-density SRAM by node, which carry memory cells between nodes):
// SramNodes from a file or a dict, its entries as typed values whose attributes come from their
// field table, to_dict the file's tree (SramNodes.from_dict(t.to_dict()) round-trips), and the
// figures the model takes from it at any node.
#include "bindings.hpp"
#include "kvcim/cmodel/energy/sram_nodes.hpp"
#include "spec_fields.hpp"

namespace kvcim::python {

namespace energy = kvcim::cmodel::energy;

void bind_sram_nodes(py::module_& m) {
  bind_spec_section<energy::SramNodeEntry>(m, "SramNodeEntry", "One node of the SRAM node table as written (SramNodes.nodes).",
                                           &write_fields<energy::SramNodeEntry>);
  py::class_<energy::SramNodeFile> c(m, "SramNodes",
                                     "High-density SRAM by node (configs/memory/sram_nodes.yaml), from the largest node down.");
  bind_file_form(c, &energy::load_sram_node_file, &energy::sram_node_file_from_json, &energy::sram_node_file_to_json,
                 "SramNodes.from_dict");
  c.def_readonly("nodes", &energy::SramNodeFile::nodes, "The entries as written (a carried node's access energy absent).")
      .def_readonly("source", &energy::SramNodeFile::source, "The file it was read from ('<dict>' for a dict).")
      .def(
          "um2_per_bit",
          [](const energy::SramNodeFile& f, double node_nm) {
            if (!(node_nm >= 1 && node_nm <= 180)) fail("SramNodes.um2_per_bit", "node_nm", std::to_string(node_nm), "1 .. 180 nm");
            return energy::sram_um2_per_bit(energy::sram_nodes_of(f), node_nm);
          },
          py::arg("node_nm"), "Macro area of one bit at the node (um^2), interpolated in log-log between the table's nodes.")
      .def(
          "access_pj_per_bit",
          [](const energy::SramNodeFile& f, double node_nm, double voltage_v, bool write) {
            check_fields(energy::NodePoint{node_nm, voltage_v}, "SramNodes.access_pj_per_bit");
            return energy::sram_access_pj_per_bit(energy::sram_nodes_of(f), {node_nm, voltage_v}, write);
          },
          py::arg("node_nm"), py::arg("voltage_v"), py::arg("write") = false,
          "One bit read (or written) in an 8 KiB bank at the node and supply (pJ): given, or carried from the node above.")
      .def("__repr__", [](const energy::SramNodeFile& f) {
        return "SramNodes(" + std::to_string(f.nodes.size()) + " nodes, source='" + f.source + "')";
      });
  m.def("load_sram_nodes", file_reader(&energy::load_sram_node_file), py::arg("path"),
        "An SRAM node table (configs/memory/sram_nodes.yaml) as SramNodes.");
}

}  // namespace kvcim::python
