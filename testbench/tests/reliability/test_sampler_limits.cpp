// The sampler never indexes outside the vocabulary: logits that are not finite (activations that
// overflowed float32) are an error, and a one-token vocabulary is sampled on every path.
#include <cmath>
#include <limits>

#include "kvcim/cmodel/sampler.hpp"
#include "reliability_util.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::test;

TEST(SamplerLimits, NonFiniteLogitsAreAnErrorOnEveryPath) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    Vector logits = Vector::Constant(300, 0.5f);
    logits[7] = bad;
    for (float temperature : {0.0f, 1.0f}) {
      for (float topp : {0.0f, 0.9f, 1.0f}) {
        Sampler s(temperature, topp, 5);
        const std::string e = error_of([&] { s.sample(logits); });
        EXPECT_NAMES(e, "logits");
        EXPECT_NAMES(e, "7");  // which token
      }
    }
  }
}

TEST(SamplerLimits, AllNaNLogitsDoNotReachTheNucleusSort) {
  // Before the check, NaN probabilities left the top-p candidate list empty and the sampler read
  // element SIZE_MAX of it.
  Vector logits = Vector::Constant(50, std::numeric_limits<float>::quiet_NaN());
  Sampler s(1.0f, 0.9f, 1);
  EXPECT_NAMES(error_of([&] { s.sample(logits); }), "logits");
}

TEST(SamplerLimits, SingleTokenVocabularyIsSampledOnEveryPath) {
  const Vector logits = Vector::Constant(1, 3.0f);
  for (float temperature : {0.0f, 0.5f, 1.0f})
    for (float topp : {0.0f, 0.5f, 0.9f, 1.0f}) {
      Sampler s(temperature, topp, 11);
      for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(logits), 0) << temperature << " " << topp;
    }
}

TEST(SamplerLimits, ExtremeFiniteLogitsStayInTheVocabulary) {
  Vector logits = Vector::Constant(400, -3.0e38f);
  logits[399] = 3.0e38f;
  logits[0] = 3.0e38f;
  Sampler s(1e-30f, 0.9f, 9);  // a tiny temperature turns the spread into overflow
  for (int i = 0; i < 20; ++i) {
    const int t = s.sample(logits);
    EXPECT_TRUE(t == 0 || t == 399) << t;
  }
}
