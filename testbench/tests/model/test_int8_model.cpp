// Model with int8 weights (kvcim generate/logits --weights int8, Python Model.load(weights=
// "int8")): the existing Int8Backend, exposed. Its next-token distributions stay within a stated
// KL divergence of the float model's on the embedded model, and it is exactly the Int8Backend's
// forward pass.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kvcim/cmodel/int8_backend.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/error.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;

namespace {

std::vector<int> golden_ids() {
  std::ifstream in(test::golden("stories260K.once_upon_a_time.json"));
  return nlohmann::json::parse(in)["ids"].get<std::vector<int>>();
}

// KL(p || q) in nats of the softmaxes of two logit rows.
double kl(const float* p_logits, const float* q_logits, int n) {
  auto logsumexp = [n](const float* l) {
    double m = l[0];
    for (int i = 1; i < n; ++i) m = std::max(m, double(l[i]));
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += std::exp(double(l[i]) - m);
    return m + std::log(s);
  };
  const double lp = logsumexp(p_logits), lq = logsumexp(q_logits);
  double d = 0.0;
  for (int i = 0; i < n; ++i) {
    const double logp = p_logits[i] - lp, logq = q_logits[i] - lq;
    d += std::exp(logp) * (logp - logq);
  }
  return d;
}

}  // namespace

// The stated tolerance of the int8 path on stories260K, 200 teacher-forced positions of the
// golden sequence: mean KL(float || int8) <= 0.01 nats and every position <= 0.05 nats; and
// the greedy next token agrees at >= 90% of the positions.
TEST(Int8Model, WithinStatedKlOfFloatOnTheEmbeddedModel) {
  const std::vector<int> ids = golden_ids();
  auto f = Model::load(test::model_path(), WeightFormat::float32);
  auto q = Model::load(test::model_path(), WeightFormat::int8);
  EXPECT_EQ(q->weight_format(), WeightFormat::int8);
  const Matrix lf = f->logits(ids), lq = q->logits(ids);
  const int n = static_cast<int>(lf.cols());
  double sum = 0.0, worst = 0.0;
  int agree = 0;
  for (int r = 0; r < lf.rows(); ++r) {
    const double d = kl(lf.row(r).data(), lq.row(r).data(), n);
    sum += d;
    worst = std::max(worst, d);
    Eigen::Index af, aq;
    lf.row(r).maxCoeff(&af);
    lq.row(r).maxCoeff(&aq);
    agree += af == aq;
  }
  const double mean = sum / lf.rows();
  RecordProperty("mean_kl", std::to_string(mean));
  EXPECT_LE(mean, 0.01);
  EXPECT_LE(worst, 0.05);
  EXPECT_GE(agree, 0.9 * lf.rows());
  // and it is not the float model under another name
  EXPECT_GT(mean, 0.0);
}

TEST(Int8Model, IsTheInt8BackendsForwardPass) {
  const std::vector<int> ids = golden_ids();
  auto q = Model::load(test::model_path(), WeightFormat::int8);
  Checkpoint ck = load_checkpoint(test::model_path());
  Int8Backend be(ck.config, ck.weights);
  RunState state(ck.config);
  for (int pos = 0; pos < 40; ++pos) {
    const Vector expected = forward(ck.config, ck.weights, state, be, ids[pos], pos);
    const Vector& got = q->forward(ids[pos], pos);
    ASSERT_EQ(std::memcmp(expected.data(), got.data(), sizeof(float) * expected.size()), 0) << pos;
  }
}

TEST(Int8Model, WeightFormatNames) {
  EXPECT_EQ(parse_weight_format("--weights", "float"), WeightFormat::float32);
  EXPECT_EQ(parse_weight_format("--weights", "f32"), WeightFormat::float32);
  EXPECT_EQ(parse_weight_format("--weights", "int8"), WeightFormat::int8);
  EXPECT_STREQ(name(WeightFormat::int8), "int8");
  try {
    parse_weight_format("--weights", "int4");
    FAIL() << "int4 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--weights"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("int8"), std::string::npos) << e.what();
  }
}
