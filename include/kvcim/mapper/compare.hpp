// CIM against the conventional engine as design points, not one ratio: for one workload (a
// placement's context and sequences decoding together) both sides
//  - at their own best throughput: each at the comparison supply, as fast as its latency bound
//    allows; energy per token, step time, tokens/s and energy x delay (EDP = energy per token x
//    the step time, the time a sequence waits for its next token);
//  - at equal throughput: the slower side's best tokens/s, which the faster side reaches at its
//    lowest energy. Its knob is its supply: lowered (both its energy and its speed follow the
//    node-scaling fits, Stillmaker & Baas; off-chip memory and wire delay do not scale) on a
//    0.01 V grid down to kMinSupplyFraction of the comparison supply, then idle for the rest of
//    each step. Idle time follows the idle rule: cells holding data (weights, KV) keep leaking,
//    as they must retain it; logic lanes and cells holding nothing leak only under --idle
//    leaking. The slower side runs as it is (its batch is the workload's: it is not raised).
//  - at equal area, only when both chips hold the same data: every weight and the KV of the
//    context in CIM, and the conventional chip of the CIM chip's area holding them all in its
//    SRAM; otherwise the reason is reported instead of a figure.
// `kvcim map`, `kvcim run` (at the run's last context) and Python report it under one key,
// `comparison`, with the same names (to_json).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/mapper/placement.hpp"

namespace kvcim::mapper {

// The lowest supply the equal-throughput search tries, as a fraction of the comparison supply
// (an assumption: DVFS low points of digital logic and SRAM sit 25-35% below nominal, e.g. a
// 65 nm digital CIM macro swept 0.8 -> 0.6 V, ../shared/research/macro-data.md; below, SRAM
// read margins and the scaling fits are out of their range).
inline constexpr double kMinSupplyFraction = 0.70;
inline constexpr double kSupplyStepV = 0.01;

struct SidePoint {
  double voltage_v = 0;            // the supply it runs at
  double active_ns = 0;            // of a step, working (its latency bound at that supply)
  double step_ns = 0;              // a step: working, then idle
  double tokens_per_s = 0;         // sequences / step
  double energy_pj_per_token = 0;  // the step's energy (idle included) / sequences
  double idle_pj_per_token = 0;    // of it, leakage while idle
  double edp_pj_s = 0;             // energy per token (pJ) x step time (s)
  std::string how;                 // how the side reaches this point
};

struct Comparison {
  int64_t context = 0, sequences = 1;
  cmodel::energy::NodePoint at;  // the comparison node and supply
  bool idle_leaks = false;
  SidePoint best_cim, best_conventional;
  std::string equal_set_by;  // "cim" or "conventional": the slower side, whose tokens/s both run at
  double equal_tokens_per_s = 0;
  SidePoint equal_cim, equal_conventional;
  // iso-area: the conventional chip of the CIM chip's area, at its best; nullopt with the reason
  std::optional<double> iso_area_conventional_pj;
  std::string iso_area_why_not;
  // conventional / CIM
  double best_energy_ratio() const;
  double best_edp_ratio() const;
  double equal_energy_ratio() const;
  std::optional<double> iso_area_ratio() const;
};

// The comparison at p.context for p.policy.sequences sequences. `iso_area_pj`: the iso-area
// conventional energy per token when the caller has it (the run averages it over its positions);
// otherwise computed at p.context.
Comparison compare(const Placement& p, std::optional<double> iso_area_pj = std::nullopt);

// Empty when CIM and the conventional chip of the CIM chip's area hold the same data at the
// placement's context; otherwise why not.
std::string iso_area_why_not(const Placement& p);

nlohmann::json to_json(const Comparison& c);
// Back from the JSON (a saved report's HTML page); throws kvcim::Error naming a missing or
// mistyped key.
Comparison comparison_from_json(const nlohmann::json& j);
// Terminal lines (no trailing newlines).
std::vector<std::string> comparison_lines(const Comparison& c);

// The headline table: a sized chip (--fit) of `hw` for `shape` at every batch x context, one
// markdown table (what `kvcim compare` prints and the README shows).
std::string headline_markdown(const ModelShape& shape, const HardwareSpec& hw,
                              const std::vector<int64_t>& batches, const std::vector<int64_t>& contexts);

}  // namespace kvcim::mapper
