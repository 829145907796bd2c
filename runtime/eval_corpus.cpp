#include "kvcim/runtime/eval_corpus.hpp"

#include <algorithm>
#include <exception>
#include <memory>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/cmodel/sampler.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/error.hpp"

namespace kvcim::runtime {

using namespace kvcim::cmodel;

const std::vector<std::string>& default_eval_prompts() {
  static const std::vector<std::string> prompts{
      "Once upon a time", "One day", "Lily and Tom", "The little dog", "Tim wanted to",
      "There was a big tree", "Mom said", "The sun was shining"};
  return prompts;
}

int EvalCorpus::predicted_tokens() const {
  int n = 0;
  for (const EvalSequence& s : sequences) n += static_cast<int>(s.ids.size()) - 1;
  return n;
}

namespace {

// Sequences sampled side by side at most; a new one starts when the youngest has gone a
// 1 / kSideBySide of the length, so that their KV caches, growing with their positions, are
// staggered (four full caches of the 110M shape are 302 MB beside its 438 MB of weights).
constexpr int kSideBySide = 4;
// The default memory of the sampling's KV caches together: 40% of the weights' floats (a float
// decode holds the weights and one cache, so the sampling peaks below 1.5 x that), and at least
// 8 MB (a small model's caches cost less than the process itself).
constexpr double kSamplingMemoryShare = 0.4;
constexpr double kSamplingMemoryFloor = 8e6;

// The sampler seed of sequence i: splitmix64 of (seed, i), never 0 (run.c's xorshift would stick).
uint64_t sequence_seed(uint64_t seed, int i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) | 1;
}

// A sequence being sampled: its tokens so far, its sampler and the cache it decodes on.
struct Stream {
  int index = 0;
  EvalSequence seq;
  Sampler sampler;
  ReferenceBackend* ref = nullptr;
  int pos = 0;  // positions fed so far (= KV positions its cache holds)
};

// The most KV positions the streams at `pos` hold together from now on, each growing by one a
// pass up to `last` positions and giving its cache back after it.
int64_t worst_positions(const std::vector<int>& pos, int last) {
  int64_t most = 0;
  for (int p : pos) {
    const int tau = last - p;  // passes until stream p holds `last` positions
    int64_t held = 0;
    for (int q : pos)
      if (q + tau <= last) held += q + tau;
    most = std::max(most, held);
  }
  return most;
}

// The next token of each stream `sampled` marks, from its row of `logits`. Each stream's sampler
// (a softmax over the vocabulary) draws from its own state only, so the streams go to both threads
// (cmodel::parallel_rows) and the tokens are those of drawing them one by one; the first failure
// in stream order (non-finite logits) is the one thrown, as drawing in order would.
std::vector<int> sample_streams(std::vector<Stream>& live, const std::vector<char>& sampled,
                                const std::vector<float>& logits, int vocab) {
  struct Job {
    std::vector<Stream>& live;
    const std::vector<char>& sampled;
    const float* logits;
    int vocab;
    std::vector<int> next;
    std::vector<std::exception_ptr> failed;
  } job{live, sampled, logits.data(), vocab, std::vector<int>(live.size(), -1), std::vector<std::exception_ptr>(live.size())};
  int64_t elements = 0;
  for (char d : sampled) elements += d ? vocab : 0;
  parallel_rows(static_cast<int>(live.size()), elements, [](void* ctx, int a0, int a1) {
    Job& j = *static_cast<Job*>(ctx);
    for (int a = a0; a < a1; ++a) {
      if (!j.sampled[static_cast<size_t>(a)]) continue;
      try {
        const Vector row = Eigen::Map<const Vector>(j.logits + static_cast<size_t>(a) * static_cast<size_t>(j.vocab), j.vocab);
        j.next[static_cast<size_t>(a)] = j.live[static_cast<size_t>(a)].sampler.sample(row);
      } catch (...) {
        j.failed[static_cast<size_t>(a)] = std::current_exception();
      }
    }
  }, &job, 1);
  for (const std::exception_ptr& e : job.failed)
    if (e) std::rethrow_exception(e);
  return job.next;
}

// Sequences 0, 1, ... sampled from the reference (prompt i % prompts, temperature 1, no
// nucleus, until BOS or `length` positions), up to kSideBySide of them side by side, one position
// of each a pass (cmodel::forward_streams: each matrix read once a pass for all of them; each
// one's floats those of sampling it alone, so the tokens are those of sampling the sequences one
// after another). A sequence starts when one is needed (the tokens of those before it may not
// reach `tokens`), the youngest has gone length / kSideBySide positions and the caches would
// never hold more than `budget_positions` together; a sequence stops early once its tokens reach
// what is left for it (the rest would be cut). Returns the sequences in order.
std::vector<EvalSequence> sample_sequences(const Checkpoint& ck, const Tokenizer& tok,
                                           const std::vector<std::vector<int>>& prompts, uint64_t seed, int tokens,
                                           int length, int64_t budget_positions, SamplingStats& stats) {
  const Config& c = ck.config;
  const int last = length - 1;  // positions a whole sequence feeds
  const int gap = (length + kSideBySide - 1) / kSideBySide;
  std::vector<EvalSequence> out;
  std::vector<int> known;  // predicted tokens of sequence i so far (its final count once it stopped)
  auto left_for = [&](int i) {  // the most tokens sequence i can add to the corpus
    int64_t before = 0;
    for (int j = 0; j < i; ++j) before += known[static_cast<size_t>(j)];
    return tokens - before;
  };
  std::vector<std::unique_ptr<ReferenceBackend>> slots;
  std::vector<ReferenceBackend*> free_slots;
  std::vector<Stream> live;
  std::vector<float> logits;
  for (;;) {
    // start sequences while the memory and the stagger allow
    for (;;) {
      const int i = static_cast<int>(out.size());
      if (static_cast<int>(live.size()) >= kSideBySide || left_for(i) <= 0) break;
      if (!live.empty()) {
        std::vector<int> pos{0};
        int youngest = last;
        for (const Stream& s : live) pos.push_back(s.pos), youngest = std::min(youngest, s.pos);
        if (youngest < gap || worst_positions(pos, last) > budget_positions) break;
      }
      if (free_slots.empty()) {
        slots.push_back(std::make_unique<ReferenceBackend>(c, ck.weights));
        free_slots.push_back(slots.back().get());
      }
      Stream s{i, EvalSequence{}, Sampler(1.0f, 1.0f, sequence_seed(seed, i)), free_slots.back(), 0};
      free_slots.pop_back();
      s.seq.prompt = i % static_cast<int>(prompts.size());
      s.seq.ids = prompts[static_cast<size_t>(s.seq.prompt)];
      out.emplace_back();
      known.push_back(static_cast<int>(s.seq.ids.size()) - 1);
      live.push_back(std::move(s));
    }
    if (live.empty()) break;
    std::vector<int> ids, pos;
    std::vector<Backend*> streams;
    for (const Stream& s : live) {
      ids.push_back(s.seq.ids[static_cast<size_t>(s.pos)]);
      pos.push_back(s.pos);
      streams.push_back(s.ref);
    }
    forward_streams(c, ck.weights, streams, ids.data(), pos.data(), logits);
    ++stats.passes;
    int64_t held = 0;
    std::vector<char> sampled(live.size(), 0);
    for (size_t a = 0; a < live.size(); ++a) {
      Stream& s = live[a];
      held += ++s.pos;
      sampled[a] = s.pos >= static_cast<int>(s.seq.ids.size());  // past its prompt
    }
    const std::vector<int> next = sample_streams(live, sampled, logits, c.vocab_size);
    for (size_t a = 0; a < live.size(); ++a) {
      if (!sampled[a]) continue;
      Stream& s = live[a];
      s.seq.ids.push_back(next[a]);
      known[static_cast<size_t>(s.index)] = static_cast<int>(s.seq.ids.size()) - 1;
    }
    stats.most_positions = std::max(stats.most_positions, held);
    stats.most_streams = std::max(stats.most_streams, static_cast<int>(live.size()));
    // stop those that ended, filled the length or have what is left for them
    std::vector<Stream> still;
    for (size_t a = 0; a < live.size(); ++a) {
      Stream& s = live[a];
      const int n = static_cast<int>(s.seq.ids.size());
      if ((sampled[a] && (tok.ends_text(s.seq.ids.back()) || n >= length)) || n - 1 >= left_for(s.index)) {
        s.ref->cache().release();
        free_slots.push_back(s.ref);
        out[static_cast<size_t>(s.index)] = std::move(s.seq);
      } else {
        still.push_back(std::move(s));
      }
    }
    live = std::move(still);
  }
  return out;
}

}  // namespace

