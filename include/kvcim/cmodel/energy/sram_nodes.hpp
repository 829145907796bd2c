// High-density SRAM by process node (configs/memory/sram_nodes.yaml): the bit cell and the
// density of a macro built from it, from published macros where found. Memory cells are carried
// between nodes by this table, not by logic area scaling: the conventional chip's SRAM banks and
// buffers and the bit cells of CIM macros alike (TechTable::areas). SRAM stopped following logic
// below 7 nm (5 nm and 3 nm cells differ by 5%), so a logic-scaled bit would come out denser than
// any built cell.
//
// The table also prices an SRAM access: the read and write energy per bit of an 8 KiB bank
// (kSramReferenceBankBytes) at a stated supply, where a published figure was found ([H5] 45 nm,
// [M8] 28 nm). A node without one is carried from the nearest larger node that has one by the
// bitline: its energy per bit is C V^2 with C the switched capacitance of one bit's access, taken
// to shrink with the cell's linear size, sqrt(macro area per bit) (an assumption the table
// states). Events a technology table marks `scaling: sram_read` / `sram_write` (the conventional
// chip's SRAM banks and buffers, the SRAM cells of digital CIM macros) are carried between nodes by
// this table instead of by logic scaling (scaling.hpp).
#pragma once
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/cmodel/energy/scaling.hpp"
#include "kvcim/spec_fields.hpp"

