#include <gtest/gtest.h>

#include "kvcim/cmodel/sampler.hpp"
#include "kvcim/error.hpp"

using namespace kvcim::cmodel;

TEST(Sampler, GreedyLowestIndexWinsTies) {
  Vector logits(5);
  logits << 1.0f, 3.0f, 2.0f, 3.0f, -1.0f;
  Sampler s(0.0f, 0.9f, 1);
  EXPECT_EQ(s.sample(logits), 1);
}

TEST(Sampler, SeededAndReproducible) {
  Vector logits = Vector::LinSpaced(50, -2.0f, 2.0f);
  auto draw = [&](uint64_t seed, float topp) {
    Sampler s(1.0f, topp, seed);
    std::vector<int> out;
    for (int i = 0; i < 40; ++i) out.push_back(s.sample(logits));
    return out;
  };
  EXPECT_EQ(draw(3, 0.9f), draw(3, 0.9f));
  EXPECT_NE(draw(3, 0.9f), draw(4, 0.9f));
  EXPECT_EQ(draw(3, 0.0f), draw(3, 0.0f));
}

TEST(Sampler, TopPExcludesTheTail) {
  // token 0 holds ~88% of the mass; with topp 0.5 only it may be drawn
  Vector logits = Vector::Zero(10);
  logits[0] = 6.0f;
  Sampler s(1.0f, 0.5f, 9);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(s.sample(logits), 0);
  // with full sampling the tail appears
  Sampler all(1.0f, 1.0f, 9);
  int tail = 0;
  for (int i = 0; i < 400; ++i) tail += all.sample(logits) != 0;
  EXPECT_GT(tail, 10);
}

TEST(Sampler, RejectsBadParameters) {
  EXPECT_THROW(Sampler(-1.0f, 0.9f, 1), kvcim::Error);
  EXPECT_THROW(Sampler(1.0f, 1.5f, 1), kvcim::Error);
}
