// Weight placement invariants on random shapes and macros: every element placed exactly once per
// replica, one block per macro, no macro over capacity, closed forms equal block-by-block sums.
#include <gtest/gtest.h>

#include <set>

#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/mapper/shape.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/placement.hpp"
#include "random_cases.hpp"

using namespace kvcim::mapper;
namespace cim = kvcim::cmodel::cim;

TEST(Weights, EveryElementExactlyOncePerReplicaAndNoMacroOverCapacity) {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 150; ++trial) {
    const auto c = random_cases::random_shape(rng);
    const cim::MacroSpec spec = random_cases::random_macro(rng);
    const int replicas = 1 + static_cast<int>(rng() % 3);
    const int64_t needed = weight_macros_needed(c, spec, replicas);
    const int64_t available = static_cast<int64_t>(rng() % (needed + needed / 2 + 2));
    SCOPED_TRACE("trial " + std::to_string(trial));
    const WeightPlacement w = place_weights(c, spec, replicas, available);
    ASSERT_EQ(w.matrices.size(), (7u * c.n_layers + 1) * replicas);
    std::set<int64_t> macros;
    int64_t cells = 0, onchip = 0, total = 0;
    for (size_t mi = 0; mi < w.matrices.size(); ++mi) {
      const MatrixPlacement& m = w.matrices[mi];
      std::vector<int> cover(static_cast<size_t>(m.n_in * m.n_out), 0);
      for (int64_t b = 0; b < m.blocks(); ++b) {
        const WeightBlock bl = m.block(b, spec);
        ASSERT_GE(bl.rows, 1);
        ASSERT_GE(bl.outs, 1);
        ASSERT_LE(bl.rows, spec.rows);                                  // rows of the macro
        ASSERT_LE(int64_t{bl.outs} * spec.slices_per_weight(), spec.cols);  // its columns
        for (int r = bl.row0; r < bl.row0 + bl.rows; ++r)
          for (int o = bl.out0; o < bl.out0 + bl.outs; ++o) ++cover[r * m.n_out + o];
        if (bl.macro >= 0) {
          ASSERT_TRUE(macros.insert(bl.macro).second) << "macro " << bl.macro << " holds two blocks";
          ASSERT_LT(bl.macro, available);
          cells += m.block_cells(b, spec);
          onchip += int64_t{bl.rows} * bl.outs;
          const auto back = w.macro_contents(bl.macro);
          ASSERT_TRUE(back.has_value());
          ASSERT_EQ(back->first, static_cast<int>(mi));
          ASSERT_EQ(back->second, b);
        }
      }
      for (int x : cover) ASSERT_EQ(x, 1);
      total += m.n_in * m.n_out;
    }
    EXPECT_EQ(static_cast<int64_t>(macros.size()), w.macros_used);
    EXPECT_EQ(w.macros_used, std::min(available, needed));
    EXPECT_EQ(w.cells_used, cells);
    EXPECT_EQ(w.elements_onchip, onchip);
    EXPECT_EQ(w.elements_total, total);
    EXPECT_EQ(total, kvcim::cmodel::energy::weight_elements(c) * replicas);
    EXPECT_FALSE(w.macro_contents(available + 5).has_value());
  }
}

TEST(Weights, ClosedFormEventsEqualBlockByBlockSums) {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 200; ++trial) {
    const cim::MacroSpec spec = random_cases::random_macro(rng);
    MatrixPlacement m{kvcim::cmodel::energy::Op::ffn_w1, 0, 0, 1 + static_cast<int64_t>(rng() % 700),
                      1 + static_cast<int64_t>(rng() % 300), 0, 0, 0, 0};
    m.row_tiles = row_tiles(m.n_in, spec);
    m.col_tiles = col_tiles(m.n_out, spec);
    for (int64_t k : {int64_t{0}, int64_t{1}, m.blocks() / 2, m.blocks() - 1, m.blocks(),
                      static_cast<int64_t>(rng() % (m.blocks() + 1))}) {
      m.onchip_blocks = k;
      cim::MacroEvents sum;
      int64_t elems = 0;
      for (int64_t b = 0; b < k; ++b) {
        const WeightBlock bl = m.block(b, spec);
        sum += cim::compute_events(spec, bl.rows, bl.outs);
        elems += int64_t{bl.rows} * bl.outs;
      }
      ASSERT_EQ(blocks_compute_events(m, spec, k), sum) << "trial " << trial << " k " << k;
      ASSERT_EQ(blocks_elements(m, spec, k), elems);
    }
  }
}

TEST(Weights, EmbeddedModelNeedsHandCountedMacros) {
  // stories260K on 256x256 one-bit cells, 8-bit weights: 8 slices, 32 outputs per macro row.
  // Per layer: q 64x64 -> 2, k 64x32 -> 1, v 1, o 2, w1 64x172 -> 6, w3 6, w2 172x64 -> 2 = 20;
  // 5 layers = 100, classifier 64x512 -> 16: 116 macros.
  const kvcim::cmodel::Config c = shape_preset("stories260k").config;
  cim::MacroSpec s;
  s.rows = 256;
  s.cols = 256;
  s.rows_per_cycle = 256;
  EXPECT_EQ(weight_macros_needed(c, s, 1), 116);
  EXPECT_EQ(weight_macros_needed(c, s, 3), 348);
  // w2 has 172 inputs: one row tile of 172 rows; 64 outputs: two column tiles of 32.
  const WeightPlacement w = place_weights(c, s, 1, 1000);
  const MatrixPlacement& w2 = w.matrices[w.find(kvcim::cmodel::energy::Op::ffn_w2, 0)];
  EXPECT_EQ(w2.row_tiles, 1);
  EXPECT_EQ(w2.col_tiles, 2);
  EXPECT_EQ(w2.block(1, s).rows, 172);
  EXPECT_EQ(w2.block(1, s).out0, 32);
  // 115 macros: the classifier's last block stays off-chip.
  const WeightPlacement short_of_one = place_weights(c, s, 1, 115);
  EXPECT_EQ(short_of_one.blocks_offchip, 1);
  EXPECT_EQ(short_of_one.elements_total - short_of_one.elements_onchip, 64 * 32);
}
