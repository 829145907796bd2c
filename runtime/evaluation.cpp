#include "kvcim/runtime/evaluation.hpp"

#include <algorithm>
#include <cmath>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/runtime/accuracy.hpp"

namespace kvcim::runtime {

using namespace kvcim::cmodel;

namespace {

// Positions per batched pass: each matrix's weights are read once for this many tokens.
constexpr int kChunk = 128;
// Positions whose logits (reference and CIM) are held at once: the classifier runs on this many
// rows of the chunk at a time and they are scored and dropped before the next (a chunk's logits,
// 2 x 128 x 32,000 floats, were a third of the 15M shape's evaluation beside its macros).
constexpr int kLogitRows = 32;

// Scores of one sequence: a float reference and `cim` fed the same tokens on fresh caches.
struct SequenceScores {
  std::vector<double> nll_reference, nll_cim, kl, top1_agree;
};

// Scores rows [0, m) of a classifier block (positions pos0 .. pos0 + m - 1, whose next tokens
// are next[1 .. m]) onto `t`. Each row's log-partitions sum 32,000 exps, as much as the float
// classifier's multiply-adds, so the rows go to both threads (cmodel::parallel_rows), each into
// its own slot, and are appended in order: the figures are those of scoring them one by one.
void score_rows(const Config& c, const float* rows, const float* cim_rows, const int* next, int pos0, int m,
                SequenceScores& t) {
  struct Job {
    const float *rows, *cim_rows;
    const int* next;
    int pos0, vocab;
    std::vector<StepAccuracy> acc;
  } job{rows, cim_rows, next, pos0, c.vocab_size, std::vector<StepAccuracy>(static_cast<size_t>(m))};
  parallel_rows(m, int64_t{m} * c.vocab_size, [](void* ctx, int i0, int i1) {
    Job& j = *static_cast<Job*>(ctx);
    for (int i = i0; i < i1; ++i) {
      const auto at = static_cast<size_t>(i) * static_cast<size_t>(j.vocab);
      const Vector r = Eigen::Map<const Vector>(j.rows + at, j.vocab);
      const Vector q = Eigen::Map<const Vector>(j.cim_rows + at, j.vocab);
      j.acc[static_cast<size_t>(i)] = compare_logits(r, q, j.pos0 + i);
    }
  }, &job, 1);
  for (int i = 0; i < m; ++i) {
    const StepAccuracy& a = job.acc[static_cast<size_t>(i)];
    const auto at = static_cast<size_t>(i) * static_cast<size_t>(c.vocab_size) + static_cast<size_t>(next[i + 1]);
    // log_prob(x, token) = x[token] - log-partition(x); compare_logits summed the partitions
    t.nll_reference.push_back(-(double(rows[at]) - a.log_z_reference));
    t.nll_cim.push_back(-(double(cim_rows[at]) - a.log_z_test));
    t.kl.push_back(a.kl);
    t.top1_agree.push_back(a.top1_agree ? 1.0 : 0.0);
  }
}

SequenceScores score_sequence(const Config& c, const Weights& w, SessionBackend& cim, ReferenceBackend& ref,
                              const std::vector<int>& ids, uint64_t stream) {
  cim.reset();
  cim.set_noise_stream(stream);
  ref.cache().reset();
  SequenceScores t;
  std::vector<float> hidden, cim_hidden, rows, cim_rows;
  const int predicted = static_cast<int>(ids.size()) - 1;
  const auto V = static_cast<size_t>(c.vocab_size), D = static_cast<size_t>(c.dim);
  for (int pos0 = 0; pos0 < predicted; pos0 += kChunk) {
    const int n = std::min(kChunk, predicted - pos0);
    forward_sequence(c, w, ref, ids.data() + pos0, pos0, n, hidden, false);
    forward_sequence(c, w, cim, ids.data() + pos0, pos0, n, cim_hidden, false);
    for (int r0 = 0; r0 < n; r0 += kLogitRows) {
      const int m = std::min(kLogitRows, n - r0);
      rows.resize(m * V);
      cim_rows.resize(m * V);
      ref.linear_batch(0, MatrixKind::classifier, m, hidden.data() + r0 * D, c.dim, rows.data(), c.vocab_size);
      cim.linear_batch(0, MatrixKind::classifier, m, cim_hidden.data() + r0 * D, c.dim, cim_rows.data(), c.vocab_size);
      score_rows(c, rows.data(), cim_rows.data(), ids.data() + pos0 + r0, pos0 + r0, m, t);
    }
  }
  return t;
}

}  // namespace

TokenScores score_corpus(const Config& c, const Weights& w, const std::function<std::unique_ptr<SessionBackend>()>& make_cim,
                         const EvalCorpus& corpus, int /*threads*/, const std::function<void(int, int)>& progress) {
  // One CIM backend and one reference take the sequences in order, each pass over a chunk of
  // positions shared with the GEMV's helper thread (cmodel::parallel_rows). Sequence i's read
  // noise is keyed by its own stream, so its scores depend on it alone.
  const size_t n = corpus.sequences.size();
  const std::unique_ptr<SessionBackend> cim = make_cim();
  ReferenceBackend ref(c, w);
  ref.set_streamed(true);  // blocks of rows of floats at a time beside the macros (Residency::read_only)
  w.release_pages();  // the floats the load checked and the macros' write read: read again by block
  TokenScores t;
  const int total = corpus.predicted_tokens();
  for (size_t i = 0; i < n; ++i) {
    const SequenceScores s = score_sequence(c, w, *cim, ref, corpus.sequences[i].ids, kEvalStreams + i);
    t.sequence_starts.push_back(static_cast<int>(t.kl.size()));
    t.nll_reference.insert(t.nll_reference.end(), s.nll_reference.begin(), s.nll_reference.end());
    t.nll_cim.insert(t.nll_cim.end(), s.nll_cim.begin(), s.nll_cim.end());
    t.kl.insert(t.kl.end(), s.kl.begin(), s.kl.end());
    t.top1_agree.insert(t.top1_agree.end(), s.top1_agree.begin(), s.top1_agree.end());
    if (progress) progress(static_cast<int>(t.kl.size()), total);
  }
  return t;
}

int interval_block_tokens(int sequences, int tokens) {
  if (sequences >= kMinSequencesForIntervals || tokens <= 0) return 0;
  return std::max(1, static_cast<int>(std::ceil(std::cbrt(static_cast<double>(tokens)))));
}

namespace {
// The statistics of sequences [first, last) of `t`.
EvalStatistics statistics(const TokenScores& t, size_t first, size_t last, const BootstrapOptions& b) {
  const auto begin = static_cast<size_t>(t.sequence_starts[first]);
  const size_t end = last < t.sequence_starts.size() ? static_cast<size_t>(t.sequence_starts[last]) : t.kl.size();
  auto part = [&](const std::vector<double>& v) {
    return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end));
  };
  const int tokens = static_cast<int>(end - begin);
  const int sequences = static_cast<int>(last - first);
  // The clusters resampled: the sequences, or blocks of them when there are too few to show the
  // spread between sequences (interval_block_tokens).
  const int block = interval_block_tokens(sequences, tokens);
  std::vector<int> starts;
  for (size_t i = first; i < last; ++i) {
    const int s0 = t.sequence_starts[i] - static_cast<int>(begin);
    const int s1 = i + 1 < last ? t.sequence_starts[i + 1] - static_cast<int>(begin) : tokens;
    for (int s = s0; s < s1; s += block > 0 ? block : s1 - s0) starts.push_back(s);
  }
  std::vector<double> delta(end - begin);
  for (size_t i = 0; i < delta.size(); ++i) delta[i] = t.nll_cim[begin + i] - t.nll_reference[begin + i];
  const std::vector<Interval> m = cluster_bootstrap_means(
      {part(t.kl), part(t.top1_agree), part(t.nll_reference), part(t.nll_cim), delta}, starts, b);
  EvalStatistics e;
  e.tokens = tokens;
  e.sequences = sequences;
  e.interval_block_tokens = block;
  e.kl_mean = m[0];
  e.top1_agreement = m[1];
  e.nll_reference = m[2];
  e.nll_cim = m[3];
  e.delta_nll = m[4];
  auto exp_of = [](const Interval& i) { return Interval{std::exp(i.value), std::exp(i.low), std::exp(i.high)}; };
  e.perplexity_reference = exp_of(e.nll_reference);
  e.perplexity_cim = exp_of(e.nll_cim);
  return e;
}
}  // namespace

Evaluation summarize_scores(TokenScores t, const BootstrapOptions& b, int sampled_sequences) {
  const size_t n = t.sequence_starts.size();
  const size_t sampled = sampled_sequences < 0 ? n : std::min(n, static_cast<size_t>(sampled_sequences));
  Evaluation e;
  if (sampled > 0) static_cast<EvalStatistics&>(e) = statistics(t, 0, sampled, b);
  if (sampled < n) e.text = statistics(t, sampled, n, b);
  e.all_tokens = static_cast<int>(t.kl.size());
  e.all_sequences = static_cast<int>(n);
  e.text_tokens = e.text ? e.text->tokens : 0;
  e.bootstrap = b;
  e.scores = std::move(t);
  return e;
}

}  // namespace kvcim::runtime
