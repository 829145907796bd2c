// The evaluation corpus and the teacher-forced evaluation: the corpus is a pure function of its
// options (exact token count, prompts in turn, the text last, another seed other tokens); the
// reference against itself gives zero KL and ΔNLL with zero-width intervals; the evaluation
// leaves the generation (tokens, ledger) untouched; results do not depend on the thread count;
// the report carries the statistics and per-token arrays, and null perplexity without an
// evaluation; coarse ADCs give a ΔNLL whose interval excludes 0; the shipped analog specs
// (calibrated macros with their converters and noise) lose measurably more than sram_digital.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include <numeric>

#include "error_of.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/runtime/accuracy.hpp"
#include "kvcim/runtime/eval_corpus.hpp"
#include "kvcim/runtime/evaluation.hpp"
#include "kvcim/runtime/hardware.hpp"
#include "kvcim/runtime/report.hpp"
#include "main_job.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;
using kvcim::test::error_of;

namespace {

// The main job with an evaluation: a short text and `eval_tokens` sampled tokens.
struct Job : test::MainJob {
  explicit Job(const std::string& spec, int steps = 8, int eval_tokens = 400) : MainJob(spec, steps) {
    options.eval_tokens = eval_tokens;
    options.eval_text = "Tom and Lily played with a ball.";
  }
};

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }

}  // namespace

TEST(EvalCorpus, ExactTokenCountPromptsInTurnTextLastAndSeeded) {
  Job j("sram_digital.yaml");
  EvalCorpusOptions o;
  o.tokens = 1500;
  o.text = "The cat sat.";
  const EvalCorpus a = build_eval_corpus(j.ck, j.tok, o);
  const int text_tokens = static_cast<int>(j.tok.encode(o.text, true, false).size()) - 1;
  EXPECT_EQ(a.text_tokens, text_tokens);
  EXPECT_EQ(a.predicted_tokens(), 1500 + text_tokens);
  ASSERT_GE(a.sequences.size(), 4u);  // stories end (BOS) or fill the context: several sequences
  for (size_t i = 0; i + 1 < a.sequences.size(); ++i) {
    const EvalSequence& s = a.sequences[i];
    EXPECT_EQ(s.prompt, static_cast<int>(i % o.prompts.size()));
    const std::vector<int> prompt = j.tok.encode(o.prompts[static_cast<size_t>(s.prompt)], true, false);
    const size_t shared = std::min(prompt.size(), s.ids.size());
    EXPECT_TRUE(std::equal(prompt.begin(), prompt.begin() + static_cast<long>(shared), s.ids.begin())) << i;
    EXPECT_LE(static_cast<int>(s.ids.size()), j.ck.config.seq_len);
    // BOS only first, or last where the story ended
    for (size_t p = 1; p + 1 < s.ids.size(); ++p) EXPECT_NE(s.ids[p], kBos) << i << " " << p;
  }
  EXPECT_EQ(a.sequences.back().prompt, -1);
  EXPECT_EQ(a.sequences.back().ids, j.tok.encode(o.text, true, false));
  // the same options give the same tokens; another seed others (with the same prompts)
  const EvalCorpus again = build_eval_corpus(j.ck, j.tok, o);
  for (size_t i = 0; i < a.sequences.size(); ++i) EXPECT_EQ(again.sequences[i].ids, a.sequences[i].ids);
  // sequences are sampled several side by side, as many as the tokens need: each one's tokens are
  // its own whatever the others (a longer corpus starts with the same sequences)
  EvalCorpusOptions longer = o;
  longer.tokens = 3 * o.tokens;
  const EvalCorpus more = build_eval_corpus(j.ck, j.tok, longer);
  for (size_t i = 0; i + 1 < static_cast<size_t>(a.sampled_sequences); ++i) EXPECT_EQ(more.sequences[i].ids, a.sequences[i].ids) << i;
  o.seed = 2;
  const EvalCorpus other = build_eval_corpus(j.ck, j.tok, o);
  EXPECT_NE(other.sequences[0].ids, a.sequences[0].ids);
  EXPECT_EQ(other.predicted_tokens(), a.predicted_tokens());
}

