// Analytic figures of a placement: events per generated token (hence energy and latency, for CIM
// and for the conventional baseline), capacity, utilisation, fragmentation, write traffic and
// endurance. Closed forms, no simulation; tests hold them to the allocator and the C models.
#pragma once
#include <cstdint>
#include <optional>

#include "kvcim/cmodel/energy/ledger.hpp"
#include "kvcim/mapper/placement.hpp"

namespace kvcim::mapper {

// Events of sequence 0 generating one token with `context` tokens in its cache (the new one
// included), every sequence at the same length.
struct TokenLedgers {
  // Work on CIM macros and attention tiles, charged exactly as the runtime charges what it
  // simulates (cmodel/energy/cim_charges.hpp): on the embedded model the runtime's ledger must
  // equal the sum of these over the generated positions.
  cmodel::energy::Ledger cim;
  // What the runtime does not simulate: buffer traffic, norms/RoPE/SwiGLU/residuals, the
  // embedding row, weights that did not fit and spilled KV pages (computed digitally, fetched
  // from off-chip), spill traffic.
  cmodel::energy::Ledger periphery;
  cmodel::energy::Ledger total() const;
};

// per_layer = false charges every layer's events to layer 0 (same totals, a one-layer ledger:
// what design-space sweeps need).
TokenLedgers token_ledgers(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                           const WeightPlacement& weights, const KvLayout& kv, int64_t context,
                           bool per_layer = true);
TokenLedgers token_ledgers(const Placement& p);  // at p.context
// The sum over contexts 1..steps: a whole generation of `steps` tokens from an empty cache.
TokenLedgers generation_ledgers(const Placement& p, int64_t steps);

// Lower bound on the time of one token, from the macro latencies: the macros of a matrix run in
// parallel, q/k/v (and w1/w3) run in parallel, layers and stages run one after another; pages of
// a stream sit in different tiles and answer in parallel, the query heads of a GQA group share
// their tiles and take turns; digital work runs on `digital.units` lanes; off-chip traffic at
// the off-chip bit latency.
struct LatencyBound {
  double weights_ns = 0, kv_write_ns = 0, attention_ns = 0, digital_ns = 0;
  double total_ns() const { return weights_ns + kv_write_ns + attention_ns + digital_ns; }
};
LatencyBound cim_latency(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                         const WeightPlacement& weights, const KvLayout& kv, int64_t context);

struct Figures {
  int64_t context = 0;
  int64_t macros_total = 0, weight_macros = 0, kv_macros_reserved = 0, kv_macros_used = 0;
  int64_t macros_used = 0;
  int64_t kv_tiles = 0, kv_slots = 0, kv_pages_in_use = 0;
  double utilization = 0;    // data cells / cells of the macros used
  double fragmentation = 0;  // allocated (weight macros, KV pages) but unused cells / allocated
  double occupancy = 0;      // macros used / macros on the chip
  int64_t weight_blocks_offchip = 0;
  double weights_onchip_fraction = 0;  // weight elements in CIM / all (all replicas)
  int64_t max_context_tokens = 0;      // per sequence, every sequence's KV entirely in CIM
  int64_t kv_cell_writes_per_token = 0;  // CIM cell (bit) writes of one generated token
  // Non-volatile KV cells: writes a cell survives; tokens generated (sequences of `context`
  // tokens, one after another on the same slots) until the most-written cell reaches it, and the
  // same with ideal wear levelling over every KV slot. Infinite without an endurance limit.
  std::optional<double> endurance_writes;
  double lifetime_tokens = 0, lifetime_tokens_wear_levelled = 0, lifetime_seconds = 0;
  int64_t resident_tokens = 0, offchip_tokens = 0, evicted_tokens = 0;  // sequence 0, all streams
  // Off-chip memory the placement needs: weight blocks not in CIM, the embedding table (looked up
  // from off-chip on every token) and the spilled KV tokens of every sequence.
  int64_t offchip_bytes = 0;
  LatencyBound latency;
  double latency_ns_cim = 0, latency_ns_conventional = 0;
  double energy_pj_cim = 0, energy_pj_conventional = 0;
};

// The conventional baseline's figures for a context (independent of the CIM design).
struct BaselineFigures {
  double energy_pj = 0, latency_ns = 0;
};
BaselineFigures baseline_figures(const ModelShape& shape, const HardwareSpec& hw, int64_t context);

Figures figures(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                const WeightPlacement& weights, const KvLayout& kv, int64_t context,
                const BaselineFigures* baseline = nullptr);
Figures figures(const Placement& p);

// Sum of cim::compute_events over blocks [0, k) of a matrix (closed form over block shapes).
cmodel::cim::MacroEvents blocks_compute_events(const MatrixPlacement& m,
                                               const cmodel::cim::MacroSpec& spec, int64_t k);
// Weight elements in blocks [0, k).
int64_t blocks_elements(const MatrixPlacement& m, const cmodel::cim::MacroSpec& spec, int64_t k);

}  // namespace kvcim::mapper
