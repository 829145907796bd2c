// The macro-built tile: exact against plain integer loops over >= 1,000 random problems and
// several geometries, events equal to hand-computed counts, errors on bad use.
#include <gtest/gtest.h>

#include "kvcim/error.hpp"
#include "tile_test_util.hpp"

namespace {

using namespace tile_test;

// Steps 1 and 6 by plain loops (no macro), steps 2-5 by softmax_fixed (tested on its own).
TileResult direct(const TileParams& p, const Problem& pr) {
  const int n = static_cast<int>(pr.k.size());
  std::vector<int64_t> s(n, 0);
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < p.head_dim; ++i) s[t] += int64_t{pr.q[i]} * pr.k[t][i];
  SoftmaxEvents ignored;
  const SoftmaxOutput sm = softmax_fixed(p, s, pr.ek, pr.ev, pr.scale, exp_lut(p.exp_frac), ignored);
  TileResult r;
  r.o.assign(p.head_dim, 0);
  for (int i = 0; i < p.head_dim; ++i) {
    int64_t acc = 0;
    for (int t = 0; t < n; ++t) acc += int64_t{sm.prob[t]} * pr.v[t][i];
    r.o[i] = static_cast<int32_t>(acc);
  }
  r.evmax = sm.evmax;
  r.ymax = sm.ymax;
  r.sum = sm.sum;
  return r;
}

TEST(TileCModel, MacrosComputeTheExactContractAcrossGeometries) {
  const TileParams geometries[] = {
      TileParams{},                         // the RTL's: D 8, T 64, 8-bit, F 6, P 12
      TileParams{4, 16, 4, 4, 8},           // narrow
      TileParams{16, 32, 6, 8, 16},         // wide probabilities
      TileParams{1, 3, 2, 0, 1},            // degenerate: one dimension, 2-bit, F 0, P 1
      TileParams{64, 128, 8, 6, 12}};       // a larger head
  std::mt19937_64 rng(42);
  int cases = 0;
  for (const TileParams& p : geometries) {
    CModelTile tile(p);
    for (int trial = 0; trial < 300; ++trial, ++cases) {
      const int n = std::uniform_int_distribution<int>(1, p.tokens)(rng);
      const Problem pr = random_problem(rng, p, n, trial % 5 == 0);
      const TileResult got = run(tile, pr);
      ASSERT_EQ(got, direct(p, pr)) << "geometry D" << p.head_dim << " T" << p.tokens
                                    << " trial " << trial << " tokens " << n;
      ASSERT_EQ(tile.tokens(), n);
    }
  }
  EXPECT_GE(cases, 1000);
}

// Three tokens at the defaults (D 8, T 64, 8-bit k/v/q, P 12): every event by hand from the
// macro formulas of docs/cim_macro.md and the tile schedule of docs/attention_tile.md.
TEST(TileCModel, EventsOfThreeAppendsAndOneQueryByHand) {
  CModelTile tile;
  std::mt19937_64 rng(3);
  const Problem pr = random_problem(rng, tile.params(), 3);
  run(tile, pr);
  const TileEvents e = tile.events();
  // K macro: 8 rows, 8 slices, 8 input cycles (signed, bit-serial), 3 column groups read.
  //   appends: 3 x (8 wordlines x 8 cells) written over 8 cycles each.
  EXPECT_EQ(e.k_macro.cell_writes, 3 * 64);
  EXPECT_EQ(e.k_macro.row_activations, 8 * 8);
  EXPECT_EQ(e.k_macro.column_reads, 3 * 8 * 8);          // 24 columns x 8 cycles
  EXPECT_EQ(e.k_macro.adder_ops, 192 * 7);                // 8-input adder tree per column read
  EXPECT_EQ(e.k_macro.shift_add_ops, 3 * (8 * 8 - 1));   // per group: 64 terms, the first loads
  EXPECT_EQ(e.k_macro.adc_conversions, 0);
  EXPECT_EQ(e.k_macro.cycles, 3 * 8 + 8);
  // V macro: 3 rows driven, 8 groups x 8 slices, 12 unsigned input cycles.
  EXPECT_EQ(e.v_macro.cell_writes, 3 * 64);               // one row of 8 x 8 cells per append
  EXPECT_EQ(e.v_macro.row_activations, 3 * 12);
  EXPECT_EQ(e.v_macro.column_reads, 64 * 12);
  EXPECT_EQ(e.v_macro.adder_ops, 768 * 2);                // 3-input adder tree per column read
  EXPECT_EQ(e.v_macro.shift_add_ops, 8 * (8 * 12 - 1));
  EXPECT_EQ(e.v_macro.cycles, 3 * 1 + 12);
  // softmax: per token 1 multiply, 3 shifts, 4 adds, 2 comparisons, 1 lookup, 1 division, 3 cycles;
  // the pipelined divider's fill once: ceil(12 / 4) - 1 = 2 cycles
  EXPECT_EQ(e.softmax, (SoftmaxEvents{3, 9, 12, 6, 3, 3, 9 + 2}));
  // tile: 3 appends x 8 cycles + query 8 + 12 + (3*3 + 2) + 4
  EXPECT_EQ(e.cycles, 24 + 35);
  EXPECT_EQ(e.appends, 3);
  EXPECT_EQ(e.queries, 1);

  tile.reset_events();
  EXPECT_EQ(tile.events(), TileEvents{});
  tile.reset();  // drops tokens, counts nothing
  EXPECT_EQ(tile.tokens(), 0);
  EXPECT_EQ(tile.events(), TileEvents{});
}