// The corpus is that of sampling the sequences one after another (a memory for one cache: one
// sequence at a time) whatever the memory its sampling may take: the default (four side by side),
// or two caches' worth, where the sequences start staggered and their caches never hold more
// positions together than the memory allows. Stopping a sequence once it has what is left for it
// saves passes without changing it.
TEST(EvalCorpus, SameTokensWhateverTheSamplingMemoryWhichBoundsTheCaches) {
  Job j("sram_digital.yaml");
  const Config& c = j.ck.config;
  EvalCorpusOptions o;
  o.tokens = 2500;
  o.sequence_length = 200;  // every sequence long enough to overlap the next
  const int64_t per_position = KvCache::bytes_per_token(c, 4);
  o.sampling_memory = 1;  // below one sequence's cache: one at a time
  const EvalCorpus alone = build_eval_corpus(j.ck, j.tok, o);
  EXPECT_EQ(alone.sampling.most_streams, 1);
  o.sampling_memory = 0;
  const EvalCorpus wide = build_eval_corpus(j.ck, j.tok, o);
  EXPECT_EQ(wide.sampling.most_streams, 4);
  o.sampling_memory = 2 * per_position * (o.sequence_length - 1);
  const EvalCorpus two = build_eval_corpus(j.ck, j.tok, o);
  EXPECT_GE(two.sampling.most_streams, 2);
  EXPECT_LE(two.sampling.most_positions, 2 * (o.sequence_length - 1));
  EXPECT_GT(two.sampling.most_positions, o.sequence_length - 1);
  EXPECT_LT(two.sampling.passes, alone.sampling.passes);
  EXPECT_LT(wide.sampling.passes, two.sampling.passes);
  ASSERT_EQ(alone.sequences.size(), wide.sequences.size());
  ASSERT_EQ(alone.sequences.size(), two.sequences.size());
  for (size_t i = 0; i < alone.sequences.size(); ++i) {
    EXPECT_EQ(wide.sequences[i].ids, alone.sequences[i].ids) << i;
    EXPECT_EQ(two.sequences[i].ids, alone.sequences[i].ids) << i;
  }
  EXPECT_EQ(alone.predicted_tokens(), o.tokens);
  // the passes of sampling one at a time: the sequences' positions, the last one's cut included
  int64_t fed = 0;
  for (const EvalSequence& s : alone.sequences) fed += static_cast<int64_t>(s.ids.size()) - 1;
  EXPECT_EQ(alone.sampling.passes, fed);
}

// The text: each paragraph a sequence from BOS, one longer than the context cut into windows of
// the context (every token predicted once); a text without tokens is refused before any sampling.
TEST(EvalCorpus, TextParagraphsInWindowsOfTheContextCheckedFirst) {
  Job j("sram_digital.yaml");
  const int L = j.ck.config.seq_len;
  std::string long_para;  // some 2L + 10 tokens (a sentence of at least one token per ~20 characters)
  const size_t sentence = j.tok.encode("Lily saw a big dog.", false, false).size();
  for (size_t i = 0; i < (2 * static_cast<size_t>(L) + 10) / sentence + 1; ++i) long_para += "Lily saw a big dog. ";
  EXPECT_EQ(text_paragraphs("a b\nc\r\n \t\n\n\nd\n"), (std::vector<std::string>{"a b c", "d"}));
  EvalCorpusOptions o;
  o.tokens = 20;
  o.text = "Tom ran.\n\n" + long_para + "\n";
  const EvalCorpus c = build_eval_corpus(j.ck, j.tok, o);
  const std::vector<int> first = j.tok.encode("Tom ran.", true, false), second = j.tok.encode(long_para, true, false);
  ASSERT_EQ(static_cast<int>(c.sequences.size()) - c.sampled_sequences, 4);  // 1 + three windows
  EXPECT_EQ(c.sequences[c.sampled_sequences].ids, first);
  std::vector<int> joined{second[0]};
  for (size_t i = c.sampled_sequences + 1; i < c.sequences.size(); ++i) {
    const std::vector<int>& ids = c.sequences[i].ids;
    EXPECT_EQ(ids[0], kBos);
    EXPECT_LE(static_cast<int>(ids.size()), L);
    joined.insert(joined.end(), ids.begin() + 1, ids.end());
  }
  EXPECT_EQ(joined, second);
  EXPECT_EQ(c.text_tokens, static_cast<int>(first.size() + second.size()) - 2);
  // a text of blank lines is refused at once, not after sampling a million tokens
  o.tokens = 1000000;
  o.text = "\n \n\t\n";
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] { build_eval_corpus(j.ck, j.tok, o); }).find("eval_text tokens = 0"), std::string::npos);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

