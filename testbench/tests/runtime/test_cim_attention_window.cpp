// The window of CimAttention (overflow=window in kvcim run): a stream keeps its first `sinks`
// tiles and its newest ones, at most `tiles` in all. At every position, attention through the
// window must equal, float for float, attention without a window over exactly the positions of
// the tiles the rule keeps (fed to a fresh CimAttention in order); with a window at least the
// context it equals full attention.
#include <gtest/gtest.h>

#include <random>

#include "kvcim/error.hpp"
#include "kvcim/runtime/cim_attention.hpp"
#include "kvcim/runtime/hardware.hpp"
#include "runtime/attention_config.hpp"

using namespace kvcim;
using namespace kvcim::runtime;

namespace {


// Tiles kept after `n` positions with tiles of `per` tokens: the rule, written out.
std::vector<int> kept_tiles(int n, int per, KvWindow w) {
  const int count = (n + per - 1) / per;
  std::vector<int> keep;
  for (int j = 0; j < count; ++j)
    if (w.tiles == 0 || count <= w.tiles || j < w.sinks || j >= count - (w.tiles - w.sinks)) keep.push_back(j);
  return keep;
}

void check(KvWindow w, bool k_per_channel) {
  const cmodel::Config c = test::small_attention_config();
  cmodel::cim::TileParams tp;
  tp.tokens = 4;
  CimAttention windowed(c, cmodel_tiles(tp), k_per_channel, w);
  std::mt19937_64 g(11);
  std::normal_distribution<float> d(0.0f, 1.0f);
  const int kv = c.kv_dim();
  std::vector<std::vector<float>> ks, vs;  // [pos][layer * kv_dim]
  AttentionEvents ev;
  for (int pos = 0; pos < 30; ++pos) {
    ks.emplace_back(static_cast<size_t>(c.n_layers) * kv);
    vs.emplace_back(static_cast<size_t>(c.n_layers) * kv);
    for (auto& x : ks.back()) x = d(g);
    for (auto& x : vs.back()) x = d(g);
    for (int l = 0; l < c.n_layers; ++l)
      windowed.append(l, pos, ks[pos].data() + l * kv, vs[pos].data() + l * kv, ev);
    // the positions the rule keeps, into a fresh CimAttention without a window
    CimAttention fresh(c, cmodel_tiles(tp), k_per_channel);
    int n = 0;
    for (int j : kept_tiles(pos + 1, tp.tokens, w))
      for (int t = j * tp.tokens; t < std::min(pos + 1, (j + 1) * tp.tokens); ++t, ++n)
        for (int l = 0; l < c.n_layers; ++l) fresh.append(l, n, ks[t].data() + l * kv, vs[t].data() + l * kv, ev);
    test::expect_same_attention(windowed, fresh, c, g, pos, ev);
    if (::testing::Test::HasFatalFailure()) return;
    const int held = static_cast<int>(kept_tiles(pos + 1, tp.tokens, w).size());
    ASSERT_EQ(windowed.tiles_in_use(), held * c.n_layers * c.n_kv_heads);
  }
}

}  // namespace

TEST(CimAttentionWindow, KeepsTheNewestTilesAndTheSinks) {
  for (bool per_channel : {false, true}) {
    check({3, 0}, per_channel);
    check({3, 1}, per_channel);
    check({4, 2}, per_channel);
  }
}

TEST(CimAttentionWindow, AWindowAtLeastTheContextIsFullAttention) {
  check({8, 0}, false);  // 30 positions in 8 tiles of 4: nothing is ever dropped
  check({0, 0}, true);
}

TEST(CimAttentionWindow, RefusesAWindowOfSinksOnly) {
  const cmodel::Config c = test::small_attention_config();
  EXPECT_THROW(CimAttention(c, cmodel_tiles({}), false, KvWindow{2, 2}), kvcim::Error);
  EXPECT_THROW(CimAttention(c, cmodel_tiles({}), false, KvWindow{-1, 0}), kvcim::Error);
}

