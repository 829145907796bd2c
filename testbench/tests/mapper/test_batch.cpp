// A decode step of a batch (mapper/batch.hpp): one sequence is exactly the single token; weights
// are fetched once per step and every sequence pays its own KV cache; the step's time respects
// the one off-chip interface and the pipeline through the stationary weights.
#include <gtest/gtest.h>

#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/batch.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/sizing.hpp"
#include "shipped_spec.hpp"

using namespace kvcim::mapper;
using kvcim::test::shipped;
using namespace kvcim::cmodel::energy;

namespace {

Figures figures_at(const ModelShape& shape, const HardwareSpec& hw, int sequences, int64_t context) {
  Policy pol;
  pol.sequences = sequences;
  return figures(place(shape, hw, pol, context));
}

}  // namespace

TEST(Batch, OneSequenceIsTheSingleToken) {
  for (const char* spec : {"sram_digital", "sram_analog", "reram_analog", "attention_only"}) {
    const HardwareSpec hw = shipped(spec);
    const ModelShape shape = shape_preset("stories260k");
    const Placement p = place(shape, hw, Policy{}, 100);
    const Figures f = figures(p);
    const TokenLedgers t = token_ledgers(p);
    const auto costs = hw.costs(), kvc = hw.kv_costs();
    EXPECT_EQ(f.energy_pj_cim, static_cast<double>(t.cim.energy_aj(costs, &kvc) + t.periphery.energy_aj(costs, &kvc)) * 1e-6) << spec;
    EXPECT_EQ(f.latency_ns_cim, f.latency.total_ns()) << spec;
    EXPECT_EQ(f.bound_cim, f.latency.bound()) << spec;
    const Ledger conv = conventional_ledger(shape, hw, 99);
    const auto bc = hw.baseline_costs();
    EXPECT_EQ(f.energy_pj_conventional, static_cast<double>(conv.energy_aj(bc)) * 1e-6) << spec;
    EXPECT_EQ(f.latency_ns_conventional, baseline_latency(conv, bc, hw.baseline).bound_ns()) << spec;
    EXPECT_DOUBLE_EQ(f.tokens_per_s_cim, 1e9 / f.latency_ns_cim) << spec;
  }
}

// The hand formula at batch B: Llama-2-7B, fp16 conventional decode from HBM. The HBM
// energy of a step is the weights once (every weight but the embedding table, one row of it per
// sequence) plus every sequence's K and V; per token the weight term divides by B, the KV term
// does not.
TEST(Batch, ConventionalWeightsDivideByBatchKvDoesNot) {
  const HardwareSpec hw = kvcim::test::fp16_from_hbm();
  const ModelShape shape = shape_preset("llama2-7b");
  const auto& c = shape.config;
  const int64_t context = 4096;
  const double pj_per_bit = hw.baseline_costs().energy(EventKind::hbm_bit) * 1e-6;
  const double weight_bits = static_cast<double>(weight_elements(c)) * 16;  // the matrices a token reads
  const double kv_bits = double(context) * c.n_layers * 2 * c.kv_dim() * 16 + 2.0 * c.kv_dim() * 16 * c.n_layers;
  for (int B : {1, 8, 64}) {
    const StepFigures s = conventional_step(shape, hw, context, B);
    // the shared part is exactly the weight bits read once
    EXPECT_NEAR(s.shared_pj, weight_bits * pj_per_bit, 1e-9 * s.shared_pj) << B;
    // the HBM energy of one sequence's token in the ledger: its KV (read, and the new K/V written)
    // and its embedding row
    const Ledger token = conventional_dynamic_ledger(shape, hw, context - 1, B);
    const double hbm = static_cast<double>(token.count(EventKind::hbm_bit)) - weight_bits;
    EXPECT_NEAR(hbm, kv_bits + double(c.dim) * 16, 0.5) << B;
    // per token: weights / B + KV (+ the MACs and the rest, small against HBM at batch 1)
    const double hand = (weight_bits / B + kv_bits) * pj_per_bit;
    if (B == 1) {
      EXPECT_NEAR(s.energy_pj_per_token / ((6.74e9 * 16 + kv_bits) * pj_per_bit), 1.0, 0.02);
    }
    EXPECT_GE(s.energy_pj_per_token, hand) << B;
    // and the weight term's share of a token shrinks as 1/B
    const double weight_share = s.shared_pj / B;
    EXPECT_NEAR(weight_share * B, weight_bits * pj_per_bit, 1e-6 * weight_bits * pj_per_bit);
  }
  // the non-weight part of a token does not depend on B (KV from HBM either way)
  const StepFigures s1 = conventional_step(shape, hw, context, 1), s8 = conventional_step(shape, hw, context, 8);
  const double rest1 = s1.energy_pj_per_token - s1.shared_pj, rest8 = s8.energy_pj_per_token - s8.shared_pj / 8;
  EXPECT_NEAR(rest8 / rest1, 1.0, 0.05);  // only leakage per token differs (a longer step, more tokens)
  // throughput grows with the batch, the step takes longer
  EXPECT_GT(s8.tokens_per_s, s1.tokens_per_s);
  EXPECT_GT(s8.step_ns, s1.step_ns);
}

