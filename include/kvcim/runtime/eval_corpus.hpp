// The evaluation corpus of the accuracy measurement: sequences sampled from the float reference
// model at temperature 1 (plain multinomial sampling, no nucleus) from fixed prompts, each with
// its own seed, plus a shipped evaluation text as one more sequence. A pure function of
// (checkpoint, tokenizer, options): every run, on every spec and thread count, sees the same
// tokens, so two specs' statistics are paired token by token.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/tokenizer.hpp"

namespace kvcim::runtime {

// Predicted tokens sampled by default: >= 10,000 so that differences of a few thousandths of a
// nat per token are resolved; `kvcim run` evaluates them in a few seconds (docs/accuracy.md).
inline constexpr int kDefaultEvalTokens = 10000;
inline constexpr uint64_t kDefaultEvalSeed = 1;

// TinyStories openings (stories260K is a TinyStories model), taken in turn by the sequences.
const std::vector<std::string>& default_eval_prompts();

struct EvalCorpusOptions {
  int tokens = kDefaultEvalTokens;  // predicted tokens of the sampled sequences, exactly
  uint64_t seed = kDefaultEvalSeed;  // sequence i samples with a seed derived from (seed, i)
  std::vector<std::string> prompts = default_eval_prompts();
  int sequence_length = 0;  // positions per sampled sequence, BOS included (0: the model's seq_len)
  std::string text;         // appended as the last sequence (empty: none)
};

struct EvalSequence {
  int prompt = -1;       // index into the prompts; -1: the evaluation text
  std::vector<int> ids;  // BOS first; ids[1..] are the predicted tokens
};

struct EvalCorpus {
  std::vector<EvalSequence> sequences;
  int predicted_tokens() const;  // sum over sequences of ids.size() - 1
  int text_tokens = 0;           // of those, the evaluation text's
};

// Sequence i: BOS, prompts[i % P], then tokens sampled from the reference until it samples BOS
// (the story ends; that BOS is kept as the last target) or the sequence is `sequence_length`
// long; the last sampled sequence is cut so that the sampled sequences predict exactly `tokens`.
// Throws kvcim::Error naming the option (tokens < 1, no prompts, a prompt or text that does not
// fit the model's context, sequence_length out of range).
EvalCorpus build_eval_corpus(const cmodel::Checkpoint& checkpoint, const cmodel::Tokenizer& tokenizer,
                             const EvalCorpusOptions& options);

}  // namespace kvcim::runtime
