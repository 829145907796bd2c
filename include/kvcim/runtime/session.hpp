// A whole generation on a chosen backend per operation class, with the float reference in
// lock-step as a shadow: the CIM run samples its own tokens; the shadow is fed the same tokens, so
// accuracy is measured at every step; a free-running reference generation gives the reference
// text. A batch of B sequences decodes together, one position per step: the weights stay in
// their macros and every sequence's input streams through them; each sequence has its own KV
// tiles, shadow and reference. Optionally, the teacher-forced evaluation
// (runtime/evaluation.hpp) of the same CIM hardware against the reference on the evaluation
// corpus, with confidence intervals.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/runtime/accuracy.hpp"
#include "kvcim/runtime/evaluation.hpp"
#include "kvcim/runtime/session_backend.hpp"

namespace kvcim::runtime {

struct SessionOptions {
  // The batch: `sequences` sequences, sequence b from prompts[b % prompts.size()] with sampler
  // seed `seed + b`, so that it makes exactly the tokens of a single run with that prompt and
  // seed (the macros' read noise is keyed by the sampler seed and the position, not the batch order).
  std::vector<std::string> prompts{"Once upon a time"};
  int sequences = 1;
  int steps = 64;                // forward passes (positions 0..steps-1), prompt included
  BackendChoice backends;
  float temperature = 0.0f;      // 0 = greedy
  float top_p = 0.9f;
  uint64_t seed = 42;            // sampler seed (of sequence 0)
  // The evaluation: eval_tokens sampled from the reference (eval_seed) plus the evaluation text
  // itself. An empty eval_text skips the evaluation entirely (no perplexity: null in the report).
  std::string eval_text;
  int eval_tokens = kDefaultEvalTokens;
  uint64_t eval_seed = kDefaultEvalSeed;
  BootstrapOptions bootstrap;
  // At most this many threads (1 or 2): with 2, the float shadows run beside the CIM pass and
  // GEMVs and macro blocks are split by rows (same results either way).
  int threads = 2;
  // Called after every forward pass of the generation: (positions done, positions in all).
  std::function<void(int, int)> progress;
  // Called after every sequence of the evaluation: (tokens scored, tokens in all).
  std::function<void(int, int)> eval_progress;
};

// What one sequence of the batch made.
struct SequenceResult {
  std::string prompt;
  uint64_t seed = 0;                  // its sampler's
  std::vector<int> tokens;            // ids the CIM run fed, prompt included
  std::vector<int> reference_tokens;  // ids the free-running reference fed
  std::string text, reference_text;   // as run.c would print them
  int prompt_tokens = 0;
  std::vector<StepAccuracy> steps;    // one per forward pass
  AccuracySummary accuracy;
};

// The whole run: its own fields are sequence 0's (a single run's), except `accuracy`, which is
// over every step of every sequence; `sequences` holds all of them.
struct GenerationResult : SequenceResult {
  std::vector<SequenceResult> sequences;
  // sequences still decoding at each position (a sequence ends at BOS, as run.c's story does)
  std::vector<int> active;
  std::optional<Evaluation> evaluation;  // empty when eval_text is empty
  std::vector<std::string> eval_prompts;  // the prompts of the evaluation's sampled sequences
  // The CIM chip's events: what was simulated on CIM, plus its periphery for those operations and
  // the shared ones (embedding, norms, residuals), plus the conventional engine's events for
  // every operation that ran on a reference backend.
  cmodel::energy::Ledger ledger;
  cmodel::energy::Ledger simulated;     // the part of `ledger` that was simulated on CIM
  cmodel::energy::Ledger conventional;  // the conventional baseline doing the same passes
  cmodel::energy::Ledger load_ledger;   // writing the weights into macros, once
  int forward_passes = 0;             // of every sequence
  int tiles_used = 0;
  double seconds = 0.0;
};

// What the session needs of the hardware: the macro, where each matrix lives (the placement),
// how to build attention tiles (C model or RTL), and the events it does not simulate.
struct SessionHardware {
  cmodel::cim::MacroSpec macro;
  BlockSource blocks;
  TileFactory tiles;
  bool k_per_channel = false;  // kv.k_scale: channel (CimAttention)
  KvWindow kv_window;          // overflow=window: the tiles each stream keeps (CimAttention)
  double token_interval_ns = 0;  // between two positions (the tiles' retention); 0: no time passes
  // The conventional baseline's events of a step at a position of `sequences` sequences (weights
  // fetched once for all of them).
  std::function<cmodel::energy::Ledger(int pos, int sequences)> conventional;
  // The CIM chip's events of such a step that are not simulated (buffers, norms, embedding,
  // off-chip weight blocks and KV pages, leakage over the step): the mapper's analytic periphery.
  // Empty: none.
  std::function<cmodel::energy::Ledger(int pos, int sequences)> periphery;
};

// Runs the session: `options.sequences` sequences (the placement behind `hardware` must hold
// their KV tiles).
GenerationResult run_generation(const cmodel::Checkpoint& checkpoint,
                                const cmodel::Tokenizer& tokenizer, const SessionOptions& options,
                                const SessionHardware& hardware);

// Adds to `to` every count of `from` whose operation `keep` accepts.
void add_ops(cmodel::energy::Ledger& to, const cmodel::energy::Ledger& from,
             const std::function<bool(cmodel::energy::Op)>& keep);
// Whether `op` ran on CIM under `choice` (the rest is costed as the conventional engine does it).
bool on_cim(cmodel::energy::Op op, const BackendChoice& choice);

}  // namespace kvcim::runtime
