// Random co-simulation: the Verilated tile against the C model, every output integer and every
// event counter, over random attention problems of every size. Failing seeds are printed.
#include <gtest/gtest.h>

#include <random>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/rtl/rtl_tile.hpp"
#include "tile_options.hpp"

namespace {

using namespace kvcim::cmodel::cim;
using namespace kvcim::rtl;


// Runs `trials` problems from `seed` through both tiles (a fresh problem per trial, the tiles
// reused, as the runtime reuses them) and expects identical results and events after each.
void cosim(uint64_t seed, int trials, double backpressure) {
  CModelTile c;
  RtlTile r(backpressured(backpressure, seed ^ 0x5eed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, c.params().tokens)(rng);
    const TileProblem pr = random_problem(rng, c.params(), n);
    const TileResult want = run_problem(c, pr);
    const TileResult got = run_problem(r, pr);
    ASSERT_EQ(diff_results(want, got), "") << "seed " << seed << " trial " << trial << " tokens " << n;
    ASSERT_EQ(diff_events(c.events(), r.events()), "")
        << "seed " << seed << " trial " << trial << " tokens " << n;
  }
}

TEST(CosimRandom, ResultsAndEventsMatchTheCModel) { cosim(1, 300, 0.0); }
TEST(CosimRandom, AnotherSeed) { cosim(20240601, 300, 0.0); }
TEST(CosimRandom, UnderBackpressureOnEveryHandshake) { cosim(7, 150, 0.4); }

}  // namespace
