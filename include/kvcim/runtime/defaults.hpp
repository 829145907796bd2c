// The defaults of `kvcim run` / `kvcim cosim` and of their Python twins kvcim.run() / kvcim.cosim(),
// in one place: the CLI's options start from these values and the Python signatures read them
// (kvcim._core.defaults()), so the two cannot drift apart. A test runs both with no options and
// compares the settings the reports record.
#pragma once
#include <cstdint>

#include "kvcim/runtime/eval_corpus.hpp"

namespace kvcim::runtime {

struct RunDefaults {
  static constexpr const char* prompt = "Once upon a time";
  static constexpr int steps = 64;                 // forward passes, prompt included
  static constexpr uint64_t seed = 42;             // sampler seed
  static constexpr float temperature = 0.0f;       // greedy
  static constexpr float top_p = 0.9f;             // nucleus sampling threshold
  static constexpr int threads = 2;                // threads the run uses at most
  static constexpr int eval_tokens = kDefaultEvalTokens;
  static constexpr const char* backend = "cim";    // linear and attention
  // The evaluation text is the shipped one, default_eval_text_path() (found at run time).
};

}  // namespace kvcim::runtime
