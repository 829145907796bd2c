// Area, floorplan, wires, leakage, clock and control (see chip.hpp).
#include "kvcim/mapper/chip.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/cmodel/energy/sram_nodes.hpp"
#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/error.hpp"

namespace kvcim::mapper {

namespace energy = cmodel::energy;
using energy::EventKind;
using energy::Op;

namespace {
constexpr double kUm2PerMm2 = 1e6;

int64_t adcs_per_macro(const HardwareSpec& hw) {
  return hw.macro.adc_count();
}

double macro_um2(const HardwareSpec& hw, const energy::Areas& a) {
  return static_cast<double>(hw.macro_cells()) * hw.macro.cell_bits * a.bit_cell_um2 +
         static_cast<double>(adcs_per_macro(hw)) * a.adc_um2;
}
}  // namespace

double tile_logic_nand2(const KvSpec& kv) {
  return kTileLogicFixedNand2 + kTileLogicPerTokenBitNand2 * kv.tokens_per_tile * kv.prob_bits;
}

ChipArea cim_area(const HardwareSpec& hw, int64_t kv_tiles) {
  const energy::Areas a = hw.tech.areas(hw.comparison), base = hw.baseline_tech.areas(hw.comparison);
  ChipArea c;
  const double macros = static_cast<double>(hw.organization.macros);
  c.macros_mm2 = macros * static_cast<double>(hw.macro_cells()) * hw.macro.cell_bits * a.bit_cell_um2 / kUm2PerMm2;
  c.adcs_mm2 = macros * static_cast<double>(adcs_per_macro(hw)) * a.adc_um2 / kUm2PerMm2;
  c.buffer_mm2 = static_cast<double>(hw.buffer.bytes) * 8 * base.bit_cell_um2 / kUm2PerMm2;
  c.lanes_mm2 = static_cast<double>(hw.digital.units) * a.lane_um2 / kUm2PerMm2;
  c.tile_logic_mm2 = static_cast<double>(std::max<int64_t>(kv_tiles, 0)) * tile_logic_nand2(hw.kv) *
                     hw.kv_tech.areas(hw.comparison).nand2_um2 / kUm2PerMm2;
  return c;
}

ChipArea baseline_area(const HardwareSpec& hw) {
  const energy::Areas b = hw.baseline_tech.areas(hw.comparison);
  ChipArea c;
  c.sram_mm2 = static_cast<double>(hw.baseline.sram_bytes) * 8 * b.bit_cell_um2 / kUm2PerMm2;
  c.buffer_mm2 = static_cast<double>(hw.buffer.bytes) * 8 * b.bit_cell_um2 / kUm2PerMm2;
  c.lanes_mm2 = static_cast<double>(hw.baseline.mac_units) * b.lane_um2 / kUm2PerMm2;
  return c;
}

Floorplan floorplan(const HardwareSpec& hw, int64_t occupied_macros, int64_t occupied_sram_bytes) {
  const energy::Areas a = hw.tech.areas(hw.comparison), b = hw.baseline_tech.areas(hw.comparison);
  const int64_t macros = std::clamp<int64_t>(occupied_macros, 1, hw.organization.macros);
  const int64_t sram = std::clamp<int64_t>(occupied_sram_bytes, 0, hw.baseline.sram_bytes);
  Floorplan f;
  f.macro_pitch_um = std::sqrt(macro_um2(hw, a));
  f.edge_um = f.macro_pitch_um * std::sqrt(static_cast<double>(macros)) / 2;
  f.sram_edge_um = std::sqrt(static_cast<double>(sram) * 8 * b.bit_cell_um2) / 2;
  return f;
}

int64_t matvec_wire_bit_um(const MatrixPlacement& m, const HardwareSpec& hw, const Floorplan& f) {
  if (m.onchip_blocks <= 0) return 0;
  const double in_bits = static_cast<double>(m.n_in) * hw.precision.activation_bits;
  const double in_um = f.edge_um + (m.col_tiles - 1) * f.macro_pitch_um;
  const double psum_bits = static_cast<double>(m.n_out) * m.row_tiles * energy::kAccumulatorBits;
  const double psum_um = f.edge_um + (m.row_tiles - 1) * f.macro_pitch_um / 2;
  const double onchip = static_cast<double>(m.onchip_blocks) / static_cast<double>(m.blocks());
  return std::llround((in_bits * in_um + psum_bits * psum_um) * onchip);
}

int64_t attention_wire_bit_um(const cmodel::Config& c, const HardwareSpec& hw, const Floorplan& f,
                              int64_t tiles_per_query) {
  const double kv_bits = double(c.kv_dim()) * (hw.kv.k_bits + hw.kv.v_bits);
  const double q_bits = static_cast<double>(c.n_heads) * c.head_dim() * hw.precision.activation_bits;
  const double out_bits = static_cast<double>(c.n_heads) * c.head_dim() * energy::kAccumulatorBits *
                          static_cast<double>(tiles_per_query);
  return std::llround((kv_bits + q_bits + out_bits) * f.edge_um);
}

int64_t digital_lane_cycles(const energy::Ledger& l) {
  int64_t ops = 0;
  for (EventKind k : {EventKind::int8_mac, EventKind::fp16_mac, EventKind::int32_add,
                      EventKind::int32_mul, EventKind::fp32_add, EventKind::fp32_mul})
    ops += l.count(k);
  return ops + 4 * l.count(EventKind::exp_op);
}

void charge_static_and_control(energy::Ledger& l, int64_t lane_cycles, double kib, int64_t lanes,
                               double latency_ns, int64_t links) {
  if (links > 0)
    l.add(energy::kModelLevel, Op::chip, EventKind::link_idle_ns,
          std::llround(static_cast<double>(links) * latency_ns));
  l.add(energy::kModelLevel, Op::chip, EventKind::lane_cycle, lane_cycles);
  l.add(energy::kModelLevel, Op::chip, EventKind::leak_kib_ns, std::llround(kib * latency_ns));
  l.add(energy::kModelLevel, Op::chip, EventKind::leak_lane_ns,
        std::llround(static_cast<double>(lanes) * latency_ns));
}

int64_t leaking_links(const HardwareSpec& hw, size_t dies) {
  return hw.idle_leaks && dies > 1 ? static_cast<int64_t>(dies) - 1 : 0;
}

double cim_kib(const HardwareSpec& hw) {
  const int64_t leaking = hw.organization.macros - (hw.idle_leaks ? 0 : std::min(hw.idle_macros, hw.organization.macros));
  return (static_cast<double>(leaking) * static_cast<double>(hw.macro_cells()) * hw.macro.cell_bits / 8 +
          static_cast<double>(hw.buffer.bytes)) / 1024;
}

int64_t baseline_data_bytes(const cmodel::Config& c, const HardwareSpec& hw, int64_t context, int64_t sequences) {
  return (energy::weight_elements(c) + 2 * context * int64_t{c.kv_dim()} * c.n_layers * sequences) *
         hw.baseline.storage_bits() / 8;
}

double baseline_kib(const HardwareSpec& hw, int64_t data_bytes) {
  const int64_t sram = hw.idle_leaks ? hw.baseline.sram_bytes : std::min(hw.baseline.sram_bytes, data_bytes);
  return static_cast<double>(sram + hw.buffer.bytes) / 1024;
}

energy::Ledger conventional_dynamic_ledger(const ModelShape& shape, const HardwareSpec& hw,
                                          int64_t position, int64_t sequences) {
  energy::Ledger l = energy::baseline_ledger(shape.config, position, hw.baseline, sequences);
  // the SRAM holds the weights and the KV cache of the context (as far as they fit)
  const cmodel::Config& c = shape.config;
  const int64_t data = baseline_data_bytes(c, hw, position + 1, sequences);
  const Floorplan f = floorplan(hw, 0, data);
  for (int layer = energy::kModelLevel; layer < l.n_layers(); ++layer)
    for (Op op : energy::all_ops())
      if (const int64_t bits = l.count(layer, op, EventKind::sram_bit))
        l.add(layer, op, EventKind::wire_bit_um, std::llround(static_cast<double>(bits) * f.sram_edge_um));
  l.add(energy::kModelLevel, Op::chip, EventKind::lane_cycle, digital_lane_cycles(l));
  return l;
}

energy::Ledger conventional_ledger(const ModelShape& shape, const HardwareSpec& hw, int64_t position) {
  energy::Ledger l = conventional_dynamic_ledger(shape, hw, position, 1);
  const double latency = energy::baseline_latency(l, hw.baseline_costs(), hw.baseline).bound_ns();
  charge_static_and_control(l, 0, baseline_kib(hw, baseline_data_bytes(shape.config, hw, position + 1, 1)),
                            hw.baseline.mac_units, latency);
  return l;
}

HardwareSpec iso_area_baseline(const HardwareSpec& hw, int64_t kv_tiles) {
  HardwareSpec iso = hw;
  const ChipArea cim = cim_area(hw, kv_tiles);
  iso.baseline.sram_bytes = 0;
  const double rest_mm2 = baseline_area(iso).total_mm2();
  const double bit_mm2 = hw.baseline_tech.areas(hw.comparison).bit_cell_um2 / kUm2PerMm2;
  const double bytes = std::max(0.0, (cim.total_mm2() - rest_mm2) / (8 * bit_mm2));
  iso.baseline.sram_bytes = static_cast<int64_t>(std::floor(bytes));
  return iso;
}

namespace {

TableConditions table_conditions(const char* role, const energy::TechTable& t, const energy::NodePoint& to) {
  TableConditions c{role, t.name, {}};
  for (const auto& [file, node] : t.sources())
    c.sources.push_back({file, node, energy::energy_factor(node, to), energy::delay_factor(node, to),
                         energy::area_factor(node.node_nm, to.node_nm)});
  return c;
}

std::string num(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string bytes_text(double b) {
  if (b >= 1 << 30) return num("%.3g GiB", b / (1 << 30));
  if (b >= 1 << 20) return num("%.3g MiB", b / (1 << 20));
  if (b >= 1 << 10) return num("%.3g KiB", b / (1 << 10));
  return num("%.0f B", b);
}

// What an SRAM access costs at the comparison node and where that figure comes from.
std::string sram_access_line(const HardwareSpec& hw) {
  const auto& table = energy::sram_nodes();
  const double read = energy::sram_access_pj_per_bit(table, hw.comparison, false);
  const double write = energy::sram_access_pj_per_bit(table, hw.comparison, true);
  std::string from = "interpolated in log-log between the table's nodes";
  for (const auto& n : table)
    if (n.node_nm == hw.comparison.node_nm) from = n.read_provenance;
  std::ostringstream o;
  o << "  SRAM accesses (banks, buffers, digital CIM cells): " << num("read %.3g", read) << num(", write %.3g", write)
    << " pJ/bit of an 8 KiB bank at " << num("%g nm", hw.comparison.node_nm) << num(" %.2f V", hw.comparison.voltage_v)
    << " (configs/memory/sram_nodes.yaml; " << from << ")";
  const auto& bank = hw.baseline_tech.event(energy::EventKind::sram_bit).energy_pj_by_bank_bytes;
  if (bank.size() >= 2)
    o << "; a bank of other size x (bytes / 8 KiB)^" << num("%.3g", energy::fit_bank_curve(bank).b)
      << " (the 45 nm [H5] curve, assumed the same at every node)";
  return o.str();
}

}  // namespace

EnergyConditions energy_conditions(const HardwareSpec& hw, int64_t kv_tiles) {
  EnergyConditions c;
  c.at = hw.comparison;
  c.extrapolated = energy::is_extrapolated(c.at.node_nm);
  c.scaling = "Stillmaker & Baas 2017 (HP fits at 45 nm and below); SRAM accesses: published SRAM energies by "
              "node (configs/memory/sram_nodes.yaml); wires: supply squared only; off-chip memory: not scaled";
  c.sram_access = sram_access_line(hw);
  c.tables.push_back(table_conditions("cim", hw.tech, c.at));
  if (hw.kv_tech.path != hw.tech.path) c.tables.push_back(table_conditions("kv", hw.kv_tech, c.at));
  c.tables.push_back(table_conditions("baseline", hw.baseline_tech, c.at));
  c.baseline = hw.baseline;
  c.iso_area_sram_bytes = iso_area_baseline(hw, kv_tiles).baseline.sram_bytes;
  c.included = {"macro arrays and converters", "cell writes", "buffers", "SRAM banks (weights, KV)",
                "off-chip memory", "on-chip interconnect", "digital units", "clock and control", "leakage"};
  const ChipArea cim = cim_area(hw, kv_tiles);
  c.area_cim_mm2 = cim.total_mm2();
  c.kv_tiles = std::max<int64_t>(kv_tiles, 0);
  c.tile_logic_nand2 = tile_logic_nand2(hw.kv);
  c.area_tile_logic_mm2 = cim.tile_logic_mm2;
  c.area_baseline_mm2 = baseline_area(hw).total_mm2();
  std::ostringstream idle;
  idle << "  idle silicon, one rule on both sides: "
       << (hw.idle_leaks ? "leaking (every built macro and all conventional SRAM leak, data or not; every die-to-die "
                           "link draws its idle power over the step, "
                         : "gated (CIM macros holding no data and conventional SRAM beyond the weights and KV "
                           "it holds leak nothing; die-to-die links sleep between crossings, ")
       << num("%.4g mW", hw.link.idle_power_mw) << " a link when idle, an assumption)"
       << "; CIM macros holding no data: " << hw.idle_macros << " (--idle gated|leaking)";
  c.idle_rule = idle.str();
  return c;
}

nlohmann::json to_json(const EnergyConditions& c) {
  nlohmann::json tables = nlohmann::json::array();
  for (const TableConditions& t : c.tables) {
    nlohmann::json sources = nlohmann::json::array();
    for (const TableScaling& s : t.sources)
      sources.push_back({{"file", s.file},
                         {"node_nm", s.node.node_nm},
                         {"voltage_v", s.node.voltage_v},
                         {"energy_factor", s.energy_factor},
                         {"delay_factor", s.delay_factor},
                         {"area_factor", s.area_factor}});
    tables.push_back({{"role", t.role}, {"name", t.name}, {"sources", sources}});
  }
  return {{"node_nm", c.at.node_nm},
          {"voltage_v", c.at.voltage_v},
          {"extrapolated", c.extrapolated},
          {"scaling", c.scaling},
          {"tables", tables},
          {"baseline", {{"sram_bytes", c.baseline.sram_bytes},
                        {"sram_bank_bytes", c.baseline.sram_bank_bytes},
                        {"mac", c.baseline.mac == energy::MacType::int8 ? "int8" : "fp16"},
                        {"mac_units", c.baseline.mac_units},
                        {"iso_area_sram_bytes", c.iso_area_sram_bytes}}},
          {"included", c.included},
          {"idle_rule", c.idle_rule},
          {"sram_access", c.sram_access},
          {"area_mm2", {{"cim", c.area_cim_mm2}, {"baseline", c.area_baseline_mm2}}},
          {"tile_logic", {{"tiles", c.kv_tiles},
                          {"nand2_per_tile", c.tile_logic_nand2},
                          {"mm2", c.area_tile_logic_mm2},
                          {"source", "synthesised RTL (softmax unit and control), fit of "
                                     "testbench/synth; area at the KV table's nand2_um2"}}}};
}

EnergyConditions energy_conditions_from_json(const nlohmann::json& j) {
  try {
    EnergyConditions c;
    c.at = {j.at("node_nm").get<double>(), j.at("voltage_v").get<double>()};
    c.extrapolated = j.at("extrapolated").get<bool>();
    c.scaling = j.at("scaling").get<std::string>();
    for (const auto& t : j.at("tables")) {
      TableConditions tc{t.at("role").get<std::string>(), t.at("name").get<std::string>(), {}};
      for (const auto& s : t.at("sources"))
        tc.sources.push_back({s.at("file").get<std::string>(),
                              {s.at("node_nm").get<double>(), s.at("voltage_v").get<double>()},
                              s.at("energy_factor").get<double>(), s.at("delay_factor").get<double>(),
                              s.at("area_factor").get<double>()});
      c.tables.push_back(tc);
    }
    const auto& b = j.at("baseline");
    c.baseline.sram_bytes = b.at("sram_bytes").get<int64_t>();
    c.baseline.sram_bank_bytes = b.at("sram_bank_bytes").get<int64_t>();
    c.baseline.mac = b.at("mac").get<std::string>() == "fp16" ? energy::MacType::fp16 : energy::MacType::int8;
    c.baseline.mac_units = b.at("mac_units").get<int64_t>();
    c.iso_area_sram_bytes = b.at("iso_area_sram_bytes").get<int64_t>();
    c.included = j.at("included").get<std::vector<std::string>>();
    c.idle_rule = j.value("idle_rule", std::string());
    c.sram_access = j.value("sram_access", std::string());
    c.area_cim_mm2 = j.at("area_mm2").at("cim").get<double>();
    c.area_baseline_mm2 = j.at("area_mm2").at("baseline").get<double>();
    const auto& t = j.at("tile_logic");
    c.kv_tiles = t.at("tiles").get<int64_t>();
    c.tile_logic_nand2 = t.at("nand2_per_tile").get<double>();
    c.area_tile_logic_mm2 = t.at("mm2").get<double>();
    return c;
  } catch (const nlohmann::json::exception& e) {
    fail("report", "energy.conditions", "(as read)", e.what());
  }
}

std::vector<std::string> conditions_lines(const EnergyConditions& c) {
  // built with streams: gcc 12 warns falsely (-Wrestrict) on "literal" + std::string&&
  std::vector<std::string> out;
  std::ostringstream head;
  head << "both sides at " << num("%g nm", c.at.node_nm) << ", " << num("%.2f V", c.at.voltage_v);
  if (c.extrapolated) head << " (below 7 nm: scaling extrapolated, an assumption)";
  out.push_back(head.str());
  for (const TableConditions& t : c.tables) {
    std::ostringstream line;
    line << "  " << t.role << " " << t.name << ":";
    for (const TableScaling& s : t.sources)
      line << " " << std::filesystem::path(s.file).filename().string() << " " << num("%g nm", s.node.node_nm)
           << num(" %.2f V", s.node.voltage_v) << num(" (energy x%.3g)", s.energy_factor);
    out.push_back(line.str());
  }
  std::ostringstream conv;
  conv << "  conventional: " << (c.baseline.mac == energy::MacType::int8 ? "int8" : "fp16") << " MACs, "
       << bytes_text(static_cast<double>(c.baseline.sram_bytes)) << " SRAM in "
       << bytes_text(static_cast<double>(c.baseline.sram_bank_bytes)) << " banks";
  out.push_back(conv.str());
  if (!c.sram_access.empty()) out.push_back(c.sram_access);
  std::ostringstream inc;
  inc << "  included:";
  const char* sep = " ";
  for (const std::string& i : c.included) {
    inc << sep << i;
    sep = ", ";
  }
  out.push_back(inc.str());
  std::ostringstream area;
  area << "  chip area: CIM " << num("%.3g mm2", c.area_cim_mm2) << ", conventional "
       << num("%.3g mm2", c.area_baseline_mm2) << " (iso-area conventional: "
       << bytes_text(static_cast<double>(c.iso_area_sram_bytes)) << " SRAM)";
  out.push_back(area.str());
  std::ostringstream logic;
  logic << "  of the CIM area, attention tile logic " << num("%.3g mm2", c.area_tile_logic_mm2) << ": "
        << c.kv_tiles << " tiles x " << num("%.0f", c.tile_logic_nand2)
        << " NAND2-eq (softmax unit and control, synthesised RTL; its leakage not charged)";
  out.push_back(logic.str());
  out.push_back(c.idle_rule);
  return out;
}

}  // namespace kvcim::mapper