namespace kvcim::cmodel::energy {

// One entry of the file's `nodes:` list as written, declared once as a spec field table
// (kvcim/spec_fields.hpp): the reader (sram_nodes.cpp, through read_fields), the JSON writer
// (sram_node_file_to_json, the reader's inverse), Python's SramNodeEntry and the docs' field table
// walk it. Every figure is sourced: `{value: V, source: "..."}` or `{value: V, assumption: "..."}`.
// The access energy is given with all three rows or not at all (then carried, SramNode).
struct SramNodeEntry {
  double node_nm = std::numeric_limits<double>::quiet_NaN();  // required
  double bitcell_um2 = std::numeric_limits<double>::quiet_NaN(), macro_mb_per_mm2 = std::numeric_limits<double>::quiet_NaN();
  std::optional<double> read_pj_per_bit, write_pj_per_bit, access_voltage_v;
  // "source: ..." or "assumption: ..." of each figure
  std::string bitcell_provenance, macro_provenance, read_provenance, write_provenance, voltage_provenance;
};

constexpr auto spec_fields(const SramNodeEntry*) {
  using Self = SramNodeEntry;
  using ::kvcim::optional_field, ::kvcim::range_field;
  constexpr const char* carried = "carried from the node above by sqrt(macro area per bit)";
  return std::tuple{
      range_field("node_nm", &Self::node_nm, 1, 180, "nm", "process node; the list runs from the largest node down").needed(),
      range_field("bitcell_um2", &Self::bitcell_um2, 1e-4, 10, "um^2", "one high-density 6T bit cell")
          .needed().sourced(&Self::bitcell_provenance),
      range_field("macro_mb_per_mm2", &Self::macro_mb_per_mm2, 1e-3, 1e4, "Mb/mm^2",
                  "density of a macro of such cells with its periphery (at most 1 / bitcell_um2)")
          .needed().sourced(&Self::macro_provenance),
      optional_field("read_pj_per_bit", &Self::read_pj_per_bit, 1e-6, 100, "pJ",
                     "one bit read from an 8 KiB bank at access_voltage_v")
          .by_default(carried).sourced(&Self::read_provenance),
      optional_field("write_pj_per_bit", &Self::write_pj_per_bit, 1e-6, 100, "pJ",
                     "one bit written to an 8 KiB bank at access_voltage_v")
          .by_default(carried).sourced(&Self::write_provenance),
      optional_field("access_voltage_v", &Self::access_voltage_v, kMinVoltage, kMaxVoltage, "V",
                     "the supply the access energies are given at")
          .by_default("the node above's").sourced(&Self::voltage_provenance),
  };
}

// The file: its nodes from the largest down.
struct SramNodeFile {
  std::vector<SramNodeEntry> nodes;
  std::string source;  // the file it was read from ("<dict>" for a dict)
};

// A node as the model prices it: the entry's figures, and its access energy as given or carried.
struct SramNode {
  double node_nm = 0;
  double bitcell_um2 = 0;       // one 6T cell
  double macro_mb_per_mm2 = 0;  // a macro of such cells with its periphery
  std::string bitcell_provenance, macro_provenance;  // "source: ..." or "assumption: ..."
  // An access of one bit of an 8 KiB bank: pJ at access_voltage_v (as published, or carried)
  double read_pj_per_bit = 0, write_pj_per_bit = 0, access_voltage_v = 0;
  std::string read_provenance, write_provenance, voltage_provenance;
  double access_from_nm = 0;  // the node whose published figures these are (itself, or carried from)
  double macro_um2_per_bit() const { return 1.0 / macro_mb_per_mm2; }  // 1 Mb/mm^2 = 1 bit/um^2
  // Switched capacitance of one bit's access (pJ / V^2): the energy with its supply taken out.
  double read_pf() const { return read_pj_per_bit / (access_voltage_v * access_voltage_v); }
  double write_pf() const { return write_pj_per_bit / (access_voltage_v * access_voltage_v); }
};

// The bank size the table's access energies are given for: both published figures ([H5], [M8])
// are reads of an 8 KB SRAM, and a 256 x 256 CIM macro holds 8 KiB of cells.
inline constexpr double kSramReferenceBankBytes = 8192;

// Reads a table (YAML text; `source` names it in errors): at least two nodes, from the largest
// node down, each macro no denser than its bit cell; read_pj_per_bit, write_pj_per_bit and
// access_voltage_v given together, and at least by the largest node (the others are carried from
// it, above). Throws kvcim::Error "<file>:<line>: nodes[i].<key>[.value] = <value>: <expected>".
SramNodeFile sram_node_file_from_text(const std::string& yaml, const std::string& source);
SramNodeFile load_sram_node_file(const std::string& path);
// The same from the file's tree as JSON (a Python dict); `where` names it in errors.
SramNodeFile sram_node_file_from_json(const nlohmann::json& j, const std::string& where = "<dict>");
// The file as its tree: the reader's inverse (a carried node's access energy is not written).
nlohmann::json sram_node_file_to_json(const SramNodeFile& f);
// The nodes priced: each one's access energy as given, or carried from the node above.
std::vector<SramNode> sram_nodes_of(const SramNodeFile& f);
// sram_nodes_of(sram_node_file_from_text(yaml, source)).
std::vector<SramNode> sram_nodes_from_text(const std::string& yaml, const std::string& source);
// The shipped table (data_dir()/configs/memory/sram_nodes.yaml), read once.
const std::vector<SramNode>& sram_nodes();

// The macro area of one bit at `nm` (um^2): interpolated in log-log between the table's nodes;
// below its smallest node the smallest's (no further shrink assumed); above its largest node the
// largest's carried by logic area scaling (area_factor), the table having nothing older.
double sram_um2_per_bit(const std::vector<SramNode>& table, double nm);
// sram_um2_per_bit(to) / sram_um2_per_bit(from) on the shipped table.
double sram_area_factor(double from_nm, double to_nm);

// The energy (pJ) of one bit read (or written) in an 8 KiB bank at `p`: the switched capacitance
// interpolated in log-log between the table's nodes (held below its smallest node; above its
// largest carried as logic's switched capacitance, each node at its nominal supply) times
// p.voltage_v^2.
double sram_access_pj_per_bit(const std::vector<SramNode>& table, const NodePoint& p, bool write);
// sram_access_pj_per_bit(to) / sram_access_pj_per_bit(from) on the shipped table: how an SRAM
// access priced at `from` is carried to `to` (ScalingRule::sram_read / sram_write).
double sram_energy_factor(bool write, const NodePoint& from, const NodePoint& to);

}  // namespace kvcim::cmodel::energy
