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

namespace {

energy::SramNodeFile sram_nodes_from_yaml(const py::object& path) { return doc_from_path(path, &energy::load_sram_node_file); }
energy::SramNodeFile sram_nodes_from_dict(const py::dict& d) {
  return doc_from_dict(d, "SramNodes.from_dict", &energy::sram_node_file_from_json);
}

}  // namespace

void bind_sram_nodes(py::module_& m) {
  bind_spec_section<energy::SramNodeEntry>(m, "SramNodeEntry", "One node of the SRAM node table as written (SramNodes.nodes).",
                                           &write_fields<energy::SramNodeEntry>);
  py::class_<energy::SramNodeFile>(m, "SramNodes",
                                   "High-density SRAM by node (configs/memory/sram_nodes.yaml), from the largest node down.")
      .def_static("from_yaml", &sram_nodes_from_yaml, py::arg("path"), "Reads and checks an SRAM node table.")
      .def_static("from_dict", &sram_nodes_from_dict, py::arg("d"), "The same from the file's tree as a dict.")
      .def_readonly("nodes", &energy::SramNodeFile::nodes, "The entries as written (a carried node's access energy absent).")
      .def_readonly("source", &energy::SramNodeFile::source, "The file it was read from ('<dict>' for a dict).")
      .def("to_dict", [](const energy::SramNodeFile& f) { return to_python(energy::sram_node_file_to_json(f)); },
           "The file's tree: {'nodes': [...]}, each figure {'value': V, 'source': ...} or {'value': V, 'assumption': ...}.")
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
  m.def("load_sram_nodes", &sram_nodes_from_yaml, py::arg("path"),
        "An SRAM node table (configs/memory/sram_nodes.yaml) as SramNodes.");
}

}  // namespace kvcim::python
