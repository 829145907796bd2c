// High-density SRAM by process node (configs/memory/sram_nodes.yaml): the bit cell and the
// density of a macro built from it, from published macros where found. Memory cells are carried
// between nodes by this table, not by logic area scaling: the conventional chip's SRAM banks and
// buffers and the bit cells of CIM macros alike (TechTable::areas). SRAM stopped following logic
// below 7 nm (5 nm and 3 nm cells differ by 5%), so a logic-scaled bit would come out denser than
// any built cell.
#pragma once
#include <string>
#include <vector>

namespace kvcim::cmodel::energy {

struct SramNode {
  double node_nm = 0;
  double bitcell_um2 = 0;       // one 6T cell
  double macro_mb_per_mm2 = 0;  // a macro of such cells with its periphery
  std::string bitcell_provenance, macro_provenance;  // "source: ..." or "assumption: ..."
  double macro_um2_per_bit() const { return 1.0 / macro_mb_per_mm2; }  // 1 Mb/mm^2 = 1 bit/um^2
};

// Reads a table (YAML text; `source` names it in errors): at least two nodes, from the largest
// node down, each macro no denser than its bit cell. Throws kvcim::Error naming the field.
std::vector<SramNode> sram_nodes_from_text(const std::string& yaml, const std::string& source);
// The shipped table (data_dir()/configs/memory/sram_nodes.yaml), read once.
const std::vector<SramNode>& sram_nodes();

// The macro area of one bit at `nm` (um^2): interpolated in log-log between the table's nodes;
// below its smallest node the smallest's (no further shrink assumed); above its largest node the
// largest's carried by logic area scaling (area_factor), the table having nothing older.
double sram_um2_per_bit(const std::vector<SramNode>& table, double nm);
// sram_um2_per_bit(to) / sram_um2_per_bit(from) on the shipped table.
double sram_area_factor(double from_nm, double to_nm);

}  // namespace kvcim::cmodel::energy