std::vector<std::string> text_paragraphs(const std::string& text) {
  std::vector<std::string> out;
  std::string para, line;
  auto close = [&] {
    if (!para.empty()) out.push_back(std::move(para));
    para.clear();
  };
  size_t i = 0;
  while (i <= text.size()) {
    const size_t end = std::min(text.find('\n', i), text.size());
    line = text.substr(i, end - i);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) {
      close();
    } else {
      if (!para.empty()) para += ' ';
      para += line;
    }
    i = end + 1;
  }
  close();
  return out;
}

namespace {
// The text's sequences: each paragraph from BOS, cut into windows of the model's context (BOS and
// up to seq_len - 1 of its tokens each; a kept token's context is its window's).
std::vector<EvalSequence> text_sequences(const Config& c, const Tokenizer& tok, const std::string& text) {
  std::vector<EvalSequence> out;
  for (const std::string& para : text_paragraphs(text)) {
    const std::vector<int> ids = tok.encode(para, true, false);
    for (size_t first = 1; first < ids.size(); first += static_cast<size_t>(c.seq_len) - 1) {
      EvalSequence s;
      s.ids.push_back(ids[0]);
      const size_t last = std::min(ids.size(), first + static_cast<size_t>(c.seq_len) - 1);
      s.ids.insert(s.ids.end(), ids.begin() + static_cast<std::ptrdiff_t>(first), ids.begin() + static_cast<std::ptrdiff_t>(last));
      out.push_back(std::move(s));
    }
  }
  return out;
}
}  // namespace