TEST(EvalCorpus, BadOptionsAreNamed) {
  Job j("sram_digital.yaml");
  EvalCorpusOptions o;
  o.tokens = 0;
  EXPECT_NE(error_of([&] { build_eval_corpus(j.ck, j.tok, o); }).find("eval_tokens = 0: expected at least 1"),
            std::string::npos);
  o.tokens = 10;
  o.sequence_length = 1000;
  EXPECT_NE(error_of([&] { build_eval_corpus(j.ck, j.tok, o); }).find("sequence_length = 1000"), std::string::npos);
  o.sequence_length = 0;
  o.prompts.clear();
  EXPECT_NE(error_of([&] { build_eval_corpus(j.ck, j.tok, o); }).find("prompts"), std::string::npos);
  Job k("sram_digital.yaml");
  k.options.eval_tokens = -3;
  EXPECT_EQ(error_of([&] { k.go(); }), "run: eval_tokens = -3: expected at least 1");
}

// Library errors name the struct and field a caller set, never a command-line option: a Python
// user reads about the arguments they passed (runtime/cli/error_flags.cpp names the options).
TEST(Evaluation, LibraryErrorsNameFieldsNotOptions) {
  std::vector<std::string> errors;
  for (int bad = 0; bad < 4; ++bad) {
    Job j("sram_digital.yaml");
    if (bad == 0) j.options.steps = 0;
    if (bad == 1) j.options.eval_tokens = 0;
    if (bad == 2) j.options.sequences = 0;
    if (bad == 3) j.options.prompts = {std::string(2000, 'x')};
    errors.push_back(error_of([&] { j.go(); }));
  }
  EXPECT_EQ(errors[0], "run: steps = 0: expected a positive number");
  EXPECT_EQ(errors[2], "run: sequences = 0: expected at least 1");
  EXPECT_NE(errors[3].find("run: prompt tokens = "), std::string::npos) << errors[3];
  EXPECT_NE(errors[3].find("longer than steps = "), std::string::npos) << errors[3];
  for (const std::string& e : errors) {
    EXPECT_EQ(e.find("--"), std::string::npos) << e;
    EXPECT_EQ(e.rfind("run: ", 0), 0u) << e;
  }
  try {
    Job j("sram_digital.yaml");
    j.options.steps = -2;
    j.go();
    FAIL() << "accepted steps = -2";
  } catch (const kvcim::Error& e) {
    EXPECT_EQ(e.where(), "run");
    EXPECT_EQ(e.field(), "steps");
    EXPECT_EQ(e.detail(), "steps = -2: expected a positive number");
  }
}

