// SRAM density by node (see sram_nodes.hpp).
#include "kvcim/cmodel/energy/sram_nodes.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/cmodel/energy/scaling.hpp"
#include "kvcim/data_dir.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel::energy {

std::vector<SramNode> sram_nodes_from_text(const std::string& yaml, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    fail(source, "yaml", "(syntax)", e.what());
  }
  if (!root || !root.IsMap()) fail(source, "file", show(root), "expected a mapping with nodes:");
  const Section top(root, source, "");
  top.check_keys({"nodes"});
  const YAML::Node list = root["nodes"];
  if (!list.IsSequence() || list.size() < 2) top.error("nodes", "expected a list of at least two nodes");
  std::vector<SramNode> out;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsMap()) top.error("nodes", "expected each node as a mapping");
    const Section s(list[i], source, "nodes[" + std::to_string(i) + "]");
    s.check_keys({"node_nm", "bitcell_um2", "macro_mb_per_mm2"});
    SramNode n;
    n.node_nm = s.get_number("node_nm", 1, 180);
    const Sourced cell = get_sourced(s, "bitcell_um2", 1e-4, 10);
    const Sourced macro = get_sourced(s, "macro_mb_per_mm2", 1e-3, 1e4);
    n.bitcell_um2 = cell.value;
    n.macro_mb_per_mm2 = macro.value;
    n.bitcell_provenance = cell.provenance;
    n.macro_provenance = macro.provenance;
    if (n.macro_um2_per_bit() < n.bitcell_um2)
      s.child("macro_mb_per_mm2").error("value", "a macro cannot be denser than its bit cell (1 / bitcell_um2)");
    if (!out.empty() && n.node_nm >= out.back().node_nm)
      s.error("node_nm", "expected the nodes from the largest down, each smaller than the one before");
    out.push_back(std::move(n));
  }
  return out;
}

const std::vector<SramNode>& sram_nodes() {
  static const std::vector<SramNode> table = [] {
    const std::string path = data_dir() + "/configs/memory/sram_nodes.yaml";
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, "file", "'" + path + "'", "cannot open the SRAM node table");
    std::ostringstream text;
    text << in.rdbuf();
    return sram_nodes_from_text(text.str(), path);
  }();
  return table;
}

double sram_um2_per_bit(const std::vector<SramNode>& t, double nm) {
  const SramNode& largest = t.front();
  if (nm >= largest.node_nm) return largest.macro_um2_per_bit() * area_factor(largest.node_nm, nm);
  if (nm <= t.back().node_nm) return t.back().macro_um2_per_bit();
  size_t i = 1;
  while (t[i].node_nm > nm) ++i;  // t[i - 1] > nm >= t[i]
  const SramNode &a = t[i - 1], &b = t[i];
  const double f = std::log(nm / a.node_nm) / std::log(b.node_nm / a.node_nm);
  return std::exp(std::log(a.macro_um2_per_bit()) + f * (std::log(b.macro_um2_per_bit()) - std::log(a.macro_um2_per_bit())));
}

double sram_area_factor(double from_nm, double to_nm) {
  return sram_um2_per_bit(sram_nodes(), to_nm) / sram_um2_per_bit(sram_nodes(), from_nm);
}

}  // namespace kvcim::cmodel::energy
