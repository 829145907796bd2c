// The job of `kvcim cosim` and of kvcim.cosim(): random attention problems through the Verilated
// RTL tile and the C model, every output integer and every event counter compared. One function,
// so that the command and the Python call draw the same problems and the same back-pressure for
// a seed (they had drifted: the two seeded the back-pressure differently).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kvcim/cmodel/cim/attention_tile.hpp"

namespace kvcim::rtl {

// The defaults of `kvcim cosim` and kvcim.cosim().
struct CosimDefaults {
  static constexpr int trials = 1000;
  static constexpr uint64_t seed = 1;
  static constexpr int tokens = 0;                 // 0: random, 1 to the tile's capacity
  static constexpr double backpressure = 0.0;
};

struct CosimOptions {
  int trials = CosimDefaults::trials;
  uint64_t seed = CosimDefaults::seed;  // the problems; the back-pressure draws use seed + 1
  int tokens = CosimDefaults::tokens;   // per problem; 0: random, 1 to the tile's capacity
  double backpressure = CosimDefaults::backpressure;  // P(withholding a handshake per cycle)
  std::string trace_path;                        // a VCD of the RTL ("" none)
};

struct CosimMismatch {
  int trial = 0, tokens = 0;
  std::string results, events;  // how they differ ("" where equal)
};

struct CosimResult {
  CosimOptions options;
  int64_t result_mismatches = 0, event_mismatches = 0;
  std::vector<CosimMismatch> first;  // the first few trials that differ (at most 5)
  cmodel::cim::TileEvents cmodel_events, rtl_events;  // summed over the trials
  uint64_t sim_cycles = 0;           // RTL clock cycles, stalls included
  double seconds = 0;
};

// Checks the options (errors name the field: "trials = 0: expected at least 1") and runs them.
CosimResult cosim_job(const CosimOptions& options);

}  // namespace kvcim::rtl
