// Whole generations through the runtime: the reference backend reproduces the golden model, CIM
// at high precision tracks it, coarse analog CIM measurably does not.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/cmodel/sampler.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/runtime/session.hpp"
#include "main_job.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;

namespace {

using Fixture = test::EmbeddedModel;

cim::MacroSpec digital_macro() {
  cim::MacroSpec m;
  m.rows = 64, m.cols = 64, m.rows_per_cycle = 64;
  return m;
}

// Every matrix in plain tiles of macro `m`, attention on C-model tiles of `tp`.
SessionHardware hardware(Fixture& f, const cim::MacroSpec& m, cim::TileParams tp = {}) {
  SessionHardware hw;
  hw.macro = m;
  hw.blocks = [&f, m](int layer, MatrixKind kind) {
    const WeightMatrix& w = f.ck.weights.matrix(layer, kind);
    return tile_blocks(static_cast<int>(w.cols()), static_cast<int>(w.rows()), m);
  };
  hw.tiles = [tp] { return std::make_unique<cim::CModelTile>(tp); };
  return hw;
}

GenerationResult generate(Fixture& f, BackendChoice choice, const cim::MacroSpec& m, int steps,
                          cim::TileParams tp = {}, KvWindow window = {}) {
  SessionOptions o;
  o.steps = steps;
  o.backends = choice;
  SessionHardware hw = hardware(f, m, tp);
  hw.kv_window = window;
  return run_generation(f.ck, f.tok, o, hw);
}

nlohmann::json golden() {
  std::ifstream in(test::golden("stories260K.once_upon_a_time.json"));
  return nlohmann::json::parse(in);
}

}  // namespace

TEST(Session, ReferenceBackendsReproduceTheGoldenIds) {
  Fixture f;
  auto r = generate(f, {BackendKind::reference, BackendKind::reference}, digital_macro(), 200);
  EXPECT_EQ(r.tokens, golden()["ids"].get<std::vector<int>>());
  EXPECT_EQ(r.reference_tokens, r.tokens);
  EXPECT_EQ(r.accuracy.top1_agreement, 1.0);
  EXPECT_EQ(r.accuracy.max_abs_error, 0.0);
}

TEST(Session, DigitalCimAttentionAgreesOnTop1AtEveryStep) {
  Fixture f;
  // int8 q, K and V cannot be lossless against float32, so top-1 may flip where the reference
  // itself is within the logit error of a tie; everywhere else it must agree.
  cim::TileParams high;
  high.exp_frac = 12, high.prob_bits = 16;
  auto r = generate(f, {BackendKind::reference, BackendKind::cim}, digital_macro(), 200, high);
  EXPECT_GT(r.accuracy.max_abs_error, 0.0);  // the integer path is not the float path
  EXPECT_LT(r.accuracy.kl_mean, 0.01);
  EXPECT_GE(r.accuracy.top1_agreement, 0.95);
  for (const StepAccuracy& s : r.steps) {
    if (!s.top1_agree) {
      EXPECT_LT(s.reference_margin, 2 * s.max_abs_error) << "position " << s.pos;
    }
  }
}

TEST(Session, AllCimRunsAndReportsAccuracy) {
  Fixture f;
  auto r = generate(f, {BackendKind::cim, BackendKind::cim}, digital_macro(), 64);
  std::cerr << "top1 " << r.accuracy.top1_agreement << " kl " << r.accuracy.kl_mean << "\n";
  EXPECT_GT(r.accuracy.top1_agreement, 0.8);
}

TEST(Session, FreeRunningReferenceIsThePlainFloatGeneration) {
  // The free-running reference shares the shadow's pass while both have been fed the same tokens
  // and runs on its own from the first difference. Sampled at temperature 1 with a coarse
  // analog macro (few ADC bits and read noise) the CIM tokens leave the reference's early, and
  // the reference's tokens must still be exactly those of a plain float generation.
  Fixture f;
  cim::MacroSpec coarse = digital_macro();
  coarse.kind = cim::MacroKind::analog;
  coarse.adc_bits = 4;
  coarse.read_noise_sigma = 2.0;
  SessionOptions o;
  o.steps = 256;
  o.temperature = 1.0f;
  o.seed = 5;
  o.backends = {BackendKind::cim, BackendKind::cim};
  const SessionHardware hw = hardware(f, coarse);
  for (int threads : {1, 2}) {
    o.threads = threads;
    const GenerationResult r = run_generation(f.ck, f.tok, o, hw);
    // the run ends where the CIM run ends (o.steps or a BOS); the reference must have run on its
    // own for a while before that for this test to mean anything
    size_t split = 0;
    while (split < r.tokens.size() && split < r.reference_tokens.size() &&
           r.tokens[split] == r.reference_tokens[split])
      ++split;
    ASSERT_LT(split + 8, r.reference_tokens.size()) << "the CIM run must leave the reference early";

    const Config& c = f.ck.config;
    ReferenceBackend ref(c, f.ck.weights);
    RunState s(c);
    Sampler sampler(o.temperature, o.top_p, o.seed);
    const std::vector<int> prompt = f.tok.encode(o.prompts.front(), true, false);
    std::vector<int> plain{prompt[0]};
    int token = prompt[0];
    for (int pos = 0; pos + 1 < o.steps; ++pos) {
      const Vector& logits = forward(c, f.ck.weights, s, ref, token, pos);
      const int next = pos + 1 < static_cast<int>(prompt.size()) ? prompt[pos + 1] : sampler.sample(logits);
      if (next == 1) break;  // BOS ends the story
      plain.push_back(token = next);
    }
    plain.resize(std::min(plain.size(), r.reference_tokens.size()));
    EXPECT_EQ(r.reference_tokens, plain) << "threads " << threads;
  }
}

