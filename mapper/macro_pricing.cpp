#include "kvcim/mapper/macro_pricing.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/cmodel/energy/ledger.hpp"
#include "kvcim/error.hpp"

namespace kvcim::mapper {

namespace fs = std::filesystem;
namespace cim = cmodel::cim;
namespace energy = cmodel::energy;
using energy::Section;

namespace {

const std::vector<std::string> kRoles = {"calibrated", "held_out"};

std::string fmt(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

PublishedMacro read_published(const Section& p) {
  p.check_keys({"id", "source", "node_nm", "precision", "tops_per_w", "tops_per_mm2", "mb_per_mm2",
                "role"});
  PublishedMacro out;
  out.id = p.get_string("id");
  if (out.id.size() < 2 || out.id[0] != 'C' || !energy::is_known_source_id(out.id))
    p.error("id", "a macro row ID of section 3 of energy-numbers.md (C1, C2, ...)");
  out.source = p.get_string("source");
  if (out.source.find("[" + out.id + "]") == std::string::npos)
    p.error("source", "a citation that names the row, e.g. \"[" + out.id + "] ...\"");
  out.node.node_nm = p.get_number("node_nm", energy::kMinNode, energy::kMaxNode);
  const Section pr = p.child("precision");
  pr.check_keys({"weight_bits", "input_bits", "input_signed", "stated", "assumption"});
  out.weight_bits = static_cast<int>(pr.get_int("weight_bits", 2, 16));
  out.input_signed = pr.get_bool("input_signed", true);
  out.input_bits = static_cast<int>(pr.get_int("input_bits", out.input_signed ? 2 : 1, 16));
  out.precision_stated = pr.get_bool("stated", true);
  if (!out.precision_stated) {
    if (!pr.has("assumption"))
      pr.error("assumption", "required when stated: false (what precision is taken, and why)");
    out.precision_assumption = pr.get_string("assumption");
  } else if (pr.has("assumption")) {
    pr.error("assumption", "only with stated: false (a stated precision needs no assumption)");
  }
  out.tops_per_w = p.get_number("tops_per_w", 1e-6, 1e9);
  if (p.has("tops_per_mm2")) out.tops_per_mm2 = p.get_number("tops_per_mm2", 1e-9, 1e9);
  if (p.has("mb_per_mm2")) out.mb_per_mm2 = p.get_number("mb_per_mm2", 1e-9, 1e9);
  out.role = static_cast<MacroRole>(p.get_choice("role", kRoles));
  return out;
}

}  // namespace

MacroFile macro_file_from_text(const std::string& text, const std::string& base_dir,
                               const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail(where, "yaml", "(syntax)", e.what());
  }
  if (!root.IsMap()) fail(where, "file", "(not a mapping)", "a macro spec: a hardware spec with a published: block");
  const Section top(root, where, "");
  if (!top.has("published"))
    top.error("published", "required: the published figures (id, node_nm, precision, tops_per_w, role)");
  MacroFile m;
  m.published = read_published(top.child("published"));
  // The rest is a hardware spec; its parser knows nothing of `published`.
  YAML::Node rest = YAML::Clone(root);
  rest.remove("published");
  m.hw = hardware_spec_from_node(rest, where, base_dir);
  // The hardware part compares at the macro's own node, so that `kvcim map` on this file and the
  // calibration price at the same node.
  if (m.hw.comparison.node_nm != m.published.node.node_nm)
    fail(top.where("comparison"), "comparison.node_nm", fmt(m.hw.comparison.node_nm),
         "equal to published.node_nm = " + fmt(m.published.node.node_nm) +
             " (the macro is priced at its own node)");
  m.published.node = m.hw.comparison;
  m.op = m.hw.macro;
  m.op.weight_bits = m.published.weight_bits;
  m.op.input_bits = m.published.input_bits;
  m.op.input_signed = m.published.input_signed;
  try {
    m.op.validate("published.precision");
  } catch (const Error& e) {
    fail(top.where("published"), "published.precision", "(with macro)", e.what());
  }
  return m;
}

MacroFile load_macro_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) fail(path, "file", "'" + path + "'", "cannot open the macro spec (a regular file)");
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) fail(path, "file", "'" + path + "'", "cannot read the macro spec");
  return macro_file_from_text(ss.str(), fs::path(path).parent_path().string(), path);
}