EvalCorpus build_eval_corpus(const Checkpoint& ck, const Tokenizer& tok, const EvalCorpusOptions& o) {
  const Config& c = ck.config;
  if (o.tokens < 1) fail("eval", "eval_tokens", std::to_string(o.tokens), "expected at least 1");
  if (o.prompts.empty()) fail("evaluation", "prompts", "none", "expected at least one");
  const int length = o.sequence_length == 0 ? c.seq_len : o.sequence_length;
  if (length < 2 || length > c.seq_len)
    fail("evaluation", "sequence_length", std::to_string(o.sequence_length),
         "expected 2.." + std::to_string(c.seq_len) + " (the model's context), or 0 for all of it");
  std::vector<std::vector<int>> prompts;
  for (const std::string& p : o.prompts) {
    prompts.push_back(tok.encode_prompt(p));
    if (static_cast<int>(prompts.back().size()) >= length)
      fail("evaluation", "prompt", "'" + p + "'", "leaves no room to sample in " + std::to_string(length) + " positions");
  }
  // the text first: its checks come before the sampling's seconds of work
  std::vector<EvalSequence> text;
  if (!o.text.empty()) {
    text = text_sequences(c, tok, o.text);
    if (text.empty()) fail("eval", "eval_text tokens", "0", "expected some text");
  }

  EvalCorpus corpus;
  const double budget = o.sampling_memory > 0 ? static_cast<double>(o.sampling_memory)
                                              : std::max(kSamplingMemoryShare * 4.0 * static_cast<double>(c.parameter_count()),
                                                         kSamplingMemoryFloor);
  const int64_t budget_positions = std::max<int64_t>(
      length - 1, static_cast<int64_t>(budget / static_cast<double>(KvCache::bytes_per_token(c, 4))));
  int left = o.tokens;
  for (EvalSequence& s : sample_sequences(ck, tok, prompts, o.seed, o.tokens, length, budget_positions, corpus.sampling)) {
    if (left <= 0) break;
    if (static_cast<int>(s.ids.size()) - 1 > left) s.ids.resize(static_cast<size_t>(left) + 1);
    left -= static_cast<int>(s.ids.size()) - 1;
    corpus.sequences.push_back(std::move(s));
  }
  corpus.sampled_sequences = static_cast<int>(corpus.sequences.size());
  for (EvalSequence& s : text) {
    corpus.text_tokens += static_cast<int>(s.ids.size()) - 1;
    corpus.sequences.push_back(std::move(s));
  }
  return corpus;
}

}  // namespace kvcim::runtime