TEST(Evaluation, ReferenceAgainstItselfHasZeroKlAndDeltaWithZeroWidth) {
  Job j("sram_digital.yaml");
  j.options.backends = {BackendKind::reference, BackendKind::reference};
  const GenerationResult r = j.go();
  ASSERT_TRUE(r.evaluation);
  const Evaluation& e = *r.evaluation;
  EXPECT_EQ(e.kl_mean.value, 0.0);
  EXPECT_EQ(e.kl_mean.high, 0.0);
  EXPECT_EQ(e.top1_agreement.low, 1.0);
  EXPECT_EQ(e.delta_nll.low, 0.0);
  EXPECT_EQ(e.delta_nll.high, 0.0);
  EXPECT_EQ(e.perplexity_cim.value, e.perplexity_reference.value);
  EXPECT_GT(e.perplexity_reference.value, 1.0);
  // the perplexity interval is exp of the NLL interval, around the value
  EXPECT_LT(e.perplexity_reference.low, e.perplexity_reference.value);
  EXPECT_GT(e.perplexity_reference.high, e.perplexity_reference.value);
}

TEST(Evaluation, LeavesTheGenerationUntouched) {
  // (read noise takes the macro's slow path: a short evaluation)
  Job with("sram_analog.yaml", 12, 100), without("sram_analog.yaml", 12, 100);
  with.hw.macro.read_noise_sigma = 0.5;  // a noise stream the evaluation must not advance
  without.hw.macro.read_noise_sigma = 0.5;
  without.options.eval_text.clear();
  const GenerationResult a = with.go(), b = without.go();
  EXPECT_TRUE(a.evaluation.has_value());
  EXPECT_FALSE(b.evaluation.has_value());
  EXPECT_EQ(a.tokens, b.tokens);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) EXPECT_EQ(a.steps[i].kl, b.steps[i].kl) << i;
  EXPECT_TRUE(a.ledger == b.ledger);
  EXPECT_TRUE(a.simulated == b.simulated);
}

TEST(Evaluation, SameResultsWithOneAndTwoThreadsUnderReadNoise) {
  auto once = [](int threads) {
    Job j("sram_analog.yaml", 6, 150);
    j.hw.macro.read_noise_sigma = 0.5;  // draws in sequence order: the lanes must be fixed
    j.options.threads = threads;
    return j.report()["accuracy"]["evaluation"].dump();
  };
  const std::string one = once(1);
  EXPECT_TRUE(one == once(2)) << "the evaluation differs with two threads";  // (not the whole JSON)
  EXPECT_NE(one, "null");
  EXPECT_GE(nlohmann::json::parse(one)["sequences"].get<int>(), 2);  // both lanes have work
}

