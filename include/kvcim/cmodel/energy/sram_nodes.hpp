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
#include <string>
#include <vector>

#include "kvcim/cmodel/energy/scaling.hpp"

namespace kvcim::cmodel::energy {

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
// it, above). Throws kvcim::Error naming the field.
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