// A step of B sequences: at least the off-chip bits (weight blocks once, each sequence's K/V and
// embedding row B times) over the interface, at least B tokens' digital lane work, and at least
// the critical path plus B - 1 intervals of the slowest weight stage.
TEST(Batch, CimStepRespectsInterfaceLanesAndPipeline) {
  const ModelShape shape = shape_preset("llama2-7b");
  for (const char* spec : {"full_cim", "attention_only", "weights_only"}) {
    const HardwareSpec hw = shipped(spec);
    for (int B : {1, 4, 32}) {
      Policy pol;
      pol.sequences = B;
      const Placement p = place(shape, hw, pol, 2048);
      const Figures f = figures(p);
      const kvcim::mapper::LatencyBound& lb = f.latency;
      const double bit_ns = hw.costs().latency(hw.offchip_event()) * 1e-6;
      const double offchip = (lb.offchip_weight_bits + B * (lb.offchip_bits - lb.offchip_weight_bits)) * bit_ns;
      EXPECT_GE(f.latency_ns_cim * (1 + 1e-12), offchip) << spec << B;
      EXPECT_GE(f.latency_ns_cim * (1 + 1e-12), B * lb.lanes_ns) << spec << B;
      EXPECT_GE(f.latency_ns_cim * (1 + 1e-12), lb.critical_path_ns() + (B - 1) * lb.slowest_macro_stage_ns) << spec << B;
      EXPECT_NEAR(f.tokens_per_s_cim, B * 1e9 / f.latency_ns_cim, 1e-9 * f.tokens_per_s_cim);
      // attention-only: every weight bit is fetched off-chip once per step
      if (std::string(spec) == "attention_only") {
        EXPECT_NEAR(lb.offchip_weight_bits,
                    static_cast<double>(p.weights.elements_total) * hw.precision.weight_bits, 1.0);
      }
      if (std::string(spec) == "full_cim") {
        EXPECT_EQ(f.shared_pj_cim, 0);
      }
    }
  }
}

// The weights fetched off-chip by an attention-only chip are shared by the batch: per token they
// fall as 1/B, so energy per token falls with the batch; a full-CIM chip reads no weights, so
// its per-token dynamic energy does not fall.
TEST(Batch, SharedWeightsAmortiseOnlyWhereTheyAreFetched) {
  const ModelShape shape = shape_preset("llama2-7b");
  HardwareSpec att = shipped("attention_only");
  const Figures a1 = figures_at(shape, att, 1, 1024), a16 = figures_at(shape, att, 16, 1024);
  EXPECT_GT(a1.shared_pj_cim, 0);
  EXPECT_NEAR(a16.shared_pj_cim, a1.shared_pj_cim, 1e-9 * a1.shared_pj_cim);  // once per step either way
  EXPECT_LT(a16.energy_pj_cim, a1.energy_pj_cim / 4);
  EXPECT_LT(a16.energy_pj_conventional, a1.energy_pj_conventional / 4);
}