TEST(Evaluation, ReportCarriesStatisticsArraysAndNullPerplexityWithout) {
  Job j("sram_digital.yaml");
  const nlohmann::json a = j.report()["accuracy"];
  const nlohmann::json& e = a["evaluation"];
  const int text_tokens = static_cast<int>(j.tok.encode(j.options.eval_text, true, false).size()) - 1;
  EXPECT_EQ(e["tokens"], 400 + text_tokens);
  EXPECT_EQ(e["text_tokens"], text_tokens);
  EXPECT_EQ(e["sampled_tokens"], 400);
  // perplexity is the human-written text's; the top-level statistics the sampled sequences'
  EXPECT_EQ(a["perplexity"]["eval_tokens"], text_tokens);
  EXPECT_EQ(a["perplexity"]["on"], "text");
  EXPECT_EQ(e["text"]["tokens"], text_tokens);
  EXPECT_EQ(e["text"]["sequences"], 1);
  for (const char* k : {"nll_reference", "nll_cim", "kl", "top1_agree"})
    EXPECT_EQ(e["per_token"][k].size(), e["tokens"].get<size_t>()) << k;
  EXPECT_EQ(e["sequence_starts"].size(), e["sequences"].get<size_t>());
  EXPECT_EQ(e["sequences"], e["sampled_sequences"].get<int>() + 1);
  const std::vector<double> kl = e["per_token"]["kl"], ref = e["per_token"]["nll_reference"],
                            cim = e["per_token"]["nll_cim"];
  auto part = [](const std::vector<double>& v, size_t from, size_t to) {
    return std::vector<double>(v.begin() + static_cast<long>(from), v.begin() + static_cast<long>(to));
  };
  const size_t all = kl.size(), sampled = 400;
  EXPECT_NEAR(e["kl_mean"]["value"].get<double>(), mean(part(kl, 0, sampled)), 1e-12);
  EXPECT_NEAR(e["delta_nll"]["value"].get<double>(), mean(part(cim, 0, sampled)) - mean(part(ref, 0, sampled)), 1e-12);
  EXPECT_NEAR(e["text"]["kl_mean"]["value"].get<double>(), mean(part(kl, sampled, all)), 1e-12);
  EXPECT_NEAR(e["text"]["delta_nll"]["value"].get<double>(),
              mean(part(cim, sampled, all)) - mean(part(ref, sampled, all)), 1e-12);
  EXPECT_NEAR(a["perplexity"]["cim"].get<double>(), std::exp(mean(part(cim, sampled, all))), 1e-9);
  EXPECT_EQ(a["perplexity"]["cim"], e["text"]["perplexity_cim"]["value"]);
  for (const char* k : {"kl_mean", "top1_agreement", "delta_nll", "perplexity_reference", "perplexity_cim"}) {
    EXPECT_LE(e[k]["ci_low"].get<double>(), e[k]["value"].get<double>()) << k;
    EXPECT_GE(e[k]["ci_high"].get<double>(), e[k]["value"].get<double>()) << k;
    EXPECT_LT(e[k]["ci_low"].get<double>(), e[k]["ci_high"].get<double>()) << k;
  }
  EXPECT_GT(e["kl_mean"]["ci_low"].get<double>(), 0.0);  // int8 CIM is not the float path

  Job none("sram_digital.yaml");
  none.options.eval_text.clear();
  const nlohmann::json n = none.report()["accuracy"];
  EXPECT_TRUE(n["evaluation"].is_null());
  EXPECT_TRUE(n["perplexity"]["reference"].is_null());
  EXPECT_TRUE(n["perplexity"]["cim"].is_null());
  EXPECT_EQ(n["perplexity"]["eval_tokens"], 0);
}

TEST(Evaluation, CoarseAdcsCostNllWithAnIntervalAboveZero) {
  Job coarse("sram_analog.yaml", 8, 1500);
  coarse.hw.macro.adc_bits = 3;
  coarse.hw.macro.adc_range = cim::AdcRange::full_scale;
  coarse.hw.validate();
  const GenerationResult r = coarse.go();
  EXPECT_GT(r.evaluation->delta_nll.low, 0.0);
  EXPECT_LT(r.evaluation->top1_agreement.high, 1.0);
}

// The shipped analog specs describe the calibrated macros (C7: clipped 8-bit ADC and read noise;
// C11: 4-bit converters clipped at 15 levels), and that costs accuracy: the KL interval of each
// lies above sram_digital's (docs/calibration.md has the 10k-token figures).
TEST(Evaluation, ShippedAnalogSpecsLoseMeasurablyMoreThanDigital) {
  auto kl = [](const char* spec) {
    Job j(spec, 6, 1500);
    return j.go().evaluation->kl_mean;
  };
  const auto digital = kl("sram_digital.yaml");
  for (const char* spec : {"sram_analog.yaml", "reram_analog.yaml"}) {
    const auto analog = kl(spec);
    EXPECT_GT(analog.low, digital.high) << spec << ": KL " << analog.value << " [" << analog.low << ", "
                                        << analog.high << "] vs digital " << digital.value << " ["
                                        << digital.low << ", " << digital.high << "]";
  }
}

