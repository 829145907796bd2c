#include "kvcim/runtime/evaluation.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <mutex>

#include "kvcim/runtime/accuracy.hpp"

namespace kvcim::runtime {

using namespace kvcim::cmodel;

namespace {

constexpr size_t kLanes = 2;

// Teacher-forced logits of one sequence: row pos = logits after feeding ids[0..pos].
std::vector<Vector> logits_of(const Config& c, const Weights& w, Backend& backend,
                              const std::vector<int>& ids) {
  RunState s(c);
  std::vector<Vector> rows;
  rows.reserve(ids.size() - 1);
  for (size_t pos = 0; pos + 1 < ids.size(); ++pos)
    rows.push_back(forward(c, w, s, backend, ids[pos], static_cast<int>(pos)));
  return rows;
}

// Scores of one sequence: a float reference and `cim` fed the same tokens on fresh caches.
struct SequenceScores {
  std::vector<double> nll_reference, nll_cim, kl, top1_agree;
};

SequenceScores score_sequence(const Config& c, const Weights& w, SessionBackend& cim,
                              ReferenceBackend& ref, const std::vector<int>& ids) {
  cim.reset();
  ref.cache().reset();
  const std::vector<Vector> rows = logits_of(c, w, ref, ids), cim_rows = logits_of(c, w, cim, ids);
  SequenceScores t;
  for (size_t pos = 0; pos < rows.size(); ++pos) {
    const int next = ids[pos + 1];
    const StepAccuracy a = compare_logits(rows[pos], cim_rows[pos], static_cast<int>(pos));
    t.nll_reference.push_back(-log_prob(rows[pos], next));
    t.nll_cim.push_back(-log_prob(cim_rows[pos], next));
    t.kl.push_back(a.kl);
    t.top1_agree.push_back(a.top1_agree ? 1.0 : 0.0);
  }
  return t;
}

}  // namespace

TokenScores score_corpus(const Config& c, const Weights& w, const std::function<std::unique_ptr<SessionBackend>()>& make_cim,
                         const EvalCorpus& corpus, int threads, const std::function<void(int, int)>& progress) {
  // Two lanes, each with its own CIM backend and reference, take the even and the odd sequences.
  // The split is fixed, not by thread: with one thread the lanes run one after the other, so a
  // backend sees the same sequences in the same order (and draws the same read noise) either way.
  const size_t n = corpus.sequences.size();
  std::vector<SequenceScores> scored(n);
  std::atomic<int> done{0};
  const int total = corpus.predicted_tokens();
  std::mutex progress_mutex;
  auto lane = [&](size_t first) {
    const std::unique_ptr<SessionBackend> cim = make_cim();
    ReferenceBackend ref(c, w);
    for (size_t i = first; i < n; i += kLanes) {
      scored[i] = score_sequence(c, w, *cim, ref, corpus.sequences[i].ids);
      const int now = done += static_cast<int>(scored[i].kl.size());
      if (progress) {
        const std::lock_guard<std::mutex> lock(progress_mutex);
        progress(now, total);
      }
    }
  };
  if (threads > 1) {
    std::future<void> second = std::async(std::launch::async, lane, size_t{1});
    lane(0);
    second.get();
  } else {
    for (size_t first = 0; first < kLanes; ++first) lane(first);
  }
  TokenScores t;
  for (const SequenceScores& s : scored) {
    t.sequence_starts.push_back(static_cast<int>(t.kl.size()));
    t.nll_reference.insert(t.nll_reference.end(), s.nll_reference.begin(), s.nll_reference.end());
    t.nll_cim.insert(t.nll_cim.end(), s.nll_cim.begin(), s.nll_cim.end());
    t.kl.insert(t.kl.end(), s.kl.begin(), s.kl.end());
    t.top1_agree.insert(t.top1_agree.end(), s.top1_agree.begin(), s.top1_agree.end());
  }
  return t;
}

namespace {
// The statistics of sequences [first, last) of `t`.
EvalStatistics statistics(const TokenScores& t, size_t first, size_t last, const BootstrapOptions& b) {
  const auto begin = static_cast<size_t>(t.sequence_starts[first]);
  const size_t end = last < t.sequence_starts.size() ? static_cast<size_t>(t.sequence_starts[last]) : t.kl.size();
  auto part = [&](const std::vector<double>& v) {
    return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end));
  };
  std::vector<int> starts;
  for (size_t i = first; i < last; ++i) starts.push_back(t.sequence_starts[i] - static_cast<int>(begin));
  std::vector<double> delta(end - begin);
  for (size_t i = 0; i < delta.size(); ++i) delta[i] = t.nll_cim[begin + i] - t.nll_reference[begin + i];
  const std::vector<Interval> m = cluster_bootstrap_means(
      {part(t.kl), part(t.top1_agree), part(t.nll_reference), part(t.nll_cim), delta}, starts, b);
  EvalStatistics e;
  e.tokens = static_cast<int>(end - begin);
  e.sequences = static_cast<int>(last - first);
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
