// One decode step of a batch: `sequences` sequences (policy.sequences) each generate one token,
// every sequence at the same context, as AttAcc, NeuPIMs and CENT report LLM decode.
//
// What a step reads once for all its sequences (shared): the weights fetched from memory — on
// the conventional engine every weight bit read from its SRAM banks (and its wires) or from
// off-chip, on the CIM chip the weight blocks that did not fit, fetched from off-chip. The CIM
// chip's stationary weights are not read at all: the inputs of every sequence stream through the
// same macros, so their operations are per sequence. Everything else is per sequence: MACs and
// macro operations, each sequence's own KV cache (reads, writes, spilled pages), buffers, norms,
// the embedding row. Leakage is paid for as long as the step takes.
//
// Step time, a bound as LatencyBound is:
//  - conventional: the baseline's roofline over the step's events (shared once, the rest B times);
//  - CIM: the sequences follow each other through the stationary weights, one slowest weight
//    stage apart (a pipeline; with replicas, ceil(B / replicas) sequences per copy), each
//    sequence's attention on its own KV pages; at least B times the token's work on the shared
//    digital lanes; at least the step's off-chip bits (the weight blocks once, the rest B times)
//    over the one interface.
// With one sequence every figure equals the single token's (test).
#pragma once
#include <cstdint>

#include "kvcim/cmodel/energy/ledger.hpp"
#include "kvcim/mapper/analysis.hpp"

namespace kvcim::mapper {

struct StepFigures {
  int64_t sequences = 1;
  double step_ns = 0;             // one step: a token of every sequence
  double tokens_per_s = 0;        // sequences / step
  double energy_pj_per_token = 0; // the step's energy / sequences
  double shared_pj = 0;           // of the step's energy: read once for all sequences
  Bound bound = Bound::compute;   // what limits the step
};

// The events of a token's ledger that a step shares across its sequences (the weight fetches,
// see above); `conventional` selects the conventional engine's kinds (SRAM bits, their wires and
// off-chip bits) or the CIM chip's (off-chip bits only).
cmodel::energy::Ledger shared_part(const cmodel::energy::Ledger& token, bool conventional);

// The conventional engine's step at `context` (the new token included).
StepFigures conventional_step(const ModelShape& shape, const HardwareSpec& hw, int64_t context,
                              int64_t sequences);
// Its events: the shared part once, the rest `sequences` times, leakage over the step's time.
// Costed and divided by `sequences`, conventional_step's energy per token; with one sequence,
// conventional_ledger at context - 1. What `kvcim run` charges a step of a batch.
cmodel::energy::Ledger conventional_step_ledger(const ModelShape& shape, const HardwareSpec& hw,
                                                int64_t context, int64_t sequences);

// The CIM chip's step from one token's ledgers (t.periphery holds its leakage over
// `token.total_ns()`, as token_ledgers charges it) and the token's latency bound.
StepFigures cim_step(const TokenLedgers& t, const LatencyBound& token, const HardwareSpec& hw,
                     const Policy& policy);
// The CIM chip's periphery of a step of `sequences` sequences (at most policy.sequences, those
// still decoding) from one token's: its shared part (weight blocks fetched from off-chip) once,
// the rest per sequence, leakage over the step's time instead of the token's. With one sequence,
// t.periphery itself. The macros' own events (t.cim) are per sequence: the runtime simulates them.
cmodel::energy::Ledger cim_step_periphery(const TokenLedgers& t, const LatencyBound& token,
                                          const HardwareSpec& hw, const Policy& policy,
                                          int64_t sequences);

}  // namespace kvcim::mapper
