// LLM scale: chips sized for the model, the shipped design points, the latency bound against the
// physics (off-chip bytes over one interface, macro cycles on the critical path) and the
// conventional fp16 decode against its hand formula.
#include <gtest/gtest.h>

#include <random>

#include "error_of.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/sizing.hpp"
#include "random_cases.hpp"
#include "shipped_spec.hpp"

using namespace kvcim::mapper;
using kvcim::test::shipped;
using namespace kvcim::cmodel::energy;
namespace cim = kvcim::cmodel::cim;
using kvcim::test::error_of;

namespace {

// Off-chip bits of one token of sequence 0 from the placement alone: weight elements not in
// CIM, the embedding row, spilled K/V read, K/V written off-chip (a stream without a page on chip,
// or one that spills: one token leaves per token).
double offchip_bits(const Placement& p) {
  const auto& c = p.shape.config;
  double bits = static_cast<double>(c.dim) * p.hw.precision.weight_bits;
  for (const MatrixPlacement& m : p.weights.matrices)
    if (m.replica == 0)
      for (int64_t b = m.onchip_blocks; b < m.blocks(); ++b) {
        const WeightBlock bl = m.block(b, p.hw.macro);
        bits += double(bl.rows) * bl.outs * p.hw.precision.weight_bits;
      }
  const double token_bits = 2.0 * c.head_dim() * p.hw.precision.kv_bits;
  for (int64_t st = 0; st < p.kv.streams_per_sequence(); ++st) {
    const StreamTokens s = stream_tokens(p.kv, p.policy, st, p.context);
    bits += (double(s.offchip_tokens) + (s.resident_pages == 0 || s.offchip_tokens > 0 ? 1 : 0)) * token_bits;
  }
  return bits;
}

// The macro cycles a token cannot avoid: per layer the slowest macro of q/k/v, of o, of w1/w3,
// of w2 (each block by itself), then the classifier's.
double macro_critical_path_ns(const Placement& p) {
  const double cycle = p.hw.costs().latency(EventKind::macro_cycle) * 1e-6;
  auto slowest = [&](Op op, int layer) {
    const MatrixPlacement& m = p.weights.matrices[p.weights.find(op, layer)];
    int64_t most = 0;
    for (int64_t b = 0; b < m.onchip_blocks; ++b) {
      const WeightBlock bl = m.block(b, p.hw.macro);
      most = std::max(most, cim::compute_events(p.hw.macro, bl.rows, bl.outs).cycles);
    }
    return static_cast<double>(most) * cycle;
  };
  double t = slowest(Op::classifier, kModelLevel);
  for (int l = 0; l < p.shape.config.n_layers; ++l)
    t += std::max({slowest(Op::q_proj, l), slowest(Op::k_proj, l), slowest(Op::v_proj, l)}) +
         slowest(Op::o_proj, l) + std::max(slowest(Op::ffn_w1, l), slowest(Op::ffn_w3, l)) +
         slowest(Op::ffn_w2, l);
  return t;
}

}  // namespace

TEST(Scale, LatencyRespectsOffchipBytesAndMacroCycles) {
  std::mt19937_64 rng(77);
  const HardwareSpec base = load_hardware_spec(default_hardware_spec_path());
  for (int trial = 0; trial < 60; ++trial) {
    HardwareSpec hw = base;
    cim::MacroSpec m = random_cases::random_macro(rng);
    m.weight_bits = hw.precision.weight_bits;
    m.input_bits = hw.precision.activation_bits;
    m.cols = std::max(m.cols, m.slices_per_weight());
    m.adc_share = std::min(m.adc_share, m.cols);
    m.kind = cim::MacroKind::digital;
    hw.macro = m;
    hw.kv.tokens_per_tile = 1 << (rng() % 4);
    hw.organization.macros = 1 + static_cast<int64_t>(rng() % 400);
    hw.validate();
    const ModelShape shape{"random", random_cases::random_shape(rng)};
    Policy pol;
    pol.overflow = KvOverflow::spill;
    pol.sequences = 1 + static_cast<int>(rng() % 3);
    const Placement p = place(shape, hw, pol, 1 + static_cast<int64_t>(rng() % 200));
    const Figures f = figures(p);
    const double bit_ns = hw.costs().latency(hw.offchip_event()) * 1e-6;
    const double bits = offchip_bits(p);
    ASSERT_NEAR(f.latency.offchip_bits, bits, 1e-9 * bits) << trial;
    ASSERT_GE(f.latency_ns_cim * (1 + 1e-12), bits * bit_ns) << trial;
    ASSERT_GE(f.latency_ns_cim * (1 + 1e-12), macro_critical_path_ns(p)) << trial;
    ASSERT_GE(f.latency.macro_ns * (1 + 1e-12), macro_critical_path_ns(p)) << trial;
  }
}

