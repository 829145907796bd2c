// SRAM density by node (see sram_nodes.hpp).
#include "kvcim/cmodel/energy/sram_nodes.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <sstream>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/cmodel/energy/read_fields.hpp"
#include "kvcim/cmodel/energy/scaling.hpp"
#include "kvcim/data_dir.hpp"
#include "kvcim/error.hpp"
#include "kvcim/spec_fields_json.hpp"

namespace kvcim::cmodel::energy {

namespace {

// What the rows alone cannot say: a macro no denser than its cell, the nodes from the largest
// down, the access energy given whole (and by the largest node, which the others are carried from).
void check_entry(const Section& s, const SramNodeEntry& e, const SramNodeEntry* larger) {
  if (1.0 / e.macro_mb_per_mm2 < e.bitcell_um2)
    s.child("macro_mb_per_mm2").error("value", "a macro cannot be denser than its bit cell (1 / bitcell_um2)");
  if (larger != nullptr && e.node_nm >= larger->node_nm)
    s.error("node_nm", "expected the nodes from the largest down, each smaller than the one before");
  const int given = e.read_pj_per_bit.has_value() + e.write_pj_per_bit.has_value() + e.access_voltage_v.has_value();
  if (given == 0 && larger == nullptr)
    s.error("read_pj_per_bit", "the largest node needs its access energy (read_pj_per_bit, write_pj_per_bit, "
                               "access_voltage_v): the smaller nodes are carried from it");
  if (given != 0 && given != 3)
    for (const char* k : {"read_pj_per_bit", "write_pj_per_bit", "access_voltage_v"})
      if (!s.has(k)) s.error(k, "give read_pj_per_bit, write_pj_per_bit and access_voltage_v together");
}

SramNodeFile file_from_node(const YAML::Node& root, const std::string& source) {
  if (!root || !root.IsMap()) fail(source, "file", show(root), "expected a mapping with nodes:");
  const Section top(root, source, "");
  top.check_keys({"nodes"});
  const YAML::Node list = root["nodes"];
  if (!list.IsSequence() || list.size() < 2) top.error("nodes", "expected a list of at least two nodes");
  SramNodeFile f;
  f.source = source;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsMap()) top.error("nodes", "expected each node as a mapping");
    const Section s(list[i], source, "nodes[" + std::to_string(i) + "]");
    SramNodeEntry e;
    read_fields(s, e);
    check_entry(s, e, f.nodes.empty() ? nullptr : &f.nodes.back());
    f.nodes.push_back(std::move(e));
  }
  return f;
}

// A node priced: its access energy as the entry gives it, or carried from `larger` (the node
// before it, itself given or carried) by the bitline's length, sqrt(macro area per bit).
SramNode priced(const SramNodeEntry& e, const SramNode* larger) {
  SramNode n;
  n.node_nm = e.node_nm;
  n.bitcell_um2 = e.bitcell_um2, n.macro_mb_per_mm2 = e.macro_mb_per_mm2;
  n.bitcell_provenance = e.bitcell_provenance, n.macro_provenance = e.macro_provenance;
  if (e.read_pj_per_bit) {
    n.read_pj_per_bit = *e.read_pj_per_bit, n.write_pj_per_bit = *e.write_pj_per_bit;
    n.access_voltage_v = *e.access_voltage_v;
    n.read_provenance = e.read_provenance, n.write_provenance = e.write_provenance;
    n.voltage_provenance = e.voltage_provenance;
    n.access_from_nm = n.node_nm;
    return n;
  }
  // (the reader refuses a largest node without its access energy; a file is only made by it)
  if (larger == nullptr) fail("sram nodes", "nodes[0].read_pj_per_bit", "(absent)", "the largest node's access energy");
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
  return n;
}

}  // namespace

SramNodeFile sram_node_file_from_text(const std::string& yaml, const std::string& source) {
  return file_from_node(yaml_from_text(yaml, source), source);
}

SramNodeFile sram_node_file_from_json(const nlohmann::json& j, const std::string& where) {
  return file_from_node(yaml_from_json_text(j.dump()), where);
}

SramNodeFile load_sram_node_file(const std::string& path) {
  return file_from_node(load_yaml_file(path, "SRAM node table"), path);
}

nlohmann::json sram_node_file_to_json(const SramNodeFile& f) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const SramNodeEntry& e : f.nodes) nodes.push_back(write_fields(e));
  return {{"nodes", nodes}};
}

std::vector<SramNode> sram_nodes_of(const SramNodeFile& f) {
  std::vector<SramNode> out;
  for (const SramNodeEntry& e : f.nodes) out.push_back(priced(e, out.empty() ? nullptr : &out.back()));
  return out;
}

std::vector<SramNode> sram_nodes_from_text(const std::string& yaml, const std::string& source) {
  return sram_nodes_of(sram_node_file_from_text(yaml, source));
}

const std::vector<SramNode>& sram_nodes() {
  static const std::vector<SramNode> table =
      sram_nodes_of(load_sram_node_file(data_dir() + "/configs/memory/sram_nodes.yaml"));
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
