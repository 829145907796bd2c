// The Verilated tile's lifetime against Verilator's per-thread state: many tiles alive at once,
// made and dropped in any order, on any thread, keep the process at its own threads, and an
// assertion is reported by the tile whose RTL fired it. (Verilator reports $error to the calling
// thread's current context and unregisters a model's scopes from it: before each tile made its own
// context current, an evaluation that dropped its tiles in another order than it made them hung in
// the destructor, and every tile held an idle worker thread.)
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kvcim/error.hpp"
#include "kvcim/rtl/rtl_tile.hpp"
#include "kvcim/testbench/tile_hooks.hpp"

using namespace kvcim::cmodel::cim;
using namespace kvcim::rtl;

namespace {

// This process's threads, from /proc/self/status.
int process_threads() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

// A few tokens and a query through `tile`, checked against the C model.
void exercise(AttentionTile& tile, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const TileProblem pr = random_problem(rng, tile.params(), 1 + static_cast<int>(seed % 5));
  CModelTile c(tile.params());
  EXPECT_EQ(diff_results(run_problem(c, pr), run_problem(tile, pr)), "") << "seed " << seed;
}

}  // namespace

// Tiles dropped in the order they were made, in the reverse order and interleaved, while others
// stay alive: every destructor returns (CTest's timeout is the watchdog) and the survivors still
// compute exactly.
TEST(RtlTileLifetime, TilesDroppedInAnyOrderWhileOthersRun) {
  std::vector<std::unique_ptr<RtlTile>> tiles;
  for (int i = 0; i < 6; ++i) tiles.push_back(std::make_unique<RtlTile>());
  for (int i = 0; i < 6; ++i) exercise(*tiles[i], i);
  tiles[0].reset();  // the first made, while the last made is the thread's current context
  exercise(*tiles[3], 10);
  tiles[5].reset();
  tiles[2].reset();
  exercise(*tiles[1], 11);
  exercise(*tiles[4], 12);
  tiles[4].reset();
  tiles[1].reset();
  exercise(*tiles[3], 13);
  tiles.clear();
  RtlTile last;
  exercise(last, 14);
}

// A tile used on another thread than the one that made it, and dropped there.
TEST(RtlTileLifetime, ATileMadeOnOneThreadRunsAndDiesOnAnother) {
  auto a = std::make_unique<RtlTile>();
  RtlTile b;
  std::thread worker([&] {
    exercise(*a, 20);
    a.reset();
  });
  worker.join();
  exercise(b, 21);
}

// However many tiles are alive, the process keeps its own threads: none per tile.
TEST(RtlTileLifetime, ManyTilesAddNoThreads) {
  const int before = process_threads();
  ASSERT_GT(before, 0);
  std::vector<std::unique_ptr<RtlTile>> tiles;
  for (int i = 0; i < 40; ++i) tiles.push_back(std::make_unique<RtlTile>());
  for (int i = 0; i < 40; i += 7) exercise(*tiles[i], 30 + i);
  EXPECT_EQ(process_threads(), before) << "40 tiles alive";
  tiles.clear();
  EXPECT_EQ(process_threads(), before);
}

#ifndef KVCIM_RTL_GATES
// A protocol break on a tile made before another: its own assertion fires and is reported by it,
// not flagged on the later tile's context (which would make the later tile throw instead).
TEST(RtlTileLifetime, AnAssertionIsReportedByTheTileThatFiredIt) {
  RtlTile first;
  RtlTile second;  // made last: the thread's current context unless each tile sets its own
  std::string what;
  try {
    kvcim::testbench::break_handshake(first, kvcim::testbench::Broken::q_valid);
  } catch (const kvcim::Error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("assertion"), std::string::npos) << "the first tile's assertion did not fire: '" << what << "'";
  exercise(second, 40);  // and the second tile has no error pending
}
#endif
