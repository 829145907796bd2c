// A placement cut into dies (the spec's `die` and `link` sections, package.hpp), and what the
// token moves between them. docs/mapper.md, "Dies", gives the rules and their assumptions.
//
// Partition. The token's path is a sequence of items, per layer q, k, v, the layer's KV cache
// (its attention tiles), o, w1, w3, w2, then the classifier, then any macros the spec built that
// hold nothing. An item's size is its macros (a matrix's on-chip blocks over every replica; the
// KV macros spread evenly over the layers) at their area, the KV macros with their tiles' logic;
// the buffer and digital lanes are spread over the dies in proportion to that area, so that the
// dies add up to the chip's area (chip.hpp). Dies are filled in the token's order (layers
// pipelined across dies): a layer goes whole onto the current die if it fits, else whole onto a
// new die if it fits on one; a layer no die holds is split, item by item by the same rule, and an
// item no die holds is poured over as many dies as it needs, block by block (KV: by stream).
//
// Crossings. Every die boundary is one link on the token's path, carrying per token the
// activations produced before it and consumed after it (the live set): between layers the hidden
// state (dim x activation_bits); inside a layer also what the layer has made so far (q, k, v at
// activation and K/V bits; the attention output; w1's output; the gated hidden vector), and inside
// a matrix the partial sums of the columns its blocks before the cut have touched
// (kAccumulatorBits each); inside the KV cache the inputs of the streams after the cut and the
// outputs of those before it. Each crossing costs link.energy_pj_per_bit per bit and
// link.latency_ns + bits / link.bandwidth_gb_s of the token's critical path.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/mapper/placement.hpp"

namespace kvcim::mapper {

// The items of a layer in the token's order; the last "layer" (index n_layers) holds the
// classifier (item 0) and the macros built but holding nothing (item 1).
enum class DieItem : uint8_t { q, k, v, kv, o, w1, w3, w2 };
inline constexpr int kDieItems = 8;
const char* name(DieItem item);

struct Die {
  int64_t weight_macros = 0, kv_macros = 0, spare_macros = 0;
  double area_mm2 = 0;  // its macros, its tiles' logic and its share of the buffer and lanes
  int first_layer = -1, last_layer = -1;  // layers with macros on it (n_layers: the classifier)
  int64_t macros() const { return weight_macros + kv_macros + spare_macros; }
};

// A die boundary on the token's path.
struct DieCut {
  int layer = 0;              // n_layers: the classifier
  int item = 0;               // DieItem (classifier: 0)
  int64_t units_before = 0;   // of the item's macros, those on the dies before the cut
  double bits_per_token = 0;  // what crosses, per token (a step's over its sequences)
};

struct DiePlan {
  double limit_mm2 = 0;  // die.reticle_mm2, or die.wafer_mm2 when wafer-scale
  bool wafer_scale = false;
  std::vector<Die> dies;
  std::vector<DieCut> cuts;  // in the token's order
  // per layer (and the classifier's, index n_layers): the die holding each item's first macro
  std::vector<std::array<int, kDieItems>> item_die;
  double link_bits_per_token = 0;   // every cut's bits
  double link_latency_ns = 0;       // every cut: latency + bits / bandwidth
  double link_energy_pj = 0;        // link bits x energy per bit
  // Idle links (with_idle_links): under --idle leaking every link draws link.idle_power_mw for the
  // whole step, apart from the bits it carries; gated, the links sleep between crossings (0).
  int64_t idle_links = 0;
  double link_idle_pj_per_token = 0;  // idle_links x idle power x step time / sequences
};

// Throws kvcim::Error naming die.reticle_mm2 (or die.wafer_mm2) when no die can hold one macro
// with its share of the periphery.
DiePlan plan_dies(const ModelShape& shape, const HardwareSpec& hw, const WeightPlacement& weights,
                  const KvLayout& kv);
DiePlan plan_dies(const Placement& p);
// The plan with its links' idle energy over a step of `step_ns` making a token of each of
// `sequences` sequences: what the energy ledgers charge as link_idle_ns (chip.hpp).
DiePlan with_idle_links(DiePlan plan, const HardwareSpec& hw, double step_ns, int64_t sequences);

// What crosses a boundary before `units_before` of the item's macros (per token); the partition
// uses it for its cuts, tests for their hand counts.
double live_bits_per_token(const ModelShape& shape, const HardwareSpec& hw, const WeightPlacement& weights,
                           const KvLayout& kv, int layer, int item, int64_t units_before);

// The report's `dies` section and the summary's lines (no trailing newline; `indent` before the
// second line).
nlohmann::json to_json(const DiePlan& plan, const HardwareSpec& hw);
std::string dies_summary(const DiePlan& plan, const HardwareSpec& hw, const std::string& indent = "");

}  // namespace kvcim::mapper
