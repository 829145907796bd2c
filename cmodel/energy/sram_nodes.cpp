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

namespace {

// A node's access energy: as the table gives it (all three keys), or carried from `larger` (the
// node before it, itself given or carried) by the bitline's length, sqrt(macro area per bit).
void read_access(const Section& s, SramNode& n, const SramNode* larger) {
  const char* keys[] = {"read_pj_per_bit", "write_pj_per_bit", "access_voltage_v"};
  int given = 0;
  for (const char* k : keys) given += s.has(k) ? 1 : 0;
  if (given == 0 && larger == nullptr)
    s.error("read_pj_per_bit", "the largest node needs its access energy (read_pj_per_bit, write_pj_per_bit, "
                               "access_voltage_v): the smaller nodes are carried from it");
  if (given != 0 && given != 3)
    for (const char* k : keys)
      if (!s.has(k)) s.error(k, "give read_pj_per_bit, write_pj_per_bit and access_voltage_v together");
  if (given == 3) {
    const Sourced r = get_sourced(s, "read_pj_per_bit", 1e-6, 100);
    const Sourced w = get_sourced(s, "write_pj_per_bit", 1e-6, 100);
    const Sourced v = get_sourced(s, "access_voltage_v", kMinVoltage, kMaxVoltage);
    n.read_pj_per_bit = r.value, n.write_pj_per_bit = w.value, n.access_voltage_v = v.value;
    n.read_provenance = r.provenance, n.write_provenance = w.provenance, n.voltage_provenance = v.provenance;
    n.access_from_nm = n.node_nm;
    return;
  }
  // carried from the largest node above with published figures (the square roots telescope)
  const double shrink = std::sqrt(n.macro_um2_per_bit() / larger->macro_um2_per_bit());
  n.access_from_nm = larger->access_from_nm;
  n.access_voltage_v = larger->access_voltage_v;
  n.read_pj_per_bit = larger->read_pj_per_bit * shrink;
  n.write_pj_per_bit = larger->write_pj_per_bit * shrink;
  std::ostringstream why;
  why.precision(3);
  why << "assumption: no published access energy at " << n.node_nm << " nm; the " << n.access_from_nm
      << " nm one carried by the bitline, whose capacitance per bit shrinks with the cell's linear size, "
         "sqrt of the macro area per bit: "
      << n.read_pj_per_bit << " pJ/bit at " << n.access_voltage_v << " V";
  n.read_provenance = n.write_provenance = why.str();
  n.voltage_provenance = larger->voltage_provenance;
}

}  // namespace

std::vector<SramNode> sram_nodes_from_text(const std::string& yaml, const std::string& source) {
  const YAML::Node root = yaml_from_text(yaml, source);
  if (!root || !root.IsMap()) fail(source, "file", show(root), "expected a mapping with nodes:");
  const Section top(root, source, "");
  top.check_keys({"nodes"});
  const YAML::Node list = root["nodes"];
  if (!list.IsSequence() || list.size() < 2) top.error("nodes", "expected a list of at least two nodes");
  std::vector<SramNode> out;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsMap()) top.error("nodes", "expected each node as a mapping");
    const Section s(list[i], source, "nodes[" + std::to_string(i) + "]");
    s.check_keys({"node_nm", "bitcell_um2", "macro_mb_per_mm2", "read_pj_per_bit", "write_pj_per_bit",
                  "access_voltage_v"});
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
    read_access(s, n, out.empty() ? nullptr : &out.back());
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

double sram_access_pj_per_bit(const std::vector<SramNode>& t, const NodePoint& p, bool write) {
  auto pf = [write](const SramNode& n) { return write ? n.write_pf() : n.read_pf(); };
  const double v2 = p.voltage_v * p.voltage_v;
  const SramNode& largest = t.front();
  if (p.node_nm >= largest.node_nm) {
    // older than the table: the capacitance as logic's, each node at its nominal supply (where
    // the fits hold), the supply taken out
    const double va = nominal_voltage(largest.node_nm), vb = nominal_voltage(p.node_nm);
    return pf(largest) * energy_factor({largest.node_nm, va}, {p.node_nm, vb}) * (va * va) / (vb * vb) * v2;
  }
  if (p.node_nm <= t.back().node_nm) return pf(t.back()) * v2;
  size_t i = 1;
  while (t[i].node_nm > p.node_nm) ++i;  // t[i - 1] > nm >= t[i]
  const SramNode &a = t[i - 1], &b = t[i];
  const double f = std::log(p.node_nm / a.node_nm) / std::log(b.node_nm / a.node_nm);
  return std::exp(std::log(pf(a)) + f * (std::log(pf(b)) - std::log(pf(a)))) * v2;
}

double sram_energy_factor(bool write, const NodePoint& from, const NodePoint& to) {
  return sram_access_pj_per_bit(sram_nodes(), to, write) / sram_access_pj_per_bit(sram_nodes(), from, write);
}

}  // namespace kvcim::cmodel::energy