MacroPrice price_macro(const MacroFile& m) {
  MacroPrice p;
  const cim::MacroSpec& s = m.op;
  const bool analog = s.kind == cim::MacroKind::analog;
  p.rows = s.rows;
  p.outputs = s.weights_per_row();
  p.macs = p.rows * p.outputs;
  p.events = cim::compute_events(s, s.rows, static_cast<int>(p.outputs));
  p.costs = m.hw.costs();  // the macro table carried to the comparison node = published node
  energy::Ledger l(0);
  l.add_macro(energy::kModelLevel, energy::Op::other, p.events);
  p.breakdown = l.cost(p.costs);
  p.energy_pj = p.breakdown.energy_pj();
  p.latency_ns = static_cast<double>(p.events.cycles) *
                 static_cast<double>(p.costs.latency(energy::EventKind::macro_cycle)) * 1e-6;
  const energy::Areas a = m.hw.tech.areas(m.hw.comparison);
  p.cells_mm2 = static_cast<double>(s.rows) * s.cols * s.cell_bits * a.bit_cell_um2 * 1e-6;
  p.adcs_mm2 = analog ? static_cast<double>((s.cols + s.adc_share - 1) / s.adc_share) * a.adc_um2 * 1e-6 : 0.0;
  p.area_mm2 = p.cells_mm2 + p.adcs_mm2;
  const double ops = 2.0 * static_cast<double>(p.macs);
  if (!(p.energy_pj > 0)) fail(m.hw.source, "energy", "0 pJ", "a macro operation that costs energy (check the technology table)");
  if (!(p.latency_ns > 0)) fail(m.hw.source, "latency", "0 ns", "a macro cycle that takes time (check the technology table)");
  p.fj_per_mac = p.energy_pj * 1e3 / static_cast<double>(p.macs);
  p.tops_per_w = ops / p.energy_pj;
  p.gops = ops / p.latency_ns;
  p.tops_per_mm2 = p.gops / 1000.0 / p.area_mm2;
  p.tops_per_w_error = p.tops_per_w / m.published.tops_per_w - 1.0;
  if (m.published.tops_per_mm2) p.tops_per_mm2_error = p.tops_per_mm2 / *m.published.tops_per_mm2 - 1.0;
  return p;
}

namespace {

std::string conditions(const MacroFile& m) {
  const PublishedMacro& pb = m.published;
  const cim::MacroSpec& s = m.op;
  std::ostringstream o;
  o << fmt(pb.node.node_nm) << " nm, " << fmt(pb.node.voltage_v, 3) << " V"
    << (energy::is_extrapolated(pb.node.node_nm) ? " (node scaling extrapolated below 7 nm)" : "")
    << "; " << s.weight_bits << "b weights x " << s.input_bits << "b " << (s.input_signed ? "signed" : "unsigned")
    << " inputs" << (pb.precision_stated ? "" : " (precision not stated: assumed)") << "; "
    << (s.kind == cim::MacroKind::analog ? "analog" : "digital") << " " << s.rows << " x " << s.cols
    << ", " << s.cell_bits << "b cells, " << s.input_bits_per_cycle << " input bit(s)/cycle, "
    << s.rows_per_cycle << " rows/conversion";
  if (s.kind == cim::MacroKind::analog) o << ", " << s.adc_bits << "b ADC per " << s.adc_share << " columns";
  return o.str();
}

}  // namespace

