#include "kvcim/cmodel/macro_model/event_prices.hpp"

#include <algorithm>
#include <cmath>

#include "kvcim/error.hpp"

namespace kvcim::cmodel::macro_model {

EventPrices event_prices(const MacroDesc& described, const cim::MacroSpec& chip, const energy::NodePoint& at,
                         const Constants& k, const std::string& where) {
  const bool digital = described.readout_kind() == Readout::adder_tree;
  if (digital != (chip.kind == cim::MacroKind::digital))
    fail(where, "macro.describes", digital ? "a digital macro" : "an analog macro",
         std::string("a ") + (chip.kind == cim::MacroKind::digital ? "digital" : "analog") +
             " macro, as macro.kind says");
  // The described macro's conversion rate, from its own operation at its own operating point.
  const double fs_hz = evaluate(described, k).conversion_rate_mhz * 1e6;
  // The described circuit carried to the comparison point: logic by Stillmaker & Baas (refused
  // outside its range), switched capacitance by the cells' linear size (cell_scale) and as V^2, the array supply in
  // its published ratio to the logic supply.
  MacroDesc d = described;
  d.node_nm = at.node_nm;
  d.array_vdd_v = described.array_vdd_v * at.voltage_v / described.vdd_v;
  d.vdd_v = at.voltage_v;
  check_logic_supply(d.node_nm, d.vdd_v, where + ": macro.describes at the comparison point");
  const double s = cell_scale(d), va2 = d.array_vdd_v * d.array_vdd_v;
  const double e_fa = k.e_fa_fj * logic_factor(d.node_nm, d.vdd_v) * 1e-3;  // pJ
  const double a_in = d.input_density;
  const double bits_pc = chip.input_bits_per_cycle;
  EventPrices p;
  // a row's input line across the chip's columns: a wordline, or a time-domain cell's delay-stage
  // input (c_in_time), as evaluate() prices the described macro's wordlines
  const double c_line = d.cell_kind() == Cell::time_delay ? k.c_in_time_ff : k.c_wl_ff;
  p.row_activation_pj = a_in * chip.cols * c_line * s * va2 * 1e-3;
  if (d.encoding() == Encoding::voltage_dac || d.encoding() == Encoding::c2c) p.row_activation_pj += k.k_dac_ff * va2 * 1e-3;
  if (d.encoding() == Encoding::pulse_width) p.row_activation_pj += bits_pc * e_fa;
  const double tree_bits = chip.cell_bits + bits_pc - 1;
  if (digital) {
    p.column_read_pj = chip.rows_per_cycle * k.r_and * a_in * e_fa;
    const double n = std::max(2, chip.rows_per_cycle);
    p.adder_op_pj = adder_tree_fa_bits(n, tree_bits) / (n - 1) * a_in * e_fa;
  } else {
    const double activity = a_in * (d.cell_kind() == Cell::reram ? d.weight_density : 1.0);
    const double c_cell = d.cell_kind() == Cell::sram ? k.c_cell_sram_ff
                          : d.cell_kind() == Cell::reram ? k.c_cell_reram_ff
                                                         : k.c_cell_time_ff;
    p.column_read_pj = chip.rows_per_cycle * activity * c_cell * s * va2 * 1e-3;
    p.adc_conversion_pj = converter_pj(d, chip.adc_bits, fs_hz, k);
    // partial sums of row groups: additions of converter codes
    p.adder_op_pj = (chip.adc_bits + 1) * 0.5 * e_fa;
  }
  const double acc_bits = chip.weight_bits + chip.input_bits + std::ceil(std::log2(std::max(2, chip.rows)));
  p.shift_add_op_pj = acc_bits * (1 + k.r_dff) * 0.5 * e_fa;
  return p;
}

}  // namespace kvcim::cmodel::macro_model
