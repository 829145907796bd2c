// The job of `kvcim cosim` and of kvcim.cosim(): one configuration of the Verilated RTL tile
// against the C model, every output integer and every event counter compared, over
//   - random attention problems (loaded and queried through the AttentionTile interface),
//   - the directed corner problems (corner_problems.hpp: rounding ties, exact divisions, a full
//     tile, non-power-of-two sizes, extremes),
//   - port-independent random stimulus (port_stress.hpp: append and query offered in the same
//     cycle, stalls at every handshake),
// all with back-pressure. One function, so that the command and the Python call draw the same
// problems and the same back-pressure for a seed. Each configuration's module exports it
// (RtlModuleV1::cosim, rtl_tiles.hpp), so the command runs every built configuration.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/error.hpp"

namespace kvcim::rtl {

// The defaults of `kvcim cosim` and kvcim.cosim(): the six configurations of a full build in
// about 8 s, most of it the hd48_t128 model (docs/attention_tile.md, 'Checks').
struct CosimDefaults {
  static constexpr int trials = 300;
  static constexpr uint64_t seed = 1;
  static constexpr int tokens = 0;                 // 0: random, 1 to the tile's capacity
  // Stalls at every handshake: each valid and the result ready held back a quarter of the cycles.
  static constexpr double backpressure = 0.25;
  static constexpr bool corners = true;
  static constexpr int port_episodes = 40;
};

struct CosimOptions {
  int trials = CosimDefaults::trials;
  uint64_t seed = CosimDefaults::seed;  // the problems; the back-pressure draws use seed + 1
  int tokens = CosimDefaults::tokens;   // per problem; 0: random, 1 to the tile's capacity
  double backpressure = CosimDefaults::backpressure;  // P(withholding a handshake per cycle)
  bool corners = CosimDefaults::corners;              // the directed corner problems
  int port_episodes = CosimDefaults::port_episodes;   // port-independent stimulus episodes
  std::string trace_path;                        // a trace of the RTL ("" none)
};

struct CosimMismatch {
  std::string what;             // "trial 3, 17 tokens", "corner 'rescale ties'", "port stress"
  std::string results, events;  // how they differ ("" where equal)
};

struct CosimResult {
  CosimOptions options;
  cmodel::cim::TileParams params;                 // the configuration run
  int64_t result_mismatches = 0, event_mismatches = 0;  // over everything below
  int64_t corners = 0;                            // corner problems run
  int64_t port_appends = 0, port_queries = 0, port_same_cycle_offers = 0;
  std::string failure;  // the RTL failed to answer: a fired assertion, a hang, a protocol hazard
  std::vector<CosimMismatch> first;  // the first few problems that differ (at most 5)
  cmodel::cim::TileEvents cmodel_events, rtl_events;  // summed over the random and corner problems
  uint64_t sim_cycles = 0;           // RTL clock cycles, stalls included
  double seconds = 0;
  bool passed() const { return result_mismatches == 0 && event_mismatches == 0 && failure.empty(); }
};

// Bad options for a configuration of parameters `p` (errors name the field: "trials = 0: expected
// at least 1"). Checked for every configuration before any runs, so that bad arguments are told
// apart from a failing RTL.
inline void check_cosim_options(const CosimOptions& o, const cmodel::cim::TileParams& p) {
  if (o.trials < 1) fail("cosim", "trials", std::to_string(o.trials), "expected at least 1");
  if (o.port_episodes < 0) fail("cosim", "port_episodes", std::to_string(o.port_episodes), "expected at least 0");
  if (o.tokens < 0 || o.tokens > p.tokens)
    fail("cosim", "tokens", std::to_string(o.tokens),
         "expected 0 (random) or 1.." + std::to_string(p.tokens) + " (the tile's capacity)");
  if (!(o.backpressure >= 0.0 && o.backpressure < 1.0))
    fail("cosim", "backpressure", std::to_string(o.backpressure), "expected a probability in [0, 1)");
}

// Checks the options and runs them on the configuration this code was built with. An RTL that
// fails to answer (assertion, hang) ends the run with `failure` set, not with an exception.
CosimResult cosim_job(const CosimOptions& options);

}  // namespace kvcim::rtl