TEST(Session, WindowAtLeastTheContextIsFullAttentionAndASmallOneIsNot) {
  // 192 steps over tiles of 64 tokens: 3 tiles per stream. A window of 3 tiles drops nothing and
  // must give the full run's tokens and logits; a window of 2 (or 1 sink + 1) drops the oldest
  // tile from position 128 on and must change the logits there, and only there.
  Fixture f;
  const BackendChoice attn{BackendKind::reference, BackendKind::cim};
  const GenerationResult full = generate(f, attn, digital_macro(), 192);
  const GenerationResult same = generate(f, attn, digital_macro(), 192, {}, KvWindow{3, 0});
  EXPECT_EQ(same.tokens, full.tokens);
  ASSERT_EQ(same.steps.size(), full.steps.size());
  for (size_t i = 0; i < full.steps.size(); ++i) EXPECT_EQ(same.steps[i].kl, full.steps[i].kl) << i;
  for (KvWindow w : {KvWindow{2, 0}, KvWindow{2, 1}}) {
    const GenerationResult cut = generate(f, attn, digital_macro(), 192, {}, w);
    for (size_t i = 0; i < 128 && i < cut.steps.size(); ++i) EXPECT_EQ(cut.steps[i].kl, full.steps[i].kl) << i;
    EXPECT_NE(cut.accuracy.kl_mean, full.accuracy.kl_mean) << "window " << w.tiles << " sinks " << w.sinks;
  }
}

TEST(Session, TokenWindowIsFullAttentionUntilItFillsAndDiffersAfter) {
  // StreamingLLM at token granularity: 4 sink tokens and 12 recent ones, 16 in all. Positions
  // 0..15 see every token (the run's logits are the full run's, step for step); from position 16
  // on a token is overwritten each step and the logits change. A window of the whole run (64
  // positions) is the full run, token for token.
  Fixture f;
  const BackendChoice attn{BackendKind::reference, BackendKind::cim};
  const GenerationResult full = generate(f, attn, digital_macro(), 64);
  KvWindow w;
  w.sink_tokens = 4;
  for (int tokens : {16, 64}) {
    w.tokens = tokens;
    const GenerationResult r = generate(f, attn, digital_macro(), 64, {}, w);
    ASSERT_EQ(r.steps.size(), full.steps.size());
    for (size_t i = 0; i < 16; ++i) EXPECT_EQ(r.steps[i].kl, full.steps[i].kl) << i;
    if (tokens == 64) {
      EXPECT_EQ(r.tokens, full.tokens);
      for (size_t i = 0; i < full.steps.size(); ++i) EXPECT_EQ(r.steps[i].kl, full.steps[i].kl) << i;
    } else {
      int differ = 0;
      for (size_t i = 16; i < full.steps.size(); ++i) differ += r.steps[i].kl != full.steps[i].kl;
      EXPECT_GT(differ, 40) << "of 48 steps past the window";
    }
  }
}

TEST(Session, SpilledTilesGiveTheFullRunsTokensAndLogits) {
  // overflow=spill: one tile per stream in CIM, the older ones attended by the digital engine on
  // the same codes: the run is the full run, token for token and logit for logit, with fewer
  // tile queries in the CIM ledger.
  Fixture f;
  const BackendChoice attn{BackendKind::reference, BackendKind::cim};
  KvWindow spill;
  spill.cim_tiles = 1;
  const GenerationResult full = generate(f, attn, digital_macro(), 192);
  const GenerationResult part = generate(f, attn, digital_macro(), 192, {}, spill);
  EXPECT_EQ(part.tokens, full.tokens);
  ASSERT_EQ(part.steps.size(), full.steps.size());
  for (size_t i = 0; i < full.steps.size(); ++i) EXPECT_EQ(part.steps[i].kl, full.steps[i].kl) << i;
  EXPECT_LT(part.ledger.count(energy::Op::attn_scores), full.ledger.count(energy::Op::attn_scores));
}

