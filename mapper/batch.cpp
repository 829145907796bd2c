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

void check_sequences(int64_t sequences) {
  if (sequences < 1) fail("batch", "sequences", std::to_string(sequences), "expected >= 1");
}

bool is_leakage(EventKind k) {
  return k == EventKind::leak_kib_ns || k == EventKind::leak_lane_ns || k == EventKind::link_idle_ns;
}

// shared + sequences x (token - shared), leaving out the token's leakage (charged per step)
energy::Ledger step_events(const energy::Ledger& token, const energy::Ledger& shared, int64_t sequences) {
  energy::Ledger rest(token.n_layers());
  for (int layer = energy::kModelLevel; layer < token.n_layers(); ++layer)
    for (Op op : energy::all_ops())
      for (EventKind k : energy::all_event_kinds())
        if (!is_leakage(k))
          if (const int64_t n = token.count(layer, op, k) - shared.count(layer, op, k)) rest.add(layer, op, k, n);
  rest *= sequences;
  rest += shared;
  return rest;
}

// The step time of `sequences` sequences on the conventional engine: its roofline over the
// step's events (linear in them: the shared part once, the rest B times).
double conventional_step_ns(const energy::Ledger& token, const energy::Ledger& shared, const HardwareSpec& hw,
                            int64_t sequences, Bound* bound) {
  const energy::Costs bc = hw.baseline_costs();
  const energy::LatencyBound all = energy::baseline_latency(token, bc, hw.baseline);
  const energy::LatencyBound sh = energy::baseline_latency(shared, bc, hw.baseline);
  const double B = static_cast<double>(sequences);
  energy::LatencyBound step = all;
  if (sequences > 1) {
    step.offchip_ns = sh.offchip_ns + B * (all.offchip_ns - sh.offchip_ns);
    step.onchip_ns = sh.onchip_ns + B * (all.onchip_ns - sh.onchip_ns);
    step.compute_ns = sh.compute_ns + B * (all.compute_ns - sh.compute_ns);
  }
  if (bound) *bound = baseline_bound(step);
  return step.bound_ns();
}

// The CIM step's time (see batch.hpp) and what bounds it.
double cim_step_ns(const LatencyBound& lb, const Policy& policy, int64_t sequences, Bound* bound) {
  const double B = static_cast<double>(sequences);
  const double per_copy = std::ceil(B / std::max(1, policy.replicas));
  // time: the pipeline through the weight stages, the shared lanes, the one off-chip interface
  const double pipeline = lb.critical_path_ns() + (per_copy - 1) * lb.slowest_macro_stage_ns;
  const double lanes = B * lb.lanes_ns;
  const double bit_ns = lb.offchip_bits > 0 ? lb.offchip_ns / lb.offchip_bits : 0;
  const double offchip = (lb.offchip_weight_bits + B * (lb.offchip_bits - lb.offchip_weight_bits)) * bit_ns;
  if (bound) {
    if (offchip >= std::max(pipeline, lanes)) {
      *bound = Bound::offchip_bytes;
    } else if (lanes > pipeline) {
      *bound = Bound::compute;
    } else {  // the pipeline: macro cycles or the lanes' part of the critical path
      const double macro = lb.macro_ns + (per_copy - 1) * lb.slowest_macro_stage_ns;
      *bound = 2 * macro >= pipeline ? Bound::onchip_cycles : Bound::compute;
    }
  }
  return std::max({pipeline, lanes, offchip});
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

namespace {

// The conventional engine's step: its events (leakage over its time), the shared part, its time
// and what bounds it.
struct ConventionalStep {
  energy::Ledger events, shared;
  double ns = 0;
  Bound bound = Bound::compute;
};

ConventionalStep conventional_step_of(const ModelShape& shape, const HardwareSpec& hw, int64_t context,
                                      int64_t sequences) {
  check_sequences(sequences);
  const energy::Ledger token = conventional_dynamic_ledger(shape, hw, context - 1, sequences);
  ConventionalStep s;
  s.shared = shared_part(token, true);
  s.ns = conventional_step_ns(token, s.shared, hw, sequences, &s.bound);
  s.events = step_events(token, s.shared, sequences);
  charge_static_and_control(s.events, 0, baseline_kib(hw, baseline_data_bytes(shape.config, hw, context, sequences)),
                            hw.baseline.mac_units, s.ns);
  return s;
}

}  // namespace

energy::Ledger conventional_step_ledger(const ModelShape& shape, const HardwareSpec& hw, int64_t context,
                                        int64_t sequences) {
  return conventional_step_of(shape, hw, context, sequences).events;
}

StepFigures conventional_step(const ModelShape& shape, const HardwareSpec& hw, int64_t context,
                              int64_t sequences) {
  const ConventionalStep c = conventional_step_of(shape, hw, context, sequences);
  const energy::Costs bc = hw.baseline_costs();
  StepFigures s;
  s.sequences = sequences;
  s.step_ns = c.ns;
  s.bound = c.bound;
  s.tokens_per_s = s.step_ns > 0 ? static_cast<double>(sequences) / (s.step_ns * 1e-9) : 0;
  s.shared_pj = c.shared.cost(bc).energy_pj();
  s.energy_pj_per_token = static_cast<double>(c.events.energy_aj(bc)) * 1e-6 / static_cast<double>(sequences);
  return s;
}

energy::Ledger cim_step_periphery(const TokenLedgers& t, const LatencyBound& lb, const HardwareSpec& hw,
                                  const Policy& policy, int64_t sequences) {
  check_sequences(sequences);
  if (sequences == 1) return t.periphery;  // exactly the single token's
  energy::Ledger step = step_events(t.periphery, shared_part(t.periphery, false), sequences);
  charge_static_and_control(step, 0, cim_kib(hw), hw.digital.units, cim_step_ns(lb, policy, sequences, nullptr),
                            t.leaking_links);
  return step;
}

StepFigures cim_step(const TokenLedgers& t, const LatencyBound& lb, const HardwareSpec& hw,
                     const Policy& policy) {
  check_sequences(policy.sequences);
  const energy::Costs costs = hw.costs(), kvc = hw.kv_costs();
  const int64_t B = policy.sequences;
  StepFigures s;
  s.sequences = B;
  s.step_ns = cim_step_ns(lb, policy, B, &s.bound);
  s.tokens_per_s = s.step_ns > 0 ? static_cast<double>(B) / (s.step_ns * 1e-9) : 0;
  s.shared_pj = shared_part(t.periphery, false).cost(costs).energy_pj();
  // energy: the token's macros per sequence, the periphery of the step (shared part once,
  // leakage over the step instead of over the token)
  energy::Ledger macros = t.cim;
  macros *= B;
  const energy::Ledger periphery = cim_step_periphery(t, lb, hw, policy, B);
  s.energy_pj_per_token = static_cast<double>(macros.energy_aj(costs, &kvc) + periphery.energy_aj(costs, &kvc)) *
                          1e-6 / static_cast<double>(B);
  return s;
}

}  // namespace kvcim::mapper
