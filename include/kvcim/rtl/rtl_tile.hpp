// The Verilated RTL attention tile (rtl/cim_attention_tile.sv) behind the same AttentionTile
// interface as the C model, so the runtime can take either. The harness clocks the tile through its
// ports only: reset, the append / query / result valid-ready handshakes (with optional seeded
// back-pressure on every one of them), the event counters, and an optional VCD trace.
//
// Only the composition roots (kvcim, the Python module, tests, benchmarks) link this; Verilator's
// headers stay inside rtl/sim.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kvcim/cmodel/cim/attention_tile.hpp"

namespace kvcim::rtl {

// The tile's event counters, in the order of its counters_o port: every counter of TileEvents in
// its field table's order, except the ADC conversions (the RTL's macros are digital: no ADC). The
// SV package's CNT_* indices are generated from this list by rtl/gen_tile_pkg.cpp, each named by
// its counter's path ("k_macro.row_activations" -> CNT_K_MACRO_ROW_ACTIVATIONS), so a counter
// added to the table is a port index of the RTL without another list to edit.
inline bool rtl_counts(const std::string& path) { return !path.ends_with("adc_conversions"); }
// The SV names (without CNT_), in port order.
inline std::vector<std::string> rtl_counter_names() {
  std::vector<std::string> names;
  const cmodel::cim::TileEvents none;
  for_each_counter(none, [&](const std::string& path, int64_t) {
    if (!rtl_counts(path)) return;
    std::string sv;
    for (const char c : path) sv += c == '.' ? '_' : static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    names.push_back(sv);
  });
  return names;
}

struct RtlTileOptions {
  // Probability, per cycle and handshake, that the harness withholds its valid (append, query) or
  // its ready (result). 0 = never; the tile must give the same integers and events at any value.
  // Withholding delays raising valid; once raised, valid stays high until the transfer, as the
  // protocol requires (rtl/cim_attention_tile_assertions.sv).
  double backpressure = 0.0;
  uint64_t seed = 1;          // the back-pressure generator's seed
  // non-empty: write a trace of every cycle to this file, in the format the tile was built with
  // (trace_format(): FST by default, VCD with -DKVCIM_RTL_TRACE=vcd); a name ending in the other
  // format's extension is refused
  std::string trace_path;
  int64_t timeout_cycles = 1'000'000;  // a handshake not completing within this throws
};

class RtlTile final : public cmodel::cim::AttentionTile {
 public:
  explicit RtlTile(const RtlTileOptions& options = {});
  ~RtlTile() override;
  RtlTile(const RtlTile&) = delete;
  RtlTile& operator=(const RtlTile&) = delete;

  // The RTL is built at the default TileParams (the generated package), or, in the builds of the
  // configuration table (testbench/tests/rtl_configs), at that configuration's.
  const cmodel::cim::TileParams& params() const override;
  static cmodel::cim::TileParams built_params();
  // "fst" or "vcd": the trace format of this build (rtl/rtl.cmake, KVCIM_RTL_TRACE)
  static const char* trace_format();
  void reset() override;  // clear_i: drops the tokens, keeps the counters
  void append(std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) override;
  using AttentionTile::query;
  cmodel::cim::TileResult query(std::span<const int8_t> q, uint16_t qmul, int qexp) override;
  int tokens() const override;
  cmodel::cim::TileEvents events() const override;
  void reset_events() override;  // evt_clear_i

  // ---- lower-level access ----
  // Synchronous reset (rst for one cycle): drops the tokens, zeroes the counters, aborts any
  // operation in flight.
  void hard_reset();
  // The raw counters_o words, in rtl_counter_names() order.
  std::vector<uint64_t> counters() const;
  // Every clock cycle simulated so far (stalls and idle cycles included).
  uint64_t sim_cycles() const;

  // The Verilated model and its clocking (rtl/sim/rtl_tile_impl.hpp), for harness hooks that drive
  // the ports directly (testbench/harness/tile_hooks.cpp).
  struct Impl;
  Impl& impl();

 private:
  std::unique_ptr<Impl> impl_;
};

// ---- random attention problems, shared by the cosim command, the suites and the benchmark -------
struct TileProblem {
  std::vector<std::vector<int8_t>> k, v;  // [tokens][head_dim]
  std::vector<int> ek, ev;                // [tokens]
  std::vector<int8_t> q;                  // [head_dim]
  cmodel::cim::QueryScale scale;
};
// `tokens` tokens (1..p.tokens) with a mix of value distributions (uniform full range, small,
// extremes, constant), exponents and query scales spanning sharp and flat softmaxes.
TileProblem random_problem(std::mt19937_64& rng, const cmodel::cim::TileParams& p, int tokens);
// Loads the problem into the tile (after reset()) and runs its query.
cmodel::cim::TileResult run_problem(cmodel::cim::AttentionTile& tile, const TileProblem& problem);

// Describes how two event sets differ ("" if equal), naming each differing counter.
std::string diff_events(const cmodel::cim::TileEvents& expected, const cmodel::cim::TileEvents& got);
std::string diff_results(const cmodel::cim::TileResult& expected, const cmodel::cim::TileResult& got);

}  // namespace kvcim::rtl
