// The vocabulary of the energy model: what happened (EventKind), which part of the chip it
// belongs to (Component) and which operation of the decoder caused it (Op).
//
// Each event kind belongs to exactly one component, so a ledger only needs (layer, op, kind) and
// the breakdown by component is derived; nobody can charge an ADC conversion to the DAC.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "kvcim/cmodel/cim/macro.hpp"

namespace kvcim::cmodel::energy {

enum class EventKind : int {
  // CIM macro events: the fields of cim::MacroEvents, one to one.
  row_activation,  // wordline/DAC drive of one row for one input cycle
  column_read,     // bitline read of one column for one input cycle and row group
  adc_conversion,  // analog CIM: one conversion
  adder_op,        // adder-tree / partial-sum addition inside a macro
  shift_add_op,    // shift-and-add step recombining slices and input bits
  cell_write,      // one bit written into a cell (weights at load, K and V every token)
  macro_cycle,     // one macro clock cycle (carries the macro's cycle time)
  // Memory traffic, per bit moved.
  buffer_bit,  // small on-chip buffer (activations, scores, probabilities)
  sram_bit,    // SRAM bank holding weights or KV (conventional engine), priced by bank size
  dram_bit,    // off-chip DRAM (DDR/LPDDR)
  hbm_bit,     // off-chip HBM
  wire_bit_um,  // one bit carried one micrometre over an on-chip wire
  // Digital units.
  int8_mac,
  fp16_mac,
  int32_add,
  int32_mul,
  fp32_add,
  fp32_mul,
  exp_op,  // one exponent (softmax, SiLU)
  // Static and control energy, charged per unit of time of a token (Op::chip).
  lane_cycle,   // one digital lane (or MAC unit) clocked and sequenced for one cycle
  leak_kib_ns,  // one KiB of memory cells (macro or SRAM bank) leaking for one nanosecond
  leak_lane_ns,  // one digital lane (or MAC unit) leaking for one nanosecond
  // Between dies of a multi-die chip (mapper/dies.hpp): one bit across one die-to-die link, priced
  // by the hardware spec's `link` section (a technology table may leave it out).
  die_link_bit,
  // One die-to-die link powered but carrying nothing for one nanosecond (its idle power, spec
  // `link.idle_power_mw`), charged like leakage under --idle leaking.
  link_idle_ns,
};
inline constexpr int kEventKinds = static_cast<int>(EventKind::link_idle_ns) + 1;

enum class Component : int {
  array, adc, dac, cell_write, buffer, weight_sram, kv_sram, offchip, interconnect, digital,
  control, leakage,
};
inline constexpr int kComponents = static_cast<int>(Component::leakage) + 1;

// Operations of one decoder step. `other` covers RMSNorm, RoPE, SwiGLU's elementwise part,
// residual adds and the embedding lookup; `chip` what the whole chip pays for the time a token
// takes (leakage, clock and control), caused by no single operation.
enum class Op : int {
  q_proj, k_proj, v_proj, o_proj, ffn_w1, ffn_w2, ffn_w3, classifier,
  attn_scores, softmax, attn_weighted_sum, kv_write, other, chip,
};
inline constexpr int kOps = static_cast<int>(Op::chip) + 1;

// The component an event of `kind` belongs to. An SRAM bank read is the weights' or the KV
// cache's by what it carried: component_of(kind, op) says which; component_of(kind) gives
// weight_sram for it.
Component component_of(EventKind kind);
Component component_of(EventKind kind, Op op);
// attn_scores, softmax, attn_weighted_sum, kv_write: the work of the KV tiles.
bool is_attention_op(Op op);
std::string_view name(EventKind kind);
std::string_view name(Component component);
std::string_view name(Op op);

// All values of each enum, in order (for loops and for parsers).
const std::array<EventKind, kEventKinds>& all_event_kinds();
const std::array<Component, kComponents>& all_components();
const std::array<Op, kOps>& all_ops();

// Name -> value. Throw kvcim::Error naming `where` and suggesting the closest name.
EventKind parse_event_kind(const std::string& where, const std::string& text);
Op parse_op(const std::string& where, const std::string& text);

// The event kind of each field of cim::MacroEvents, in its table's order (one to one: the enum's
// first seven kinds are the macro's events, in the same order; tested by name).
inline constexpr int kMacroEventKinds = field_count<cim::MacroEvents>();
static_assert(static_cast<int>(EventKind::macro_cycle) + 1 == kMacroEventKinds,
              "the macro's event kinds lead EventKind, one per field of MacroEvents");
// The macro's counts in that order: count i is of EventKind i.
std::array<int64_t, kMacroEventKinds> macro_event_counts(const cim::MacroEvents& e);

}  // namespace kvcim::cmodel::energy