// The step ledgers `kvcim run --batch` charges: with one sequence exactly the single token's;
// with B, the weight fetches once and every other event B times, and costed and divided by B the
// mapper's per-token figures (one computation, not two that could disagree).
TEST(Batch, StepLedgersAreTheStepFigures) {
  const ModelShape shape = shape_preset("stories260k");
  for (const char* spec : {"sram_digital", "attention_only"}) {
    const HardwareSpec hw = shipped(spec);
    const auto bc = hw.baseline_costs(), costs = hw.costs(), kvc = hw.kv_costs();
    const int64_t context = 40;
    EXPECT_EQ(conventional_step_ledger(shape, hw, context, 1), conventional_ledger(shape, hw, context - 1)) << spec;
    for (int B : {1, 3, 8}) {
      Policy pol;
      pol.sequences = B;
      const Placement p = place(shape, hw, pol, context);
      const Figures f = figures(p);
      // conventional: the ledger over B is the figure; SRAM/HBM weight bits once, MACs B times
      const Ledger conv = conventional_step_ledger(shape, hw, context, B);
      EXPECT_NEAR(static_cast<double>(conv.energy_aj(bc)) * 1e-6 / B, f.energy_pj_conventional,
                  1e-9 * f.energy_pj_conventional) << spec << B;
      const Ledger one = conventional_dynamic_ledger(shape, hw, context - 1, B);
      for (EventKind k : {EventKind::int8_mac, EventKind::fp16_mac})
        EXPECT_EQ(conv.count(k), B * one.count(k)) << spec << B;
      const Ledger shared = shared_part(one, true);
      EXPECT_EQ(conv.count(EventKind::sram_bit) + conv.count(EventKind::hbm_bit) + conv.count(EventKind::dram_bit),
                shared.count(EventKind::sram_bit) + shared.count(EventKind::hbm_bit) + shared.count(EventKind::dram_bit) +
                    B * (one.count(EventKind::sram_bit) + one.count(EventKind::hbm_bit) + one.count(EventKind::dram_bit) -
                         shared.count(EventKind::sram_bit) - shared.count(EventKind::hbm_bit) -
                         shared.count(EventKind::dram_bit))) << spec << B;
      // CIM: the macros' events per sequence plus the step's periphery are the figure
      const TokenLedgers t = token_ledgers(p.shape, p.hw, p.policy, p.weights, p.kv, context, false, &f.latency);
      const Ledger periphery = cim_step_periphery(t, f.latency, p.hw, pol, B);  // p.hw: the chip as sized
      if (B == 1) {
        EXPECT_EQ(periphery, t.periphery) << spec;
      }
      Ledger macros = t.cim;
      macros *= B;
      EXPECT_NEAR(static_cast<double>(macros.energy_aj(costs, &kvc) + periphery.energy_aj(costs, &kvc)) * 1e-6 / B,
                  f.energy_pj_cim, 1e-9 * f.energy_pj_cim) << spec << B;
      // the off-chip weight blocks once per step, the embedding rows per sequence
      const Ledger shared_cim = shared_part(t.periphery, false);
      EXPECT_EQ(periphery.count(hw.offchip_event()),
                shared_cim.count(hw.offchip_event()) +
                    B * (t.periphery.count(hw.offchip_event()) - shared_cim.count(hw.offchip_event()))) << spec << B;
      if (std::string(spec) == "attention_only") {
        EXPECT_GT(shared_cim.count(hw.offchip_event()), 0);
      }
    }
  }
}

TEST(Batch, BadSequenceCountIsRefused) {
  const HardwareSpec hw = load_hardware_spec(default_hardware_spec_path());
  EXPECT_THROW(conventional_step(shape_preset("stories260k"), hw, 10, 0), kvcim::Error);
}
