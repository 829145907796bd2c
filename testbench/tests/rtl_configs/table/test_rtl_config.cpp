// One configuration of the tile's table (rtl_configs.cmake): the RTL Verilated at these parameters
// against the C model at the same TileParams, bit for bit (results and every event counter), over
// a table of token counts (one, half, full, random) and back-pressures, through cosim_job, the
// loop `kvcim cosim` runs.
#include <gtest/gtest.h>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/rtl/cosim_job.hpp"
#include "kvcim/rtl/rtl_tile.hpp"

using namespace kvcim;
using namespace kvcim::cmodel::cim;

namespace {

TileParams expected() {
  const int c[] = {KVCIM_RTL_EXPECTED};  // head_dim, tokens, kv_bits, prob_bits
  return TileParams{c[0], c[1], c[2], kTileExpFrac, c[3]};
}

}  // namespace

TEST(RtlConfig, BuiltAtTheTableParameters) {
  const TileParams p = expected();
  EXPECT_EQ(rtl::RtlTile::built_params(), p);
  EXPECT_EQ(rtl::RtlTile().params(), p);
  EXPECT_FALSE(p == TileParams{}) << "the table's configurations differ from the default build";
}

TEST(RtlConfig, EqualsTheCModelBitForBit) {
  const TileParams p = expected();
  struct Case {
    int tokens;  // 0: random per problem
    double backpressure;
    int trials;
  };
  const Case cases[] = {{1, 0.0, 20}, {p.tokens / 2, 0.0, 30}, {p.tokens, 0.0, 30},
                        {0, 0.0, 100}, {0, 0.3, 40}, {p.tokens, 0.5, 10}};
  for (const Case& c : cases) {
    rtl::CosimOptions o;
    o.trials = c.trials;
    o.seed = 1000 + static_cast<uint64_t>(c.tokens);
    o.tokens = c.tokens;
    o.backpressure = c.backpressure;
    o.corners = false;  // (RunsTheCornersAndPortStimulus)
    o.port_episodes = 0;
    const rtl::CosimResult r = rtl::cosim_job(o);
    const std::string first = r.first.empty() ? "" : r.first.front().results + r.first.front().events;
    EXPECT_EQ(r.result_mismatches, 0) << "tokens " << c.tokens << " backpressure " << c.backpressure << ": " << first;
    EXPECT_EQ(r.event_mismatches, 0) << "tokens " << c.tokens << " backpressure " << c.backpressure << ": " << first;
    EXPECT_EQ(r.rtl_events.queries, c.trials);
    EXPECT_GT(r.rtl_events.k_macro.cell_writes, 0);
  }
}

// The directed corners (rounding ties, exact divisions, full and non-power-of-two sizes) and the
// port-independent stimulus (append and query offered together, stalls everywhere), as
// `kvcim cosim` runs them, at this configuration.
TEST(RtlConfig, RunsTheCornersAndPortStimulus) {
  rtl::CosimOptions o;
  o.trials = 1;
  o.seed = 77;
  o.port_episodes = 30;
  const rtl::CosimResult r = rtl::cosim_job(o);
  EXPECT_EQ(r.failure, "");
  const std::string first = r.first.empty() ? "" : r.first.front().what + r.first.front().results + r.first.front().events;
  EXPECT_EQ(r.result_mismatches, 0) << first;
  EXPECT_EQ(r.event_mismatches, 0) << first;
  EXPECT_GT(r.corners, 10);
  EXPECT_GT(r.port_same_cycle_offers, 0);
}