TEST(TileCModel, AppendAfterQueryContinuesTheSameTile) {
  // The decode pattern: append one token, query, append the next, query again.
  const TileParams p;
  CModelTile tile(p);
  std::mt19937_64 rng(9);
  const Problem pr = random_problem(rng, p, 10);
  for (int n = 1; n <= 10; ++n) {
    tile.append(pr.k[n - 1], pr.v[n - 1], pr.ek[n - 1], pr.ev[n - 1]);
    Problem prefix = pr;
    prefix.k.resize(n);
    prefix.v.resize(n);
    prefix.ek.resize(n);
    prefix.ev.resize(n);
    EXPECT_EQ(tile.query(pr.q, pr.scale), direct(p, prefix)) << n;
  }
}

TEST(TileCModel, RejectsBadUseWithNamedFields) {
  TileParams p;
  p.tokens = 2;
  p.kv_bits = 4;
  CModelTile tile(p);
  const std::vector<int8_t> ok(p.head_dim, 7), big(p.head_dim, 8), short_vec(p.head_dim - 1, 0);
  auto message = [&](auto&& f) {
    try {
      f();
    } catch (const kvcim::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { tile.query(ok, 40000, -20); }).find("tokens"), std::string::npos);
  EXPECT_NE(message([&] { tile.append(big, ok, 0, 0); }).find("k[0] = 8"), std::string::npos);
  EXPECT_NE(message([&] { tile.append(ok, short_vec, 0, 0); }).find("v length"), std::string::npos);
  EXPECT_NE(message([&] { tile.append(ok, ok, 128, 0); }).find("ek = 128"), std::string::npos);
  EXPECT_NE(message([&] { tile.append(ok, ok, 0, -129); }).find("ev = -129"), std::string::npos);
  EXPECT_EQ(tile.tokens(), 0);  // rejected appends leave the tile unchanged
  tile.append(ok, ok, 0, 0);
  tile.append(ok, ok, 0, 0);
  EXPECT_NE(message([&] { tile.append(ok, ok, 0, 0); }).find("tile full"), std::string::npos);
  EXPECT_NE(message([&] { tile.query(ok, 100, -20); }).find("qmul = 100"), std::string::npos);
  EXPECT_NE(message([&] { tile.query(ok, 40000, 200); }).find("qexp = 200"), std::string::npos);
  EXPECT_NE(message([&] { tile.query(big, 40000, -20); }).find("q[0] = 8"), std::string::npos);
  EXPECT_NO_THROW(tile.query(ok, 40000, -20));
}

TEST(TileCModel, MacroGeometries) {
  const TileParams p;
  const MacroSpec k = k_macro_spec(p), v = v_macro_spec(p);
  EXPECT_EQ(k.rows, 8);
  EXPECT_EQ(k.weights_per_row(), 64);  // one column group per token
  EXPECT_EQ(k.input_cycles(), 8);
  EXPECT_TRUE(k.input_signed);
  EXPECT_EQ(v.rows, 64);               // one row per token
  EXPECT_EQ(v.weights_per_row(), 8);
  EXPECT_EQ(v.input_cycles(), 12);
  EXPECT_FALSE(v.input_signed);
}

}  // namespace
