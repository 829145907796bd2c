// Port-independent random stimulus for the Verilated tile: each cycle the driver decides on its
// own, per port, whether to offer an append, offer a query and accept the result, so that an
// append and a query are offered in the same cycle, every handshake stalls, and transfers follow
// one another back to back. Valid is withdrawn only after its transfer, its payload held stable
// while waiting (the protocol rtl/cim_attention_tile_assertions.sv enforces); inputs whose valid
// is low carry random bits, which the tile must ignore. A scoreboard replays every transfer that
// fired, in firing order, on the C model (CModelTile) and compares every result integer and, after
// each episode, every event counter. A watchdog turns a hang into a kvcim::Error naming the stuck
// handshake; a query accepted while an append is offered (the contract gives the append priority)
// is a kvcim::Error too, as is a full tile raising app_ready_o.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kvcim/rtl/rtl_tile.hpp"

namespace kvcim::rtl {

struct PortStressOptions {
  int episodes = 20;    // each: reset, 1..tokens appends (a quarter: tokens) and 1..4 queries interleaved, drained
  uint64_t seed = 1;
  double backpressure = 0.25;  // P(the driver holds back a valid, or the result ready) per cycle
  // cycles without any transfer while one is pending before the watchdog fails (0: 4x the
  // longest append plus full-tile query, from the tile's parameters)
  int64_t watchdog_cycles = 0;
};

struct PortStressResult {
  int64_t appends = 0, queries = 0;    // transfers that fired
  int64_t same_cycle_offers = 0;       // cycles with an append and a query both offered
  int64_t stalls[3] = {0, 0, 0};       // cycles a valid waited for ready: append, query, result
  int64_t result_mismatches = 0, event_mismatches = 0;
  std::vector<std::string> first;      // the first few mismatches, described
};

// Runs the episodes on `tile` (its state and counters are reset first). Mismatches are counted;
// a hang, a same-cycle acceptance or a fired assertion throws kvcim::Error.
PortStressResult port_stress(RtlTile& tile, const PortStressOptions& options);

}  // namespace kvcim::rtl
