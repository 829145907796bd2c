// Analytic figures of a placement: events per generated token (hence energy and latency, for CIM
// and for the conventional baseline), capacity, utilisation, fragmentation, write traffic and
// endurance. Closed forms, no simulation; tests hold them to the allocator and the C models.
#pragma once
#include <cstdint>
#include <optional>

#include "kvcim/cmodel/energy/baseline.hpp"
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
  // Die-to-die links drawing their idle power over the step (the chip's links under --idle
  // leaking, 0 when gated): a step's leakage is re-charged over the step's time with them.
  int64_t leaking_links = 0;
  cmodel::energy::Ledger total() const;
};

struct LatencyBound;

// per_layer = false charges every layer's events to layer 0 (same totals, a one-layer ledger:
// what design-space sweeps need). The leakage is charged over cim_latency(...) of the same
// arguments; a caller that has it already passes it as `latency`.
TokenLedgers token_ledgers(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                           const WeightPlacement& weights, const KvLayout& kv, int64_t context,
                           bool per_layer = true, const LatencyBound* latency = nullptr);
TokenLedgers token_ledgers(const Placement& p);  // at p.context
// The sum over contexts 1..steps: a whole generation of `steps` tokens from an empty cache.
TokenLedgers generation_ledgers(const Placement& p, int64_t steps);

// Lower bound on the time of one token of sequence 0 (a roofline with the dependency chain):
//  - the critical path: layers and their stages run one after another (q/k/v, o, w1/w3, w2,
//    attention, elementwise); within a stage the macros of its matrices run in parallel (the
//    slowest macro sets the pace), while the stage's digital work (off-chip weight blocks,
//    attention over spilled tokens, norms and softmax) shares the `digital.units` lanes (summed);
//    a stage takes the longer of the two. Pages of a stream sit in different tiles and answer in
//    parallel; the query heads of a GQA group share their tiles and take turns.
//  - off-chip traffic: every bit the token moves off-chip (weight blocks not in CIM, the
//    embedding row, spilled K/V read, K/V written off-chip) crosses one shared interface
//    (offchip bit time of the technology table), sequentially; it may overlap the computation.
// The token takes at least the longer of the two.
enum class Bound : uint8_t { compute, onchip_cycles, offchip_bytes };
const char* name(Bound b);

struct LatencyBound {
  // the critical path, by stage kind
  double weights_ns = 0, kv_write_ns = 0, attention_ns = 0, digital_ns = 0;
  // of the critical path: time set by macro and tile cycles (the rest by the digital lanes)
  double macro_ns = 0;
  double offchip_bits = 0, offchip_ns = 0;  // the token's off-chip traffic and its time
  // For a step of a batch (batch.hpp): of the off-chip bits, the weight blocks not in CIM (read
  // once per step for every sequence); the slowest weight stage's macro time (the interval at
  // which sequences follow each other through the stationary weights); the time of all the
  // token's work on the shared digital lanes.
  double offchip_weight_bits = 0, slowest_macro_stage_ns = 0, lanes_ns = 0;
  // die-to-die links on the token's path (dies.hpp): each crossing's latency and transfer time
  double link_ns = 0;
  double critical_path_ns() const { return weights_ns + kv_write_ns + attention_ns + digital_ns + link_ns; }
  double total_ns() const;
  // offchip_bytes when the traffic is the longer, else onchip_cycles when macro cycles make up
  // most of the critical path, else compute (the digital lanes)
  Bound bound() const;
};
LatencyBound cim_latency(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                         const WeightPlacement& weights, const KvLayout& kv, int64_t context);

struct Figures {
  int64_t context = 0;
  int64_t sequences = 1;  // decoding together (policy.sequences): one step makes one token of each
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
  LatencyBound latency;  // of one token of sequence 0, alone
  // A token's latency: the step that makes it (with one sequence, the token's bound).
  double latency_ns_cim = 0, latency_ns_conventional = 0;
  Bound bound_cim = Bound::compute, bound_conventional = Bound::compute;  // what limits a step
  // Per token: a step's energy over its sequences (weights fetched once per step).
  double energy_pj_cim = 0, energy_pj_conventional = 0;
  double tokens_per_s_cim = 0, tokens_per_s_conventional = 0;
  // Of a step's energy: what it reads once for all its sequences (batch.hpp).
  double shared_pj_cim = 0, shared_pj_conventional = 0;
};

// The conventional baseline's figures for a context and batch (independent of the CIM design):
// per token, a step of `sequences` sequences (batch.hpp).
struct BaselineFigures {
  double energy_pj = 0, latency_ns = 0;  // per token; the step's latency
  Bound bound = Bound::compute;
  double tokens_per_s = 0, shared_pj = 0;
};
// The conventional engine's roofline (cmodel/energy/baseline.hpp) classified: off-chip bytes,
// on-chip SRAM/buffer cycles, or MAC compute.
Bound baseline_bound(const cmodel::energy::LatencyBound& b);
BaselineFigures baseline_figures(const ModelShape& shape, const HardwareSpec& hw, int64_t context,
                                 int64_t sequences = 1);

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
