// Teacher-forced accuracy of a CIM backend against the float reference on the evaluation corpus:
// both are fed the same tokens on fresh caches per sequence; per predicted token the negative
// log-likelihood of each, KL(reference || CIM) of the next-token distributions and whether the
// argmaxes agree. Statistics over the tokens with 95% cluster-bootstrap intervals (resampling
// sequences, runtime/bootstrap.hpp). The method and its measured cost: docs/accuracy.md.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "kvcim/runtime/bootstrap.hpp"
#include "kvcim/runtime/eval_corpus.hpp"
#include "kvcim/runtime/session_backend.hpp"

namespace kvcim::runtime {

struct TokenScores {
  std::vector<double> nll_reference, nll_cim;  // -log p(token), nats
  std::vector<double> kl;                      // KL(reference || CIM), nats
  std::vector<double> top1_agree;              // 1 or 0 (a double, to be averaged)
  std::vector<int> sequence_starts;            // first token of each sequence
};

// The statistics of a set of sequences: means with their intervals.
struct EvalStatistics {
  int tokens = 0, sequences = 0;
  // 0: the intervals resample whole sequences; else blocks of this many contiguous tokens of each
  // sequence (interval_block_tokens: too few sequences for the spread between them)
  int interval_block_tokens = 0;
  Interval kl_mean, top1_agreement, nll_reference, nll_cim;
  Interval delta_nll;  // mean of nll_cim - nll_reference, paired token by token
  // exp of the NLL means and of their interval ends (percentile intervals follow a monotone map)
  Interval perplexity_reference, perplexity_cim;
};

// The evaluation: the statistics (the base) of the sequences sampled from the reference, where
// KL is the measure (there ΔNLL equals KL in expectation), and apart from them those of the
// human-written text, where ΔNLL and perplexity mean what they say.
struct Evaluation : EvalStatistics {
  int all_tokens = 0, all_sequences = 0, text_tokens = 0;
  TokenScores scores;  // every token: the sampled sequences', then the text's
  BootstrapOptions bootstrap;
  std::optional<EvalStatistics> text;  // none without a text
};

// Fewer sequences than this cannot show the spread between sequences: one sequence gives every
// replicate the same mean, an interval of zero width, and 2 - 3 give the few-cluster bootstrap's
// far too narrow intervals (bootstrap.hpp: the expanded interval needs k >= 4).
constexpr int kMinSequencesForIntervals = 4;

// The block length of the intervals of `tokens` tokens in `sequences` sequences: 0 (whole
// sequences resampled) from kMinSequencesForIntervals sequences on; below, the clusters are
// contiguous blocks of ceil(tokens^(1/3)) tokens of each sequence, the block bootstrap's usual
// length (Hall, Horowitz & Jing 1995: the n^(1/3) rate for variance and interval estimation).
// Blocks keep the correlation between neighbouring tokens but not the correlation across a
// sequence, so such an interval can be too narrow: the summary says when it is used.
int interval_block_tokens(int sequences, int tokens);

// The read-noise streams of the evaluation's sequences: sequence i is kEvalStreams + i
// (SessionBackend::set_noise_stream); the generation's are below (its sampler seeds).
constexpr uint64_t kEvalStreams = uint64_t{1} << (SessionBackend::kStreamBits - 1);

// Scores every sequence of `corpus` on one CIM backend made by `make_cim` (reset before each
// sequence, its noise stream the sequence's; its ledger is dropped) against a float reference,
// both teacher-forced a chunk of positions at a time (cmodel::forward_sequence: each matrix once
// per chunk, the same floats as a position at a time). The passes share the GEMV's helper
// thread when there is one; the results do not depend on it (`threads` is kept for callers).
// `progress(done, total)` after each sequence, in tokens.
TokenScores score_corpus(const cmodel::Config& config, const cmodel::Weights& weights,
                         const std::function<std::unique_ptr<SessionBackend>()>& make_cim,
                         const EvalCorpus& corpus, int threads,
                         const std::function<void(int, int)>& progress = {});

// The statistics of scored tokens: the first `sampled_sequences` sequences (-1: all) and, apart,
// the others (the text's).
Evaluation summarize_scores(TokenScores scores, const BootstrapOptions& bootstrap, int sampled_sequences = -1);

}  // namespace kvcim::runtime
