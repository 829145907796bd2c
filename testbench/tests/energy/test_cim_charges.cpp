// The analytic attention-tile events equal what the C-model tile counts when it runs.
#include <gtest/gtest.h>

#include <random>

#include "kvcim/cmodel/energy/cim_charges.hpp"
#include "kvcim/error.hpp"

using namespace kvcim::cmodel;
using namespace kvcim::cmodel::energy;

TEST(CimCharges, TileEventsEqualTheSimulatedTile) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    cim::TileParams p;
    p.head_dim = 2 * (1 + static_cast<int>(rng() % 16));
    p.tokens = 1 + static_cast<int>(rng() % 40);
    p.kv_bits = 4 + static_cast<int>(rng() % 5);
    SCOPED_TRACE("head_dim " + std::to_string(p.head_dim) + " tokens " + std::to_string(p.tokens));
    cim::CModelTile tile(p);
    const int qmax = (1 << (p.kv_bits - 1)) - 1;
    std::uniform_int_distribution<int> val(-qmax, qmax);
    const int n = 1 + static_cast<int>(rng() % p.tokens);
    std::vector<int8_t> k(p.head_dim), v(p.head_dim), q(p.head_dim);
    for (int t = 0; t < n; ++t) {
      for (int i = 0; i < p.head_dim; ++i) {
        k[i] = static_cast<int8_t>(val(rng));
        v[i] = static_cast<int8_t>(val(rng));
      }
      tile.reset_events();
      tile.append(k, v, static_cast<int>(rng() % 5) - 2, static_cast<int>(rng() % 5) - 2);
      ASSERT_EQ(tile.events(), tile_append_events(p)) << "append " << t;
    }
    for (int i = 0; i < p.head_dim; ++i) q[i] = static_cast<int8_t>(val(rng));
    tile.reset_events();
    tile.query(q, cim::query_scale(0.01, p.head_dim));
    EXPECT_EQ(tile.events(), tile_query_events(p, n));
  }
}

TEST(CimCharges, ChargesFollowTheDocumentedConventions) {
  cim::TileParams p;  // head_dim 8, 64 tokens
  const cim::TileEvents q = tile_query_events(p, 10);
  Ledger l(1);
  charge_tile_query(l, 0, q, 8, tile_combine_ops(3, 8));
  EXPECT_EQ(l.count(0, Op::attn_scores, EventKind::column_read), q.k_macro.column_reads);
  EXPECT_EQ(l.count(0, Op::attn_weighted_sum, EventKind::column_read), q.v_macro.column_reads);
  EXPECT_EQ(l.count(0, Op::attn_scores, EventKind::fp32_mul), 8);
  EXPECT_EQ(l.count(0, Op::attn_weighted_sum, EventKind::fp32_mul), 3 * (8 + 2));
  // softmax: 10 tokens: 10 multiplies + 10 divisions; 30 shifts + 40 adds + 20 comparisons; 10
  // table reads of 17 bits.
  EXPECT_EQ(l.count(0, Op::softmax, EventKind::int32_mul), 20);  // integer unit: integer multiplies
  EXPECT_EQ(l.count(0, Op::softmax, EventKind::fp32_mul), 0);
  EXPECT_EQ(l.count(0, Op::softmax, EventKind::int32_add), 90);
  EXPECT_EQ(l.count(0, Op::softmax, EventKind::buffer_bit), 170);
  EXPECT_EQ(tile_combine_ops(1, 8), 0);
  // K macro of a query: q (8 bits, bit-serial) on 8 rows, 10 tokens x 8 slices read per cycle.
  EXPECT_EQ(q.k_macro.row_activations, 8 * 8);
  EXPECT_EQ(q.k_macro.column_reads, 10 * 8 * 8);
  // An append writes head_dim x kv_bits bits into each macro.
  const cim::TileEvents a = tile_append_events(p);
  EXPECT_EQ(a.k_macro.cell_writes, 8 * 8);
  EXPECT_EQ(a.v_macro.cell_writes, 8 * 8);
  EXPECT_THROW(tile_query_events(p, 0), kvcim::Error);
  EXPECT_THROW(tile_query_events(p, 65), kvcim::Error);
}
