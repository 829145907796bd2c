#include "kvcim/runtime/eval_corpus.hpp"

#include <algorithm>
#include <memory>

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

// Sampled sequences decoded side by side: each its own float KV cache (up to the model's context).
constexpr int kSideBySide = 4;

// The sampler seed of sequence i: splitmix64 of (seed, i), never 0 (run.c's xorshift would stick).
uint64_t sequence_seed(uint64_t seed, int i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) | 1;
}

// Sequences first .. first + k - 1 sampled from the reference side by side, one position of all
// at a time (cmodel::forward_streams: each matrix read once per position for all of them, the
// floats of sampling each alone): prompt i % prompts, temperature 1, no nucleus, until BOS or
// `length` positions.
std::vector<EvalSequence> sample_side_by_side(const Checkpoint& ck, const Tokenizer& tok,
                                              const std::vector<std::vector<int>>& prompts, uint64_t seed, int first,
                                              int k, int length) {
  const Config& c = ck.config;
  std::vector<EvalSequence> out(static_cast<size_t>(k));
  std::vector<Sampler> samplers;
  std::vector<std::unique_ptr<ReferenceBackend>> refs;
  for (int j = 0; j < k; ++j) {
    out[j].prompt = (first + j) % static_cast<int>(prompts.size());
    out[j].ids = prompts[static_cast<size_t>(out[j].prompt)];
    samplers.emplace_back(1.0f, 1.0f, sequence_seed(seed, first + j));
    refs.push_back(std::make_unique<ReferenceBackend>(c, ck.weights));
  }
  std::vector<char> done(static_cast<size_t>(k), 0);
  std::vector<float> logits;
  for (int pos = 0;; ++pos) {
    std::vector<int> active, ids;
    std::vector<Backend*> streams;
    for (int j = 0; j < k; ++j)
      if (!done[j]) {
        active.push_back(j);
        ids.push_back(out[j].ids[static_cast<size_t>(pos)]);
        streams.push_back(refs[j].get());
      }
    if (active.empty()) break;
    forward_streams(c, ck.weights, streams, ids.data(), pos, logits);
    for (size_t a = 0; a < active.size(); ++a) {
      EvalSequence& s = out[active[a]];
      if (pos + 1 < static_cast<int>(s.ids.size())) continue;  // still in the prompt
      const Vector row = Eigen::Map<const Vector>(logits.data() + a * static_cast<size_t>(c.vocab_size), c.vocab_size);
      const int next = samplers[active[a]].sample(row);
      s.ids.push_back(next);
      if (tok.ends_text(next) || static_cast<int>(s.ids.size()) >= length) done[active[a]] = 1;
    }
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
  int left = o.tokens;
  for (int i = 0; left > 0;) {
    // as many sequences side by side as the tokens left need if none ends early (each one's
    // tokens depend on its index alone, so a sequence sampled beyond the last one needed is
    // dropped, and the corpus is the one of sampling them one after another)
    const int k = std::clamp((left + length - 2) / (length - 1), 1, kSideBySide);
    for (EvalSequence& s : sample_side_by_side(ck, tok, prompts, o.seed, i, k, length)) {
      if (left <= 0) break;
      const int predicted = static_cast<int>(s.ids.size()) - 1;
      if (predicted > left) s.ids.resize(static_cast<size_t>(left) + 1);
      left -= static_cast<int>(s.ids.size()) - 1;
      corpus.sequences.push_back(std::move(s));
    }
    i += k;
  }
  corpus.sampled_sequences = static_cast<int>(corpus.sequences.size());
  for (EvalSequence& s : text) {
    corpus.text_tokens += static_cast<int>(s.ids.size()) - 1;
    corpus.sequences.push_back(std::move(s));
  }
  return corpus;
}

}  // namespace kvcim::runtime
