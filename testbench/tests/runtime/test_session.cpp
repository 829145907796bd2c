// Whole generations through the runtime: the reference backend reproduces the golden model, CIM
// at high precision tracks it, coarse analog CIM measurably does not.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/runtime/session.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;

namespace {

struct Fixture {
  Checkpoint ck = read_checkpoint(test::model_path());
  Tokenizer tok = Tokenizer::load(test::tokenizer_path(), 512);
};

cim::MacroSpec digital_macro() {
  cim::MacroSpec m;
  m.rows = 64, m.cols = 64, m.rows_per_cycle = 64;
  return m;
}

GenerationResult generate(Fixture& f, BackendChoice choice, const cim::MacroSpec& m, int steps,
                          cim::TileParams tp = {}) {
  SessionOptions o;
  o.steps = steps;
  o.backends = choice;
  SessionHardware hw;
  hw.macro = m;
  hw.blocks = [&](int layer, MatrixKind kind) {
    const Matrix& w = f.ck.weights.matrix(layer, kind);
    return tile_blocks(static_cast<int>(w.cols()), static_cast<int>(w.rows()), m);
  };
  hw.tiles = [tp] { return std::make_unique<cim::CModelTile>(tp); };
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
