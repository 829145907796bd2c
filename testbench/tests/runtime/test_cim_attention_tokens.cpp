// Token-granular eviction in CimAttention (policy granularity=token): a stream keeps exactly
// `tokens` tokens in its tiles; a new token overwrites one token's slot in place. At every
// position the slots must hold exactly the tokens the rule keeps (the sinks and the newest ones,
// or H2O's heavy hitters), and the attention must equal, float for float, attention over exactly
// those tokens in their slots (fed to a fresh CimAttention without a window in slot order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "kvcim/error.hpp"
#include "kvcim/runtime/cim_attention.hpp"
#include "kvcim/runtime/hardware.hpp"
#include "runtime/attention_config.hpp"

using namespace kvcim;
using namespace kvcim::runtime;

namespace {


KvWindow token_window(int tokens, int sinks, bool h2o = false, int recent = 0) {
  KvWindow w;
  w.tokens = tokens;
  w.sink_tokens = sinks;
  w.heavy_hitters = h2o;
  w.recent_tokens = recent;
  return w;
}

cmodel::cim::TileParams four_token_tiles() {
  cmodel::cim::TileParams tp;
  tp.tokens = 4;
  return tp;
}

// The positions StreamingLLM's rule keeps after n positions: the sinks and the newest ones.
std::set<int> streaming_kept(int n, int tokens, int sinks) {
  std::set<int> keep;
  for (int t = 0; t < n; ++t)
    if (n <= tokens || t < sinks || t >= n - (tokens - sinks)) keep.insert(t);
  return keep;
}

struct Stream {
  std::vector<std::vector<float>> ks, vs;  // [pos][layer * kv_dim]
};

// Feeds `fresh` (no window) the tokens of `slots` (positions, in slot order).
void feed(CimAttention& fresh, const cmodel::Config& c, const Stream& s, const std::vector<int>& slots) {
  AttentionEvents ev;
  const int kv = c.kv_dim();
  for (size_t n = 0; n < slots.size(); ++n)
    for (int l = 0; l < c.n_layers; ++l)
      fresh.append(l, static_cast<int>(n), s.ks[slots[n]].data() + l * kv, s.vs[slots[n]].data() + l * kv, ev);
}

void check_streaming(KvWindow w, int positions) {
  const cmodel::Config c = test::small_attention_config();
  const cmodel::cim::TileParams tp = four_token_tiles();
  CimAttention windowed(c, cmodel_tiles(tp), false, w);
  std::mt19937_64 g(5);
  std::normal_distribution<float> d(0.0f, 1.0f);
  const int kv = c.kv_dim(), hd = c.head_dim();
  Stream s;
  AttentionEvents ev;
  for (int pos = 0; pos < positions; ++pos) {
    s.ks.emplace_back(static_cast<size_t>(c.n_layers) * kv);
    s.vs.emplace_back(static_cast<size_t>(c.n_layers) * kv);
    for (auto& x : s.ks.back()) x = d(g);
    for (auto& x : s.vs.back()) x = d(g);
    const AttentionEvents before = ev;
    for (int l = 0; l < c.n_layers; ++l)
      windowed.append(l, pos, s.ks[pos].data() + l * kv, s.vs[pos].data() + l * kv, ev);
    // every token is written once, appended or over an evicted one: the same cell writes
    const AttentionEvents wrote = minus_fields(ev, before);
    ASSERT_EQ(wrote.write.appends, c.n_layers * c.n_kv_heads);
    ASSERT_EQ(wrote.write.k_macro.cell_writes, int64_t{c.n_layers} * c.n_kv_heads * hd * tp.kv_bits);
    for (int l = 0; l < c.n_layers; ++l) {
      const std::vector<int>& slots = windowed.slot_positions(l, 0);
      ASSERT_EQ(std::set<int>(slots.begin(), slots.end()), streaming_kept(pos + 1, w.tokens, w.sink_tokens))
          << "position " << pos;
      // the sinks never move
      for (int t = 0; t < std::min(w.sink_tokens, pos + 1); ++t) ASSERT_EQ(slots[t], t);
    }
    CimAttention fresh(c, cmodel_tiles(tp));
    feed(fresh, c, s, windowed.slot_positions(0, 0));
    test::expect_same_attention(windowed, fresh, c, g, pos, ev);
    if (::testing::Test::HasFatalFailure()) return;
    const int tiles = (std::min(pos + 1, w.tokens) + tp.tokens - 1) / tp.tokens;
    ASSERT_EQ(windowed.tiles_in_use(), tiles * c.n_layers * c.n_kv_heads);
  }
}

}  // namespace

TEST(CimAttentionTokens, KeepsTheSinkTokensAndTheNewestOnes) {
  check_streaming(token_window(6, 0), 30);  // a plain window, across tile boundaries
  check_streaming(token_window(6, 2), 30);  // StreamingLLM: 2 sinks + 4 recent
  check_streaming(token_window(9, 4), 30);  // a part-filled third tile
  check_streaming(token_window(16, 4), 40);
}

