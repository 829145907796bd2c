// The window of CimAttention (overflow=window in kvcim run): a stream keeps its first `sinks`
// tiles and its newest ones, at most `tiles` in all. At every position, attention through the
// window must equal, float for float, attention without a window over exactly the positions of
// the tiles the rule keeps (fed to a fresh CimAttention in order); with a window at least the
// context it equals full attention.
#include <gtest/gtest.h>

#include <random>

#include "kvcim/runtime/cim_attention.hpp"
#include "kvcim/runtime/hardware.hpp"

using namespace kvcim;
using namespace kvcim::runtime;

namespace {

cmodel::Config small_config() {
  cmodel::Config c;
  c.dim = 16, c.hidden_dim = 32, c.n_layers = 2, c.n_heads = 2, c.n_kv_heads = 1;
  c.vocab_size = 32, c.seq_len = 256;
  return c;
}

// Tiles kept after `n` positions with tiles of `per` tokens: the rule, written out.
std::vector<int> kept_tiles(int n, int per, KvWindow w) {
  const int count = (n + per - 1) / per;
  std::vector<int> keep;
  for (int j = 0; j < count; ++j)
    if (w.tiles == 0 || count <= w.tiles || j < w.sinks || j >= count - (w.tiles - w.sinks)) keep.push_back(j);
  return keep;
}

void check(KvWindow w, bool k_per_channel) {
  const cmodel::Config c = small_config();
  cmodel::cim::TileParams tp;
  tp.tokens = 4;
  CimAttention windowed(c, cmodel_tiles(tp), k_per_channel, w);
  std::mt19937_64 g(11);
  std::normal_distribution<float> d(0.0f, 1.0f);
  const int kv = c.kv_dim(), hd = c.head_dim();
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
    std::vector<float> q(hd), a(hd), b(hd);
    for (int l = 0; l < c.n_layers; ++l)
      for (int h = 0; h < c.n_heads; ++h) {
        for (auto& x : q) x = d(g);
        windowed.attend(l, h, q.data(), a.data(), ev);
        fresh.attend(l, h, q.data(), b.data(), ev);
        ASSERT_EQ(a, b) << "position " << pos << " layer " << l << " head " << h;
      }
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
  const cmodel::Config c = small_config();
  EXPECT_THROW(CimAttention(c, cmodel_tiles({}), false, KvWindow{2, 2}), Error);
  EXPECT_THROW(CimAttention(c, cmodel_tiles({}), false, KvWindow{-1, 0}), Error);
}
