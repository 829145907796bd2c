// The evaluation corpus of the accuracy measurement: sequences sampled from the float reference
// model at temperature 1 (plain multinomial sampling, no nucleus) from fixed prompts, each with
// its own seed, plus a human-written text (by default the shipped one), paragraph by paragraph. A pure function of
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
  // Bytes the float KV caches of the sequences sampled side by side may hold together (0: 40% of
  // the weights' floats, at least 8 MB; never less than one sequence's). The tokens do not depend
  // on it, only how many sequences are decoded at once.
  int64_t sampling_memory = 0;
  // Human-written text, after the sampled sequences (empty: none): each paragraph (lines up to a
  // blank line, joined by spaces) is a sequence from BOS, cut into windows of the model's context
  // when longer.
  std::string text;
};

struct EvalSequence {
  int prompt = -1;       // index into the prompts; -1: the evaluation text
  std::vector<int> ids;  // BOS first; ids[1..] are the predicted tokens
};

// How the sampled sequences were decoded (the tokens do not depend on it).
struct SamplingStats {
  int64_t passes = 0;          // forward passes, each one position of every sequence in flight
  int most_streams = 0;        // sequences decoded side by side at most
  int64_t most_positions = 0;  // KV positions their caches held together at most
};

struct EvalCorpus {
  std::vector<EvalSequence> sequences;  // the sampled ones, then the text's
  int predicted_tokens() const;  // sum over sequences of ids.size() - 1
  int sampled_sequences = 0;     // the first sequences; the rest are the text's
  int text_tokens = 0;           // predicted tokens of the text's sequences
  SamplingStats sampling;
};

// The paragraphs of a text: its lines up to each blank (or whitespace-only) line, joined by
// spaces.
std::vector<std::string> text_paragraphs(const std::string& text);

// Sequence i: BOS, prompts[i % P], then tokens sampled from the reference until it samples BOS
// (the story ends; that BOS is kept as the last target) or the sequence is `sequence_length`
// long; the last sampled sequence is cut so that the sampled sequences predict exactly `tokens`.
// Then the text's sequences. Throws kvcim::Error naming the option (tokens < 1, no prompts, a
// prompt that does not fit the model's context, a text without tokens, sequence_length out of
// range), before any sampling.
EvalCorpus build_eval_corpus(const cmodel::Checkpoint& checkpoint, const cmodel::Tokenizer& tokenizer,
                             const EvalCorpusOptions& options);

}  // namespace kvcim::runtime
