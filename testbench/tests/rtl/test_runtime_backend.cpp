// The runtime's CIM attention over RTL tiles and over C-model tiles gives identical outputs and
// events: the backends are interchangeable (--attention-backend rtl / cim). 150 positions span three
// tiles per KV head, so the multi-tile combination is exercised too.
#include <gtest/gtest.h>

#include <random>

#include "kvcim/runtime/cim_attention.hpp"
#include "kvcim/rtl/rtl_tile.hpp"

namespace {

using namespace kvcim;

TEST(RuntimeBackend, RtlTilesAndCModelTilesAgreeBitForBit) {
  cmodel::Config c;
  c.dim = 32;
  c.n_heads = 4;     // head_dim 8, as the RTL
  c.n_kv_heads = 2;  // GQA: two query heads per KV head
  c.n_layers = 1;
  runtime::CimAttention cim(c, [] { return std::make_unique<cmodel::cim::CModelTile>(); });
  runtime::CimAttention rtl(c, [] { return std::make_unique<rtl::RtlTile>(); });
  std::mt19937_64 rng(12);
  std::normal_distribution<float> g(0.f, 1.f);
  runtime::AttentionEvents ec, er;
  std::vector<float> k(c.kv_dim()), v(c.kv_dim()), q(c.head_dim()), oc(c.head_dim()), orl(c.head_dim());
  for (int pos = 0; pos < 150; ++pos) {
    for (auto& x : k) x = g(rng);
    for (auto& x : v) x = g(rng);
    cim.append(0, pos, k.data(), v.data(), ec);
    rtl.append(0, pos, k.data(), v.data(), er);
    for (int head = 0; head < c.n_heads; ++head) {
      for (auto& x : q) x = 3.f * g(rng);
      cim.attend(0, head, q.data(), oc.data(), ec);
      rtl.attend(0, head, q.data(), orl.data(), er);
      ASSERT_EQ(oc, orl) << "pos " << pos << " head " << head;
    }
  }
  EXPECT_EQ(cim.tiles_in_use(), 6);
  EXPECT_EQ(rtl.tiles_in_use(), 6);
  EXPECT_EQ(rtl::diff_events(ec.write, er.write), "");
  EXPECT_EQ(rtl::diff_events(ec.query, er.query), "");
  EXPECT_EQ(ec.combine_ops, er.combine_ops);
}

}  // namespace
