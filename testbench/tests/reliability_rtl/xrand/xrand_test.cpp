// RTL outputs do not depend on uninitialised state: the tile Verilated with
// --x-assign unique --x-initial unique, its every register and X assignment filled from several
// seeds, gives the C model's integers and events on random attention problems, through resets
// mid-operation as well. A first test proves the randomisation is live (different seeds give
// different power-on outputs before reset), so the agreement is not that of an all-zero start.
#include <gtest/gtest.h>

#include <random>

// Verilator 5.006's own headers trip -Wunused-parameter (VlClass's copy constructor)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vcim_attention_tile_x.h"
#include "verilated.h"
#pragma GCC diagnostic pop
#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/rtl/rtl_tile.hpp"
#include "kvcim/testbench/tile_hooks.hpp"
#include "xrand_seed.hpp"

namespace {

using namespace kvcim::cmodel::cim;
using namespace kvcim::rtl;
using namespace kvcim::testbench;
using kvcim::reliability::set_xrand_seed;

const int kSeeds[] = {1, 2, 3, 977, 20240917, 2147483647};

// Every output port of the tile right after construction (no clock, no reset), as bytes.
std::vector<uint64_t> power_on_outputs(int seed) {
  VerilatedContext context;
  context.randReset(2);
  context.randSeed(seed);
  Vcim_attention_tile_x top(&context, "tile");
  top.clk = 0;
  top.rst = 0;
  top.eval();
  std::vector<uint64_t> out;
  for (size_t i = 0; i < sizeof(top.o_o) / 4; ++i) out.push_back(top.o_o[i]);
  out.push_back(top.ymax_o);
  out.push_back(top.sum_o);
  out.push_back(top.evmax_o);
  for (size_t i = 0; i < sizeof(top.counters_o) / 4; ++i) out.push_back(top.counters_o[i]);
  top.final();
  return out;
}

TEST(RtlUninitialised, RandomisationIsLiveBeforeReset) {
  // Without --x-initial unique (or with randReset 0) every seed gives the same all-zero state.
  const auto a = power_on_outputs(kSeeds[0]);
  const auto b = power_on_outputs(kSeeds[1]);
  EXPECT_NE(a, b) << "the power-on outputs do not depend on the seed: X randomisation is off";
  EXPECT_EQ(a, power_on_outputs(kSeeds[0])) << "one seed must give one power-on state";
}

TEST(RtlUninitialised, EverySeedAgreesWithTheCModel) {
  for (int seed : kSeeds) {
    SCOPED_TRACE("verilator seed " + std::to_string(seed));
    set_xrand_seed(seed);
    RtlTile rtl;  // constructed (random state), then reset by the harness
    CModelTile c;
    std::mt19937_64 rng(static_cast<uint64_t>(seed) * 7919);
    for (int trial = 0; trial < 100; ++trial) {
      const int n = std::uniform_int_distribution<int>(1, c.params().tokens)(rng);
      const TileProblem pr = random_problem(rng, c.params(), n);
      const TileResult want = run_problem(c, pr);
      const TileResult got = run_problem(rtl, pr);
      ASSERT_EQ(diff_results(want, got), "") << "trial " << trial << " tokens " << n;
      ASSERT_EQ(diff_events(c.events(), rtl.events()), "") << "trial " << trial;
    }
  }
}

TEST(RtlUninitialised, ResetMidOperationLeavesNoTrace) {
  // A reset in the middle of a query or an append, with random state everywhere else, must
  // leave the tile as a fresh one: the next problem gives the C model's answer.
  for (int seed : kSeeds) {
    SCOPED_TRACE("verilator seed " + std::to_string(seed));
    set_xrand_seed(seed);
    RtlTile rtl;
    std::mt19937_64 rng(static_cast<uint64_t>(seed) + 11);
    const TileParams& p = rtl.params();
    for (int trial = 0; trial < 8; ++trial) {
      const TileProblem junk = random_problem(rng, p, std::uniform_int_distribution<int>(1, p.tokens)(rng));
      (void)run_problem(rtl, junk);
      const int cycles = std::uniform_int_distribution<int>(0, 40)(rng);
      if (trial % 2 == 0) {
        query_then_reset(rtl, junk.q, junk.scale.qmul, junk.scale.qexp, cycles);
      } else {
        append_then_reset(rtl, junk.k[0], junk.v[0], junk.ek[0], junk.ev[0], cycles);
      }
      CModelTile c;
      const TileProblem pr = random_problem(rng, p, std::uniform_int_distribution<int>(1, p.tokens)(rng));
      const TileResult want = run_problem(c, pr);
      rtl.reset_events();
      const TileResult got = run_problem(rtl, pr);
      ASSERT_EQ(diff_results(want, got), "") << "trial " << trial;
    }
  }
}

}  // namespace
