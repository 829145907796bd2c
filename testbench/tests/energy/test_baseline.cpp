// The conventional baseline against a hand computation on a tiny model.
#include <gtest/gtest.h>

#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/cmodel/energy/tech.hpp"
#include "kvcim/error.hpp"
#include "config_of.hpp"

using namespace kvcim::cmodel;
using namespace kvcim::cmodel::energy;

namespace {
// dim 4, hidden 6, 1 layer, 2 query heads sharing 1 KV head (head_dim 2, kv_dim 2), vocab 5.
Config tiny() { return kvcim::test::config_of(4, 6, 1, 2, 1, 5, 8); }
}  // namespace

TEST(Baseline, Int8FromHbmMatchesHandCount) {
  BaselineConfig b;  // int8, HBM, no SRAM
  const Ledger l = baseline_ledger(tiny(), 2, b);  // position 2: attends over 3 tokens
  // Weight elements: q 4x4=16, k 4x2=8, v 8, o 16, w1 4x6=24, w2 24, w3 24, classifier 4x5=20.
  const int64_t weights = 16 + 8 + 8 + 16 + 24 + 24 + 24 + 20;  // 140
  // Attention MACs: 2 heads x 3 tokens x 2 dims, once for scores and once for the weighted sum.
  const int64_t attn = 2 * 3 * 2;
  EXPECT_EQ(l.count(EventKind::int8_mac), weights + 2 * attn);  // 164
  EXPECT_EQ(l.count(Op::attn_scores, EventKind::int8_mac), attn);
  EXPECT_EQ(l.count(Op::classifier, EventKind::int8_mac), 20);
  // HBM bits: weights 140 x 8, embedding row 4 x 8, K and V of 3 tokens (1 KV head x 2 dims x 8
  // bits, read once for both query heads), the new token's K and V written (2 x 2 x 8).
  EXPECT_EQ(l.count(Op::q_proj, EventKind::hbm_bit), 16 * 8);
  EXPECT_EQ(l.count(Op::attn_scores, EventKind::hbm_bit), 3 * 2 * 8);
  EXPECT_EQ(l.count(Op::attn_weighted_sum, EventKind::hbm_bit), 3 * 2 * 8);
  EXPECT_EQ(l.count(Op::kv_write, EventKind::hbm_bit), 2 * 2 * 8);
  EXPECT_EQ(l.count(EventKind::hbm_bit), 1120 + 32 + 48 + 48 + 32);  // 1280
  EXPECT_EQ(l.count(EventKind::sram_bit), 0);
  EXPECT_EQ(l.count(EventKind::dram_bit), 0);
  EXPECT_EQ(l.count(EventKind::fp16_mac), 0);
  // Softmax: 2 heads x 3 scores: 6 exponents.
  EXPECT_EQ(l.count(Op::softmax, EventKind::exp_op), 6);

  // Energy of the off-chip traffic and the MACs with the 45 nm table, by hand:
  // 1280 bits x 3.59 pJ + 164 MACs x 0.23 pJ.
  const TechTable t = load_tech_table(std::string(KVCIM_SOURCE_DIR) + "/configs/tech/digital_45nm.yaml");
  const Breakdown bd = l.cost(t.costs());
  EXPECT_NEAR(bd.component_energy_aj[static_cast<int>(Component::offchip)] * 1e-6, 1280 * 3.59, 1e-9);
  EXPECT_NEAR(bd.kind_energy_aj[static_cast<int>(EventKind::int8_mac)] * 1e-6, 164 * 0.23, 1e-9);
}

TEST(Baseline, SramHoldsWeightsThenOldestKvTokens) {
  BaselineConfig b;
  b.sram_bytes = 140 + 8;  // all 1120 weight bits, then 64 bits = two tokens of K+V (32 bits each)
  const Ledger l = baseline_ledger(tiny(), 2, b);
  EXPECT_EQ(l.count(EventKind::sram_bit), 1120 + 2 * 16 + 2 * 16);  // weights + 2 tokens of K and V
  // Off-chip: the embedding row, the third token's K and V, and the new token's write (the
  // whole context does not fit, so the newest slot is off-chip).
  EXPECT_EQ(l.count(EventKind::hbm_bit), 32 + 16 + 16 + 32);
  EXPECT_EQ(l.count(Op::kv_write, EventKind::hbm_bit), 32);

  b.sram_bytes = 1000;  // everything fits: only the embedding row comes from off-chip
  const Ledger all = baseline_ledger(tiny(), 2, b);
  EXPECT_EQ(all.count(EventKind::hbm_bit), 32);
  EXPECT_EQ(all.count(Op::kv_write, EventKind::sram_bit), 32);
}

TEST(Baseline, Fp16AndDramUseTheirEvents) {
  BaselineConfig b;
  b.mac = MacType::fp16;
  b.offchip = OffchipKind::dram;
  const Ledger l = baseline_ledger(tiny(), 0, b);  // one token of context
  EXPECT_EQ(l.count(EventKind::fp16_mac), 140 + 2 * (2 * 1 * 2));
  EXPECT_EQ(l.count(EventKind::int8_mac), 0);
  EXPECT_EQ(l.count(EventKind::hbm_bit), 0);
  EXPECT_EQ(l.count(EventKind::dram_bit), (140 + 4 + 2 + 2 + 4) * 16);
}

TEST(Baseline, KvTrafficGrowsLinearlyWithContext) {
  Config c = tiny();
  c.n_layers = 3;
  BaselineConfig b;
  const Ledger l10 = baseline_ledger(c, 9, b), l20 = baseline_ledger(c, 19, b);
  const int64_t kv10 = l10.count(Op::attn_scores, EventKind::hbm_bit);
  const int64_t kv20 = l20.count(Op::attn_scores, EventKind::hbm_bit);
  EXPECT_EQ(kv10, 3 * 10 * 2 * 8);
  EXPECT_EQ(kv20, 2 * kv10);
  EXPECT_EQ(l10.count(Op::q_proj, EventKind::hbm_bit), l20.count(Op::q_proj, EventKind::hbm_bit));
}

TEST(Baseline, RejectsBadInput) {
  BaselineConfig b;
  EXPECT_THROW(baseline_ledger(tiny(), -1, b), kvcim::Error);
  b.sram_bytes = -5;
  EXPECT_THROW(baseline_ledger(tiny(), 0, b), kvcim::Error);
  Config bad = tiny();
  bad.n_kv_heads = 3;
  EXPECT_THROW(baseline_ledger(bad, 0, BaselineConfig{}), kvcim::Error);
}

TEST(Baseline, LatencyIsTheSlowestResource) {
  const TechTable t = load_tech_table(std::string(KVCIM_SOURCE_DIR) + "/configs/tech/digital_45nm.yaml");
  BaselineConfig b;
  const Ledger l = baseline_ledger(tiny(), 2, b);
  const LatencyBound lb = baseline_latency(l, t.costs(), b);
  // 1280 HBM bits at 186 fs each.
  EXPECT_NEAR(lb.offchip_ns, 1280 * 0.000186, 1e-12);
  EXPECT_DOUBLE_EQ(lb.bound_ns(), std::max({lb.offchip_ns, lb.onchip_ns, lb.compute_ns}));
  b.mac_units = 1;
  EXPECT_GT(baseline_latency(l, t.costs(), b).compute_ns, lb.compute_ns);
}