TEST(CimAttentionTokens, AWindowCoveringTheContextIsFullAttention) {
  const cmodel::Config c = test::small_attention_config();
  const cmodel::cim::TileParams tp = four_token_tiles();
  CimAttention windowed(c, cmodel_tiles(tp), false, token_window(24, 4));
  CimAttention full(c, cmodel_tiles(tp));
  std::mt19937_64 g(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  AttentionEvents ev;
  std::vector<float> k(c.kv_dim()), v(c.kv_dim()), q(c.head_dim()), a(c.head_dim()), b(c.head_dim());
  for (int pos = 0; pos < 24; ++pos) {
    for (auto& x : k) x = d(g);
    for (auto& x : v) x = d(g);
    for (int l = 0; l < c.n_layers; ++l) {
      windowed.append(l, pos, k.data(), v.data(), ev);
      full.append(l, pos, k.data(), v.data(), ev);
    }
    for (auto& x : q) x = d(g);
    windowed.attend(1, 1, q.data(), a.data(), ev);
    full.attend(1, 1, q.data(), b.data(), ev);
    ASSERT_EQ(a, b) << "position " << pos;
  }
}

// H2O per token, by hand. head_dim 8; the query points along channel 0. Token 0's key points
// along it (it draws nearly all the attention), token 1's against it (almost none), token 2's is
// orthogonal (its share is between). A window of 3 tokens, no sinks, 1 recent: when token 3
// comes, the candidates are tokens 0, 1 and 2 (the recent one is token 3 itself); H2O overwrites
// token 1, the least drawn, where the oldest rule overwrites token 0.
TEST(CimAttentionTokens, HeavyHittersKeepTheTokenThatDrawsAttention) {
  const cmodel::Config c = test::small_attention_config();
  const cmodel::cim::TileParams tp = four_token_tiles();
  const int hd = c.head_dim(), kv = c.kv_dim();
  auto along = [&](float x) {
    std::vector<float> k(kv, 0.0f);
    k[0] = x;
    return k;
  };
  const std::vector<std::vector<float>> keys = {along(4.0f), along(-4.0f), along(0.0f), along(1.0f)};
  std::vector<float> v(kv, 0.5f), q(hd, 0.0f), out(hd);
  q[0] = 1.0f;
  auto score = [&](int t) { return std::exp(keys[t][0] / std::sqrt(double(hd))); };
  for (bool h2o : {true, false}) {
    CimAttention a(c, cmodel_tiles(tp), false, token_window(3, 0, h2o, 1));
    AttentionEvents ev;
    std::vector<double> expected(3, 0.0);  // float softmax shares of tokens 0..2, accumulated
    for (int pos = 0; pos < 3; ++pos) {
      a.append(0, pos, keys[pos].data(), v.data(), ev);
      a.attend(0, 0, q.data(), out.data(), ev);
      // the hand computation: share_t = exp(s_t) / sum_u exp(s_u), s = q.k / sqrt(head_dim)
      double z = 0;
      for (int t = 0; t <= pos; ++t) z += score(t);
      for (int t = 0; t <= pos; ++t) expected[t] += score(t) / z;
    }
    // 0 drew 1 + 0.944 + 0.768, 1 drew 0.056 + 0.045, 2 drew 0.187
    EXPECT_NEAR(expected[0], 2.712, 0.001);
    EXPECT_NEAR(expected[1], 0.101, 0.001);
    EXPECT_NEAR(expected[2], 0.187, 0.001);
    const std::vector<double> drawn_before = a.slot_scores(0, 0);
    a.append(0, 3, keys[3].data(), v.data(), ev);
    const std::vector<int>& slots = a.slot_positions(0, 0);
    if (!h2o) {
      EXPECT_EQ(slots, (std::vector<int>{3, 1, 2}));  // the oldest leaves
      continue;
    }
    // token 1 (slot 1), the least drawn, was overwritten by token 3
    EXPECT_EQ(slots, (std::vector<int>{0, 3, 2}));
    // the tile's fixed-point shares track the float ones
    ASSERT_EQ(drawn_before.size(), 3u);
    for (int t = 0; t < 3; ++t) EXPECT_NEAR(drawn_before[t], expected[t], 0.02) << "token " << t;
    EXPECT_EQ(a.slot_scores(0, 0)[1], 0.0);  // token 3 starts from nothing
    a.attend(0, 0, q.data(), out.data(), ev);
    const double z = score(0) + score(3) + score(2);
    EXPECT_NEAR(a.slot_scores(0, 0)[0], expected[0] + score(0) / z, 0.03);
    EXPECT_NEAR(a.slot_scores(0, 0)[1], score(3) / z, 0.02);
  }
}

TEST(CimAttentionTokens, RefusesWhatCannotWork) {
  const cmodel::Config c = test::small_attention_config();
  const cmodel::cim::TileParams tp = four_token_tiles();
  auto message = [&](KvWindow w, bool per_channel, TileFactory f = {}) {
    try {
      CimAttention a(c, f ? f : cmodel_tiles(tp), per_channel, w);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(token_window(4, 4), false).find("besides its sinks"), std::string::npos);
  EXPECT_NE(message(token_window(6, 2, true, 4), false).find("besides its sinks"), std::string::npos);
  EXPECT_NE(message(token_window(6, 2), true).find("kv.k_scale: channel"), std::string::npos);
  // a tile that cannot overwrite a slot (as the RTL tile) is refused up front
  struct AppendOnly : cmodel::cim::AttentionTile {
    cmodel::cim::CModelTile t;
    explicit AppendOnly(const cmodel::cim::TileParams& p) : t(p) {}
    const cmodel::cim::TileParams& params() const override { return t.params(); }
    void reset() override { t.reset(); }
    void append(std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) override {
      t.append(k, v, ek, ev);
    }
    using AttentionTile::query;
    cmodel::cim::TileResult query(std::span<const int8_t> q, uint16_t qmul, int qexp) override {
      return t.query(q, qmul, qexp);
    }
    int tokens() const override { return t.tokens(); }
    cmodel::cim::TileEvents events() const override { return t.events(); }
    void reset_events() override { t.reset_events(); }
  };
  EXPECT_NE(message(token_window(6, 2), false, [tp] { return std::make_unique<AppendOnly>(tp); })
                .find("cannot overwrite"),
            std::string::npos);
  EXPECT_EQ(message(token_window(6, 2, true), false), "accepted");
}