TEST(CimAttentionWindow, HeavyHittersKeepTheTilesThatDrawAttention) {
  // A hand example, one layer, one KV head, two query heads, tiles of 4 tokens, a window of 3
  // tiles. Every query is u; the keys of tile 0 are +u (large scores), of tile 1 -u (tiny
  // shares), later ones 0.1 u. When tile 3 starts, the window holds tiles 0, 1, 2: H2O keeps the
  // newest full tile (2) and drops the least-drawn of 0 and 1, i.e. tile 1 (the oldest rule would
  // drop 0). When tile 4 starts it holds 0, 2, 3 and drops 2. Attention must then equal attention
  // over exactly tiles {0, 2, 3} and {0, 3, 4}.
  cmodel::Config c = test::small_attention_config();
  c.n_layers = 1;
  cmodel::cim::TileParams tp;
  tp.tokens = 4;
  const int hd = c.head_dim();
  std::vector<float> u(hd);
  for (int i = 0; i < hd; ++i) u[i] = (i % 2 ? -1.0f : 1.0f) * (1.0f + 0.1f * i);
  auto key = [&](int pos) {
    const float a = pos < 4 ? 2.0f : pos < 8 ? -2.0f : 0.1f;
    std::vector<float> k(hd);
    for (int i = 0; i < hd; ++i) k[i] = a * u[i];
    return k;
  };
  auto value = [&](int pos) {
    std::vector<float> v(hd);
    for (int i = 0; i < hd; ++i) v[i] = std::sin(0.7f * pos + i);
    return v;
  };
  for (bool h2o : {true, false}) {
    CimAttention att(c, cmodel_tiles(tp), false, KvWindow{3, 0, h2o});
    AttentionEvents ev;
    std::vector<float> out(hd);
    for (int pos = 0; pos < 20; ++pos) {
      att.append(0, pos, key(pos).data(), value(pos).data(), ev);
      for (int h = 0; h < c.n_heads; ++h) att.attend(0, h, u.data(), out.data(), ev);
      if (h2o && pos < 12) {
        // before any tile leaves, the shares of every query so far (3 per position: two heads
        // here, one comparison below) sum to the number of queries
        const std::vector<double>& drawn = att.drawn(0, 0);
        double total = 0;
        for (double d : drawn) total += d;
        EXPECT_NEAR(total, 3.0 * pos + 2.0, 1e-9) << pos;
        if (pos == 11) {
          EXPECT_GT(drawn[0], 10 * drawn[1]);  // what the rule will act on
        }
      }
      std::vector<int> kept;
      if (pos < 12) kept = {0, 1, 2};
      else if (pos < 16) kept = h2o ? std::vector<int>{0, 2, 3} : std::vector<int>{1, 2, 3};
      else kept = h2o ? std::vector<int>{0, 3, 4} : std::vector<int>{2, 3, 4};
      CimAttention fresh(c, cmodel_tiles(tp), false);
      int n = 0;
      for (int j : kept)
        for (int t = j * 4; t < std::min(pos + 1, j * 4 + 4); ++t, ++n) fresh.append(0, n, key(t).data(), value(t).data(), ev);
      std::vector<float> a(hd), b(hd);
      att.attend(0, 0, u.data(), a.data(), ev);
      fresh.attend(0, 0, u.data(), b.data(), ev);
      ASSERT_EQ(a, b) << (h2o ? "h2o" : "oldest") << " at position " << pos;
    }
  }
}

TEST(CimAttentionWindow, SpilledTilesGiveFullAttentionAndLeaveTheirQueriesToTheEngine) {
  // overflow=spill: a stream keeps its newest cim_tiles tiles in CIM (the first
  // cim_extra_streams streams one more); the digital engine attends over the older ones on the
  // same codes. Outputs equal full attention exactly; the query events of spilled tiles are
  // reported apart, and the two parts add up to full attention's.
  const cmodel::Config c = test::small_attention_config();  // 2 layers, 1 KV head: streams 0 and 1
  cmodel::cim::TileParams tp;
  tp.tokens = 4;
  KvWindow spill;
  spill.cim_tiles = 1;
  spill.cim_extra_streams = 1;  // stream 0 (layer 0) keeps 2 tiles, stream 1 keeps 1
  CimAttention full(c, cmodel_tiles(tp)), spilled(c, cmodel_tiles(tp), false, spill);
  std::mt19937_64 g(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  const int kv = c.kv_dim(), hd = c.head_dim();
  AttentionEvents ef, es;
  std::vector<float> k(kv), v(kv), q(hd), a(hd), b(hd);
  for (int pos = 0; pos < 11; ++pos)  // 3 tiles per stream: 4 + 4 + 3 tokens
    for (int l = 0; l < c.n_layers; ++l) {
      for (auto& x : k) x = d(g);
      for (auto& x : v) x = d(g);
      full.append(l, pos, k.data(), v.data(), ef);
      spilled.append(l, pos, k.data(), v.data(), es);
    }
  for (int l = 0; l < c.n_layers; ++l) {
    AttentionEvents qf, qs;
    for (auto& x : q) x = d(g);
    full.attend(l, 0, q.data(), a.data(), qf);
    spilled.attend(l, 0, q.data(), b.data(), qs);
    EXPECT_EQ(a, b) << "layer " << l;
    cmodel::cim::TileEvents sum = qs.query;
    sum += qs.offchip_query;
    EXPECT_EQ(sum, qf.query);
    EXPECT_EQ(qs.query.queries, l == 0 ? 2 : 1) << "tiles queried in CIM, layer " << l;
    EXPECT_EQ(qs.offchip_query.queries, l == 0 ? 1 : 2) << "tiles queried off-chip, layer " << l;
  }
  EXPECT_EQ(es.write, ef.write);  // every token is written into CIM before it spills
}