// Each score is its own position's: the reference's NLL of token t + 1 from forward() one position
// at a time, over more than one chunk and more than one block of logits rows of the chunked pass.
TEST(Evaluation, EachScoreIsItsOwnPositions) {
  Job j("sram_digital.yaml");
  const Config& c = j.ck.config;
  const Weights& w = j.ck.weights;
  EvalCorpus corpus;
  corpus.sequences.emplace_back();
  for (int p = 0; p < 150; ++p) corpus.sequences[0].ids.push_back((p * 31 + 1) % c.vocab_size);
  auto make = [&] {
    return std::make_unique<SessionBackend>(c, w, BackendChoice{BackendKind::reference, BackendKind::reference},
                                            std::shared_ptr<CimWeights>(), TileFactory{}, false, KvWindow{});
  };
  const TokenScores s = score_corpus(c, w, make, corpus, 1);
  ReferenceBackend ref(c, w);
  RunState st(c);
  ASSERT_EQ(s.nll_reference.size(), 149u);
  for (int p = 0; p < 149; ++p) {
    const Vector& logits = forward(c, w, st, ref, corpus.sequences[0].ids[static_cast<size_t>(p)], p);
    EXPECT_NEAR(s.nll_reference[static_cast<size_t>(p)], -log_prob(logits, corpus.sequences[0].ids[p + 1]), 1e-9) << p;
    EXPECT_EQ(s.nll_cim[static_cast<size_t>(p)], s.nll_reference[static_cast<size_t>(p)]) << p;
  }
}

// Scores of `sequences` sequences of `length` tokens: ΔNLL 0.1 + a slow swing + a small wobble.
TokenScores synthetic_scores(int sequences, int length) {
  TokenScores t;
  for (int s = 0; s < sequences; ++s) {
    t.sequence_starts.push_back(static_cast<int>(t.kl.size()));
    for (int i = 0; i < length; ++i) {
      const double d = 0.1 + 0.05 * std::sin(0.05 * (i + 97 * s)) + 0.01 * std::sin(3.7 * i * (s + 1));
      t.nll_reference.push_back(2.0);
      t.nll_cim.push_back(2.0 + d);
      t.kl.push_back(std::abs(d));
      t.top1_agree.push_back(i % 7 == 0 ? 0.0 : 1.0);
    }
  }
  return t;
}

TEST(Evaluation, FewSequencesResampleBlocksOfTokensNotOneCluster) {
  // one sequence: resampling it whole would give every replicate the same mean, an interval of
  // zero width; blocks of ceil(400^(1/3)) = 8 tokens give a real one around the mean
  const Evaluation one = summarize_scores(synthetic_scores(1, 400), {}, -1);
  EXPECT_EQ(one.interval_block_tokens, 8);
  EXPECT_LT(one.delta_nll.low, one.delta_nll.value);
  EXPECT_GT(one.delta_nll.high, one.delta_nll.value);
  EXPECT_GT(one.delta_nll.high - one.delta_nll.low, 1e-3);
  EXPECT_LT(one.top1_agreement.low, one.top1_agreement.high);
  // three sequences: still blocks; four: whole sequences, as cluster_bootstrap_means gives them
  EXPECT_EQ(summarize_scores(synthetic_scores(3, 100), {}, -1).interval_block_tokens, 7);
  const TokenScores four = synthetic_scores(4, 100);
  const Evaluation e = summarize_scores(four, {}, -1);
  EXPECT_EQ(e.interval_block_tokens, 0);
  std::vector<double> delta(four.kl.size());
  for (size_t i = 0; i < delta.size(); ++i) delta[i] = four.nll_cim[i] - four.nll_reference[i];
  const Interval by_sequence = cluster_bootstrap_mean(delta, four.sequence_starts, {});
  EXPECT_DOUBLE_EQ(e.delta_nll.low, by_sequence.low);
  EXPECT_DOUBLE_EQ(e.delta_nll.high, by_sequence.high);
  // the text part of an evaluation is judged on its own sequences: 4 sampled + 1 text sequence
  const Evaluation split = summarize_scores(synthetic_scores(5, 100), {}, 4);
  EXPECT_EQ(split.interval_block_tokens, 0);
  ASSERT_TRUE(split.text);
  EXPECT_EQ(split.text->interval_block_tokens, 5);
  EXPECT_GT(split.text->delta_nll.high, split.text->delta_nll.low);
  EXPECT_EQ(interval_block_tokens(0, 0), 0);
}