TEST(Scale, Llama2OffchipWeightsCrossOneInterface) {
  // the case: Llama-2-7B with its weights off-chip; the bound is at least the whole
  // weight traffic over one interface, not the slowest matrix of each parallel group
  const HardwareSpec hw = shipped("attention_only");
  Policy pol;
  const Placement p = place(shape_preset("llama2-7b"), hw, pol, 1024);
  const Figures f = figures(p);
  EXPECT_EQ(p.weights.macros_used, 0);
  const double weight_bits = static_cast<double>(p.weights.elements_total) * hw.precision.weight_bits;
  EXPECT_GE(f.latency_ns_cim, weight_bits * hw.costs().latency(hw.offchip_event()) * 1e-6);
  EXPECT_EQ(f.bound_cim, Bound::offchip_bytes);
  EXPECT_EQ(f.offchip_tokens, 0);  // the KV cache sits in CIM tiles
}

TEST(Scale, SizedChipHoldsWeightsAndKv) {
  const HardwareSpec hw = shipped("full_cim");
  ASSERT_TRUE(hw.organization.macros_auto);
  const ModelShape shape = shape_preset("tinyllama-1.1b");
  Policy pol;
  pol.sequences = 3;
  const Placement p = place(shape, hw, pol, 1000);
  ASSERT_TRUE(p.sizing);
  EXPECT_EQ(p.sizing->weight_macros, weight_macros_needed(shape.config, hw.macro, 1));
  EXPECT_EQ(p.weights.blocks_offchip, 0);
  const Figures f = figures(p);
  EXPECT_EQ(f.offchip_tokens, 0);
  EXPECT_GE(f.max_context_tokens, 1000);
  EXPECT_EQ(p.hw.organization.macros % hw.organization.macros_per_tile, 0);
  // a tile fewer would not hold it: sizing is tight to whole tiles
  HardwareSpec smaller = p.hw;
  smaller.organization.macros -= hw.organization.macros_per_tile;
  EXPECT_NE(error_of([&] { place(shape, smaller, pol, 1000); }), "");
  // the chip's area follows the model's
  EXPECT_NEAR(cim_area(p.hw).total_mm2(), p.sizing->area_mm2(), 1e-9 * p.sizing->area_mm2());
}

TEST(Scale, AreaBudgetCapsAndSaysWhatSpills) {
  HardwareSpec hw = shipped("full_cim");
  const ModelShape shape = shape_preset("tinyllama-1.1b");
  Policy pol;
  pol.overflow = KvOverflow::spill;
  const Placement full = place(shape, hw, pol, 2048);
  hw.organization.area_mm2 = full.sizing->area_mm2() / 2;
  const Placement half = place(shape, hw, pol, 2048);
  ASSERT_TRUE(half.sizing->capped());
  EXPECT_LE(cim_area(half.hw).total_mm2(), hw.organization.area_mm2);
  EXPECT_GT(half.weights.blocks_offchip, 0);  // weights first: the rest goes off-chip
  // smaller than one macro: an error naming the field
  hw.organization.area_mm2 = full.sizing->macro_mm2 / 2;
  const std::string e = error_of([&] { place(shape, hw, pol, 2048); });
  EXPECT_NE(e.find("area_mm2"), std::string::npos) << e;
}

TEST(Scale, WeightsOnlyKeepsKvOffchip) {
  const HardwareSpec hw = shipped("weights_only");
  const Placement p = place(shape_preset("llama2-7b"), hw, Policy{}, 512);
  const Figures f = figures(p);
  EXPECT_EQ(p.weights.blocks_offchip, 0);
  EXPECT_EQ(p.kv.macros, 0);
  EXPECT_EQ(f.resident_tokens, 0);
  EXPECT_EQ(f.offchip_tokens, int64_t{512} * 32 * 32);  // sequence 0: every token-head
}

TEST(Scale, LargePlacementUsesTheClosedForm) {
  // Llama-2-70B, 32k tokens, 64 sequences: no block tables, figures from the closed form
  Policy pol;
  pol.sequences = 64;
  const Placement p = place(shape_preset("llama2-70b"), shipped("full_cim"), pol, 32768);
  EXPECT_FALSE(p.allocator_grown);
  const Figures f = figures(p);
  EXPECT_EQ(f.resident_tokens, int64_t{32768} * 80 * 8);
  EXPECT_EQ(f.offchip_tokens, 0);
}

// Conventional fp16 decode of Llama-2-7B at batch 1: every weight but the embedding table (one
// row of it) crosses HBM once per token, 16 bits each, plus the K and V of every cached token.
// The hand formula of the issue: 6.74e9 x 16 bits x the HBM energy per bit (within 2%) + KV.
TEST(Scale, ConventionalFp16DecodeIsTheHbmHandFormula) {
  const HardwareSpec hw = kvcim::test::fp16_from_hbm();
  const ModelShape shape = shape_preset("llama2-7b");
  const auto& c = shape.config;
  const int64_t context = 1024;
  const Ledger l = baseline_ledger(c, context - 1, hw.baseline);
  const double pj_per_bit = hw.baseline_costs().energy(EventKind::hbm_bit) * 1e-6;
  const double hbm_pj = static_cast<double>(l.count(EventKind::hbm_bit)) * pj_per_bit;
  const double kv_pj = double(context) * c.n_layers * 2 * c.kv_dim() * 16 * pj_per_bit;
  EXPECT_NEAR((hbm_pj - kv_pj) / (6.74e9 * 16 * pj_per_bit), 1.0, 0.02);
}
