// Gate-level co-simulation (rtl_gates.cmake): the Yosys netlist of the tile, Verilated with the
// same harness, against the C model at the same TileParams over 500 random problems, every output
// integer and every event counter. (The directed suite, test_cosim_directed.cpp, is compiled into
// the same executable.)
#include <gtest/gtest.h>

#include <random>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/rtl/rtl_tile.hpp"

using namespace kvcim::cmodel::cim;
using namespace kvcim::rtl;


namespace {

TileParams expected() {
  const int c[] = {KVCIM_RTL_EXPECTED};  // head_dim, tokens, kv_bits, prob_bits
  return TileParams{c[0], c[1], c[2], kTileExpFrac, c[3]};
}

// `trials` problems of random size from `seed` through one C model and one netlist (both reused,
// as the runtime reuses them); identical results and events after each.
void cosim(uint64_t seed, int trials, double backpressure) {
  const TileParams p = expected();
  CModelTile c(p);
  RtlTileOptions o;
  o.backpressure = backpressure;
  o.seed = seed ^ 0x5eed;
  RtlTile r(o);
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, p.tokens)(rng);
    const TileProblem pr = random_problem(rng, p, n);
    const TileResult want = run_problem(c, pr);
    const TileResult got = run_problem(r, pr);
    ASSERT_EQ(diff_results(want, got), "") << "seed " << seed << " trial " << trial << " tokens " << n;
    ASSERT_EQ(diff_events(c.events(), r.events()), "")
        << "seed " << seed << " trial " << trial << " tokens " << n;
  }
}

}  // namespace

TEST(GateLevel, BuiltAtItsConfiguration) {
  EXPECT_EQ(RtlTile::built_params(), expected());
  EXPECT_EQ(RtlTile().params(), expected());
}

// 500 random problems: 350 with no back-pressure, 150 with every handshake stalled 40% of cycles.
TEST(GateLevel, RandomProblemsEqualTheCModel) { cosim(1, 350, 0.0); }
TEST(GateLevel, RandomProblemsUnderBackpressure) { cosim(7, 150, 0.4); }
