// A decode step of a batch (see batch.hpp).
#include "kvcim/mapper/batch.hpp"

#include <algorithm>
#include <cmath>

#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/chip.hpp"

namespace kvcim::mapper {

namespace energy = cmodel::energy;
using energy::EventKind;
using energy::Op;

namespace {

bool is_matvec(Op op) {
  switch (op) {
    case Op::q_proj: case Op::k_proj: case Op::v_proj: case Op::o_proj:
    case Op::ffn_w1: case Op::ffn_w2: case Op::ffn_w3: case Op::classifier: return true;
    default: return false;
  }
}

// Leakage (pJ) of `kib` KiB of cells and `lanes` lanes over `ns`, priced as
// charge_static_and_control charges it.
double leakage_pj(const energy::Costs& c, double kib, int64_t lanes, double ns) {
  return static_cast<double>(std::llround(kib * ns) * c.energy(EventKind::leak_kib_ns) +
                             std::llround(static_cast<double>(lanes) * ns) * c.energy(EventKind::leak_lane_ns)) *
         1e-6;
}

void check_sequences(int64_t sequences) {
  if (sequences < 1) fail("batch", "sequences", std::to_string(sequences), "expected >= 1");
}

}  // namespace

energy::Ledger shared_part(const energy::Ledger& token, bool conventional) {
  energy::Ledger s(token.n_layers());
  const EventKind kinds[] = {EventKind::hbm_bit, EventKind::dram_bit, EventKind::sram_bit, EventKind::wire_bit_um};
  const int n_kinds = conventional ? 4 : 2;
  for (int layer = energy::kModelLevel; layer < token.n_layers(); ++layer)
    for (Op op : energy::all_ops())
      if (is_matvec(op))
        for (int i = 0; i < n_kinds; ++i)
          if (const int64_t n = token.count(layer, op, kinds[i])) s.add(layer, op, kinds[i], n);
  return s;
}

StepFigures conventional_step(const ModelShape& shape, const HardwareSpec& hw, int64_t context,
                              int64_t sequences) {
  check_sequences(sequences);
  const energy::Costs bc = hw.baseline_costs();
  const energy::Ledger token = conventional_dynamic_ledger(shape, hw, context - 1, sequences);
  const energy::Ledger shared = shared_part(token, true);
  const double B = static_cast<double>(sequences);
  // the roofline is linear in the events: the shared part once, the rest B times
  const energy::LatencyBound all = energy::baseline_latency(token, bc, hw.baseline);
  const energy::LatencyBound sh = energy::baseline_latency(shared, bc, hw.baseline);
  energy::LatencyBound step = all;
  if (sequences > 1) {
    step.offchip_ns = sh.offchip_ns + B * (all.offchip_ns - sh.offchip_ns);
    step.onchip_ns = sh.onchip_ns + B * (all.onchip_ns - sh.onchip_ns);
    step.compute_ns = sh.compute_ns + B * (all.compute_ns - sh.compute_ns);
  }
  StepFigures s;
  s.sequences = sequences;
  s.step_ns = step.bound_ns();
  s.bound = baseline_bound(step);
  s.tokens_per_s = s.step_ns > 0 ? B / (s.step_ns * 1e-9) : 0;
  s.shared_pj = shared.cost(bc).energy_pj();
  const double leak_pj = leakage_pj(bc, baseline_kib(hw), hw.baseline.mac_units, s.step_ns);
  if (sequences == 1) {  // exactly the single token's ledger (conventional_ledger)
    s.energy_pj_per_token = static_cast<double>(token.energy_aj(bc)) * 1e-6 + leak_pj;
    return s;
  }
  const double per_sequence_pj = token.cost(bc).energy_pj() - s.shared_pj;
  s.energy_pj_per_token = (s.shared_pj + B * per_sequence_pj + leak_pj) / B;
  return s;
}

StepFigures cim_step(const TokenLedgers& t, const LatencyBound& lb, const HardwareSpec& hw,
                     const Policy& policy) {
  check_sequences(policy.sequences);
  const energy::Costs costs = hw.costs(), kvc = hw.kv_costs();
  const double B = static_cast<double>(policy.sequences);
  const double per_copy = std::ceil(B / std::max(1, policy.replicas));
  // time: the pipeline through the weight stages, the shared lanes, the one off-chip interface
  const double pipeline = lb.critical_path_ns() + (per_copy - 1) * lb.slowest_macro_stage_ns;
  const double lanes = B * lb.lanes_ns;
  const double bit_ns = lb.offchip_bits > 0 ? lb.offchip_ns / lb.offchip_bits : 0;
  const double offchip = (lb.offchip_weight_bits + B * (lb.offchip_bits - lb.offchip_weight_bits)) * bit_ns;
  StepFigures s;
  s.sequences = policy.sequences;
  s.step_ns = std::max({pipeline, lanes, offchip});
  if (offchip >= std::max(pipeline, lanes)) {
    s.bound = Bound::offchip_bytes;
  } else if (lanes > pipeline) {
    s.bound = Bound::compute;
  } else {  // the pipeline: macro cycles or the lanes' part of the critical path
    const double macro = lb.macro_ns + (per_copy - 1) * lb.slowest_macro_stage_ns;
    s.bound = 2 * macro >= pipeline ? Bound::onchip_cycles : Bound::compute;
  }
  s.tokens_per_s = s.step_ns > 0 ? B / (s.step_ns * 1e-9) : 0;
  // energy: the token's, its leakage over the step instead of over the token, the shared part once
  const double token_pj = static_cast<double>(t.cim.energy_aj(costs, &kvc) + t.periphery.energy_aj(costs, &kvc)) * 1e-6;
  s.shared_pj = shared_part(t.periphery, false).cost(costs).energy_pj();
  if (policy.sequences == 1) {  // exactly the single token's ledgers
    s.energy_pj_per_token = token_pj;
    return s;
  }
  const double token_leak = leakage_pj(costs, cim_kib(hw), hw.digital_units, lb.total_ns());
  const double step_pj = s.shared_pj + B * (token_pj - token_leak - s.shared_pj) +
                         leakage_pj(costs, cim_kib(hw), hw.digital_units, s.step_ns);
  s.energy_pj_per_token = step_pj / B;
  return s;
}

}  // namespace kvcim::mapper