// A batch decodes its sequences together through the same macros (one CimWeights), each with its
// own KV tiles, shadow and reference: on a noise-free spec every sequence makes exactly the
// tokens, texts and per-step logit errors of a single run with its prompt and seed, and the
// simulated CIM events are the sum of the single runs'. Sampled at temperature 1 so that the
// per-sequence seeds matter, and long enough that sequences end (BOS) at different steps.
TEST(Session, BatchMakesExactlyTheTokensOfSingleRuns) {
  Fixture f;
  const SessionHardware hw = hardware(f, digital_macro());
  SessionOptions o;
  o.steps = 300;
  o.temperature = 1.0f;
  o.seed = 7;  // sequence 0 meets BOS at position 265: the batch goes on without it
  o.prompts = {"Once upon a time", "Tom had a big"};
  o.sequences = 3;  // the third sequence starts from the first prompt with its own seed
  for (int threads : {1, 2}) {
    o.threads = threads;
    const GenerationResult batch = run_generation(f.ck, f.tok, o, hw);
    ASSERT_EQ(batch.sequences.size(), 3u);
    energy::Ledger singles_simulated(f.ck.config.n_layers);
    int singles_passes = 0;
    std::vector<StepAccuracy> all_steps;
    for (int b = 0; b < 3; ++b) {
      SessionOptions one = o;
      one.sequences = 1;
      one.prompts = {o.prompts[static_cast<size_t>(b) % 2]};
      one.seed = o.seed + static_cast<uint64_t>(b);
      const GenerationResult single = run_generation(f.ck, f.tok, one, hw);
      const SequenceResult& s = batch.sequences[static_cast<size_t>(b)];
      EXPECT_EQ(s.prompt, one.prompts.front());
      EXPECT_EQ(s.seed, one.seed);
      EXPECT_EQ(s.tokens, single.tokens) << "sequence " << b << ", threads " << threads;
      EXPECT_EQ(s.reference_tokens, single.reference_tokens) << "sequence " << b;
      EXPECT_EQ(s.text, single.text);
      ASSERT_EQ(s.steps.size(), single.steps.size()) << "sequence " << b;
      for (size_t i = 0; i < s.steps.size(); ++i) {
        EXPECT_EQ(s.steps[i].kl, single.steps[i].kl) << "sequence " << b << " position " << i;
        EXPECT_EQ(s.steps[i].max_abs_error, single.steps[i].max_abs_error);
        EXPECT_EQ(s.steps[i].top1_agree, single.steps[i].top1_agree);
      }
      singles_simulated += single.simulated;
      singles_passes += single.forward_passes;
      all_steps.insert(all_steps.end(), single.steps.begin(), single.steps.end());
      EXPECT_EQ(single.load_ledger, batch.load_ledger) << "the weights are written once either way";
    }
    EXPECT_EQ(batch.simulated, singles_simulated);
    EXPECT_EQ(batch.forward_passes, singles_passes);
    EXPECT_EQ(batch.accuracy.kl_mean, summarize(all_steps).kl_mean);
    EXPECT_EQ(batch.tokens, batch.sequences[0].tokens);  // the run's own fields are sequence 0's
    // sequences drop out as they end, and the test means something only if one did
    int passes = 0;
    for (size_t i = 0; i < batch.active.size(); ++i) {
      passes += batch.active[i];
      if (i > 0) {
        EXPECT_LE(batch.active[i], batch.active[i - 1]);
      }
    }
    EXPECT_EQ(passes, batch.forward_passes);
    EXPECT_LT(batch.active.back(), 3) << "no sequence ended early: choose another seed";
    EXPECT_NE(batch.sequences[0].tokens, batch.sequences[2].tokens) << "same prompt, different seeds";
  }
}

TEST(Session, ThreadsBoundTheGemvPoolForTheRunOnly) {
  // `threads` is the most threads a run may use: with 1 the GEMV pool's helper must not run
  // while the run lasts (seen from the progress callback, called between forward passes), and
  // the pool's own setting comes back when the run ends.
  Fixture f;
  const int before = gemv_threads();
  set_gemv_threads(2);
  SessionOptions o;
  o.steps = 8;
  o.backends = {BackendKind::cim, BackendKind::cim};
  int most = 0, calls = 0;
  o.progress = [&](int, int) { most = std::max(most, gemv_threads()), ++calls; };
  for (int threads : {1, 2}) {
    most = calls = 0;
    o.threads = threads;
    run_generation(f.ck, f.tok, o, hardware(f, digital_macro()));
    EXPECT_GT(calls, 0);
    EXPECT_EQ(most, threads) << "threads " << threads;
    EXPECT_EQ(gemv_threads(), 2) << "the pool's setting is restored after a run with threads " << threads;
  }
  set_gemv_threads(before);
}
