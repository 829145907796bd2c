// Area, floorplan, wires, leakage, clock and control (see chip.hpp).
#include "kvcim/mapper/chip.hpp"

#include <cmath>

#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/cmodel/energy/workload.hpp"

namespace kvcim::mapper {

namespace energy = cmodel::energy;
using energy::EventKind;
using energy::Op;

namespace {
constexpr double kUm2PerMm2 = 1e6;

int64_t adcs_per_macro(const HardwareSpec& hw) {
  if (hw.macro.kind != cmodel::cim::MacroKind::analog) return 0;
  return (hw.macro.cols + hw.macro.adc_share - 1) / hw.macro.adc_share;
}

double macro_um2(const HardwareSpec& hw, const energy::Areas& a) {
  return static_cast<double>(hw.macro_cells()) * hw.macro.cell_bits * a.bit_cell_um2 +
         static_cast<double>(adcs_per_macro(hw)) * a.adc_um2;
}
}  // namespace

ChipArea cim_area(const HardwareSpec& hw) {
  const energy::Areas a = hw.tech.areas(hw.comparison), base = hw.baseline_tech.areas(hw.comparison);
  ChipArea c;
  const double macros = static_cast<double>(hw.organization.macros);
  c.macros_mm2 = macros * static_cast<double>(hw.macro_cells()) * hw.macro.cell_bits * a.bit_cell_um2 / kUm2PerMm2;
  c.adcs_mm2 = macros * static_cast<double>(adcs_per_macro(hw)) * a.adc_um2 / kUm2PerMm2;
  c.buffer_mm2 = static_cast<double>(hw.buffer_bytes) * 8 * base.bit_cell_um2 / kUm2PerMm2;
  c.lanes_mm2 = static_cast<double>(hw.digital_units) * a.lane_um2 / kUm2PerMm2;
  return c;
}

ChipArea baseline_area(const HardwareSpec& hw) {
  const energy::Areas b = hw.baseline_tech.areas(hw.comparison);
  ChipArea c;
  c.sram_mm2 = static_cast<double>(hw.baseline.sram_bytes) * 8 * b.bit_cell_um2 / kUm2PerMm2;
  c.buffer_mm2 = static_cast<double>(hw.buffer_bytes) * 8 * b.bit_cell_um2 / kUm2PerMm2;
  c.lanes_mm2 = static_cast<double>(hw.baseline.mac_units) * b.lane_um2 / kUm2PerMm2;
  return c;
}

Floorplan floorplan(const HardwareSpec& hw) {
  const energy::Areas a = hw.tech.areas(hw.comparison), b = hw.baseline_tech.areas(hw.comparison);
  Floorplan f;
  f.macro_pitch_um = std::sqrt(macro_um2(hw, a));
  f.edge_um = f.macro_pitch_um * std::sqrt(static_cast<double>(hw.organization.macros)) / 2;
  f.sram_edge_um = std::sqrt(static_cast<double>(hw.baseline.sram_bytes) * 8 * b.bit_cell_um2) / 2;
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
  const double kv_bits = 2.0 * c.kv_dim() * hw.precision.kv_bits;
  const double q_bits = static_cast<double>(c.n_heads) * c.head_dim() * hw.precision.activation_bits;
  const double out_bits = static_cast<double>(c.n_heads) * c.head_dim() * energy::kAccumulatorBits *
                          static_cast<double>(tiles_per_query);
  return std::llround((kv_bits + q_bits + out_bits) * f.edge_um);
}

int64_t digital_lane_cycles(const energy::Ledger& l) {
  int64_t ops = 0;
  for (EventKind k : {EventKind::int8_mac, EventKind::fp16_mac, EventKind::int32_add,
                      EventKind::fp32_add, EventKind::fp32_mul})
    ops += l.count(k);
  return ops + 4 * l.count(EventKind::exp_op);
}

void charge_static_and_control(energy::Ledger& l, int64_t lane_cycles, double kib, int64_t lanes,
                               double latency_ns) {
  l.add(energy::kModelLevel, Op::chip, EventKind::lane_cycle, lane_cycles);
  l.add(energy::kModelLevel, Op::chip, EventKind::leak_kib_ns, std::llround(kib * latency_ns));
  l.add(energy::kModelLevel, Op::chip, EventKind::leak_lane_ns,
        std::llround(static_cast<double>(lanes) * latency_ns));
}

double cim_kib(const HardwareSpec& hw) {
  return (static_cast<double>(hw.organization.macros) * static_cast<double>(hw.macro_cells()) *
              hw.macro.cell_bits / 8 + static_cast<double>(hw.buffer_bytes)) / 1024;
}

double baseline_kib(const HardwareSpec& hw) {
  return static_cast<double>(hw.baseline.sram_bytes + hw.buffer_bytes) / 1024;
}

energy::Ledger conventional_ledger(const ModelShape& shape, const HardwareSpec& hw, int64_t position) {
  energy::Ledger l = energy::baseline_ledger(shape.config, position, hw.baseline);
  const Floorplan f = floorplan(hw);
  for (int layer = energy::kModelLevel; layer < l.n_layers(); ++layer)
    for (Op op : energy::all_ops())
      if (const int64_t bits = l.count(layer, op, EventKind::sram_bit))
        l.add(layer, op, EventKind::wire_bit_um, std::llround(static_cast<double>(bits) * f.sram_edge_um));
  const energy::Costs bc = hw.baseline_costs();
  const double latency = energy::baseline_latency(l, bc, hw.baseline).bound_ns();
  charge_static_and_control(l, digital_lane_cycles(l), baseline_kib(hw), hw.baseline.mac_units, latency);
  return l;
}

}  // namespace kvcim::mapper