std::string macro_summary(const MacroFile& m, const MacroPrice& p) {
  const PublishedMacro& pb = m.published;
  std::ostringstream o;
  o << "macro " << pb.id << " (" << m.hw.name << ", " << (pb.role == MacroRole::calibrated ? "calibrated" : "held out")
    << "), table " << m.hw.tech.name << " (" << fmt(m.hw.tech.node.node_nm) << " nm) carried to the macro's node\n";
  o << "  conditions: " << conditions(m) << "\n";
  o << "  included: one operation = all " << p.rows << " rows x " << p.outputs
    << " column groups for one input vector (array, converters, adder tree, shift-and-add); not included: "
       "leakage, weight writes, periphery outside the macro\n";
  if (!pb.precision_stated) o << "  precision assumption: " << pb.precision_assumption << "\n";
  o << "  MACs " << p.macs << ", energy " << fmt(p.energy_pj, 6) << " pJ, latency " << fmt(p.latency_ns, 5) << " ns ("
    << p.events.cycles << " cycles), area " << fmt(p.area_mm2, 4) << " mm^2\n";
  o << "  fJ/MAC     " << fmt(p.fj_per_mac) << "\n";
  o << "  TOPS/W     " << fmt(p.tops_per_w) << "   published " << fmt(pb.tops_per_w) << "   error "
    << fmt(100 * p.tops_per_w_error, 3) << "%\n";
  o << "  GOPS       " << fmt(p.gops) << "\n";
  o << "  TOPS/mm^2  " << fmt(p.tops_per_mm2);
  if (pb.tops_per_mm2) o << "   published " << fmt(*pb.tops_per_mm2) << "   error " << fmt(100 * *p.tops_per_mm2_error, 3) << "%";
  else o << "   (not published)";
  o << "\n  breakdown by event (pJ):\n";
  for (auto k : energy::all_event_kinds()) {
    const double e = static_cast<double>(p.breakdown.kind_energy_aj[static_cast<int>(k)]);
    if (e == 0) continue;
    o << "    " << energy::name(k) << " (" << energy::name(energy::component_of(k)) << "): " << fmt(e * 1e-6, 6)
      << " (" << fmt(100.0 * static_cast<double>(e) / static_cast<double>(p.breakdown.energy_aj), 3) << "%)\n";
  }
  return o.str();
}

nlohmann::json macro_to_json(const MacroFile& m, const MacroPrice& p) {
  const PublishedMacro& pb = m.published;
  const cim::MacroSpec& s = m.op;
  nlohmann::json by_kind = nlohmann::json::object(), by_component = nlohmann::json::object(), counts;
  for (auto k : energy::all_event_kinds()) {
    const double e = static_cast<double>(p.breakdown.kind_energy_aj[static_cast<int>(k)]);
    if (e != 0) by_kind[std::string(energy::name(k))] = e * 1e-6;
  }
  for (auto c : energy::all_components()) {
    const double e = static_cast<double>(p.breakdown.component_energy_aj[static_cast<int>(c)]);
    if (e != 0) by_component[std::string(energy::name(c))] = e * 1e-6;
  }
  // the compute's events by kind (its cells are written once, at load: not an event of the compute)
  const auto by_event = energy::macro_event_counts(p.events);
  for (int i = 0; i < energy::kMacroEventKinds; ++i)
    if (static_cast<energy::EventKind>(i) != energy::EventKind::cell_write)
      counts[std::string(energy::name(static_cast<energy::EventKind>(i)))] = by_event[i];
  nlohmann::json published = {{"id", pb.id},
                              {"source", pb.source},
                              {"tops_per_w", pb.tops_per_w},
                              {"role", kRoles.at(static_cast<int>(pb.role))}};
  if (pb.tops_per_mm2) published["tops_per_mm2"] = *pb.tops_per_mm2;
  if (pb.mb_per_mm2) published["mb_per_mm2"] = *pb.mb_per_mm2;
  nlohmann::json j = {
      {"macro", m.hw.name},
      {"file", m.hw.source},
      {"technology", m.hw.tech.name},
      {"conditions", {{"node_nm", pb.node.node_nm}, {"voltage_v", pb.node.voltage_v},
                      {"extrapolated_node", energy::is_extrapolated(pb.node.node_nm)},
                      {"weight_bits", s.weight_bits}, {"input_bits", s.input_bits},
                      {"input_signed", s.input_signed}, {"precision_stated", pb.precision_stated},
                      {"description", conditions(m)},
                      {"included", "one operation: all rows x all column groups for one input vector; "
                                   "leakage, writes and periphery outside the macro excluded"}}},
      {"published", published},
      {"macs", p.macs},
      {"energy_pj", p.energy_pj},
      {"latency_ns", p.latency_ns},
      {"area_mm2", {{"total", p.area_mm2}, {"cells", p.cells_mm2}, {"adcs", p.adcs_mm2}}},
      {"fj_per_mac", p.fj_per_mac},
      {"tops_per_w", p.tops_per_w},
      {"gops", p.gops},
      {"tops_per_mm2", p.tops_per_mm2},
      {"tops_per_w_error", p.tops_per_w_error},
      {"events", counts},
      {"energy_pj_by_event", by_kind},
      {"energy_pj_by_component", by_component}};
  if (!pb.precision_stated) j["conditions"]["precision_assumption"] = pb.precision_assumption;
  if (p.tops_per_mm2_error) j["tops_per_mm2_error"] = *p.tops_per_mm2_error;
  return j;
}

}  // namespace kvcim::mapper
