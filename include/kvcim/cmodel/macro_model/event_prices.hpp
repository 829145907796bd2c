// The pricing interface between the bit-accurate macro (cmodel/cim: it counts events,
// cim::MacroEvents) and the component model of a published macro (macro_components.hpp): a chip
// whose macros are described by a paper (a hardware spec's `macro.describes`) pays for each event
// what the component model says one such event costs, instead of its technology table's value.
//
// The described macro gives the circuit: its cell, input encoding, converter kind, the data
// densities and conversion rate of its measurement; the chip's macro spec gives the geometry the
// simulation counts events at (rows summed per read, columns, ADC bits, bits per input cycle,
// weight and input bits); `at` is the node and supply every cost of the chip is carried to.
//
//   row activation   input density x cols x c_wl x s x Va^2 (+ k_dac x Va^2 with a DAC,
//                    + bits per cycle x e_fa for a pulse-width counter)
//   column read      rows per read x activity x c_cell x s x Va^2 (analog); rows per read x
//                    r_and x input density x e_fa (digital: the 1-bit products)
//   ADC conversion   max(k(kind) x 2^adc_bits x V^2, the survey front at the described rate)
//   adder op         a tree addition's mean full-adder bits x input density x e_fa
//   shift-add op     accumulator bits x (1 + r_dff) x 0.5 x e_fa
#pragma once
#include <string>

#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/cmodel/energy/scaling.hpp"
#include "kvcim/cmodel/macro_model/macro_components.hpp"

namespace kvcim::cmodel::macro_model {

struct EventPrices {
  double row_activation_pj = 0, column_read_pj = 0, adc_conversion_pj = 0, adder_op_pj = 0, shift_add_op_pj = 0;
};

// kvcim::Error naming `where` when the chip and the described macro disagree (an analog chip of a
// digital macro or the reverse) or `at` is outside the logic range of its node.
EventPrices event_prices(const MacroDesc& described, const cim::MacroSpec& chip, const energy::NodePoint& at,
                         const Constants& k, const std::string& where);

}  // namespace kvcim::cmodel::macro_model
