// The fixed-point softmax steps on cases worked out by hand from the contract
// (docs/attention_tile.md), not by calling the implementation for the expected values.
#include <gtest/gtest.h>

#include <cmath>

#include "kvcim/error.hpp"
#include "tile_test_util.hpp"

namespace {

using namespace kvcim::cmodel::cim;

TEST(ExpLut, EntriesAreRoundedPowersOfTwo) {
  const std::vector<uint32_t> lut = exp_lut(6);
  ASSERT_EQ(lut.size(), 64u);
  EXPECT_EQ(lut[0], 65536u);
  EXPECT_EQ(lut[32], 46341u);  // 65536 / sqrt(2) = 46340.95
  EXPECT_EQ(lut[63], 33125u);  // 65536 * 2^(-63/64) = 33124.7
  for (int f = 0; f < 64; ++f) {
    EXPECT_EQ(lut[f], static_cast<uint32_t>(std::round(std::pow(2.0, 16.0 - f / 64.0)))) << f;
    if (f > 0) {
      EXPECT_LT(lut[f], lut[f - 1]) << f;
    }
    EXPECT_LE(lut[f], 1u << 16);  // 17 bits
  }
  EXPECT_EQ(exp_lut(0), std::vector<uint32_t>{65536u});
  EXPECT_EQ(exp_lut(1), (std::vector<uint32_t>{65536u, 46341u}));
  EXPECT_THROW(exp_lut(13), kvcim::Error);
}

TEST(QueryScale, MantissaNormalisedAndAccurate) {
  const double ln2 = std::log(2.0);
  for (double qs : {1.0, 0.013, 0.5, 3.7e-5, 123.0}) {
    for (int d : {1, 8, 64}) {
      const QueryScale s = query_scale(qs, d);
      EXPECT_GE(s.qmul, 1u << 15);
      const double want = qs / ln2 / std::sqrt(d);  // q_scale log2(e) / sqrt(D)
      const double got = std::ldexp(static_cast<double>(s.qmul), s.qexp);
      EXPECT_LE(std::abs(got - want) / want, std::ldexp(1.0, -16)) << qs << " " << d;
    }
  }
  // 1.0 * log2(e) / sqrt(8) = 0.5100697: mantissa 0.5100697 * 2^16 = 33428.3 -> 33428, qexp -16
  EXPECT_EQ(query_scale(1.0, 8), (QueryScale{33428, -16}));
  // a mantissa that rounds up to 2^16 is renormalised: (1 - 2^-20) -> 32768 * 2^-15
  EXPECT_EQ(query_scale((1.0 - std::ldexp(1.0, -20)) * ln2, 1), (QueryScale{32768, -15}));
  EXPECT_THROW(query_scale(0.0, 8), kvcim::Error);
  EXPECT_THROW(query_scale(-1.0, 8), kvcim::Error);
  EXPECT_THROW(query_scale(NAN, 8), kvcim::Error);
  EXPECT_THROW(query_scale(1e300, 8), kvcim::Error);  // qexp beyond 127
}

TEST(ScaleScore, RoundsHalfUpAndClampsTheShift) {
  // 3 * 32768 * 2^(-16 + 0 + 6) = 96 exactly (sh = 10)
  EXPECT_EQ(scale_score(3, 32768, -16, 0, 6), 96);
  // 1 * 32768 * 2^-16 = 0.5 -> 1;  -1 * ... = -0.5 -> 0 (half up);  -3 * ... = -1.5 -> -1
  EXPECT_EQ(scale_score(1, 32768, -22, 0, 6), 1);
  EXPECT_EQ(scale_score(-1, 32768, -22, 0, 6), 0);
  EXPECT_EQ(scale_score(-3, 32768, -22, 0, 6), -1);
  // 5 * 40000 * 2^(-20 - 2 + 6) = 200000 / 65536 = 3.05 -> 3
  EXPECT_EQ(scale_score(5, 40000, -20, -2, 6), 3);
  // a non-negative exponent sum is clamped to shift 0: Y = s * qmul
  EXPECT_EQ(scale_score(7, 40000, 10, 0, 6), 280000);
  // shifts beyond 62 clamp to 62: (131072 * 65535 + 2^61) >> 62 = 0, and -0 for negatives
  EXPECT_EQ(scale_score(131072, 65535, -128, -128, 6), 0);
  EXPECT_EQ(scale_score(-131072, 65535, -128, -128, 6), 0);
}

TEST(ExpFixed, TableThenOctaveShift) {
  const std::vector<uint32_t> lut = exp_lut(6);
  EXPECT_EQ(exp_fixed(0, 6, lut), 65536u);
  EXPECT_EQ(exp_fixed(64, 6, lut), 32768u);           // one octave
  EXPECT_EQ(exp_fixed(65, 6, lut), 64830u >> 1);      // LUT[1] >> 1
  EXPECT_EQ(exp_fixed(64 * 16, 6, lut), 1u);          // 65536 >> 16
  EXPECT_EQ(exp_fixed(64 * 16 + 1, 6, lut), 0u);      // 64830 >> 16
  EXPECT_EQ(exp_fixed(64 * 17, 6, lut), 0u);          // n >= 17
  EXPECT_EQ(exp_fixed(int64_t{1} << 40, 6, lut), 0u);
}

// Two tokens one octave apart, the second with a V exponent 2 below the first:
// Y = {64, 0}, e = {65536, 32768}, sum = 98304, p = {floor(65536*4095/98304), floor(32768*4095/98304)}
// = {2730, 1365}; fold: token 1 shifts by 2: (1365 + 2) >> 2 = 341.
TEST(SoftmaxFixed, TwoTokensByHand) {
  const TileParams p;
  const std::vector<uint32_t> lut = exp_lut(p.exp_frac);
  const std::vector<int64_t> s = {1, 0};
  const std::vector<int> ek = {0, 0}, ev = {0, -2};
  SoftmaxEvents ev_count;
  // 1 * 32768 * 2^(-15 + 0 + 6) = 64
  const SoftmaxOutput out = softmax_fixed(p, s, ek, ev, QueryScale{32768, -15}, lut, ev_count);
  EXPECT_EQ(out.ymax, 64);
  EXPECT_EQ(out.e, (std::vector<uint32_t>{65536, 32768}));
  EXPECT_EQ(out.sum, 98304);
  EXPECT_EQ(out.raw, (std::vector<uint32_t>{2730, 1365}));
  EXPECT_EQ(out.evmax, 0);
  EXPECT_EQ(out.prob, (std::vector<uint32_t>{2730, 341}));
  // per token: 1 multiply, 3 shifts, 4 adds, 2 comparisons, 1 lookup, 1 division, 3 cycles;
  // once: the pipelined divider's fill, ceil(12 / 4) - 1 = 2 cycles
  EXPECT_EQ(ev_count, (SoftmaxEvents{2, 6, 8, 4, 2, 2, 6 + 2}));
}

TEST(SoftmaxFixed, EqualScoresSplitEvenly) {
  const TileParams p;
  const std::vector<uint32_t> lut = exp_lut(p.exp_frac);
  SoftmaxEvents e;
  // e = 65536 each, sum 131072, p = floor(2047.5) = 2047
  const SoftmaxOutput out = softmax_fixed(p, std::vector<int64_t>{-5, -5}, std::vector<int>{-3, -3},
                                          std::vector<int>{4, 4}, QueryScale{50000, -20}, lut, e);
  EXPECT_EQ(out.prob, (std::vector<uint32_t>{2047, 2047}));
  EXPECT_EQ(out.evmax, 4);
}

TEST(SoftmaxFixed, SeventeenOctavesBelowTheMaxIsZero) {
  const TileParams p;
  const std::vector<uint32_t> lut = exp_lut(p.exp_frac);
  SoftmaxEvents e;
  const QueryScale sc{32768, -15};  // Y = 64 s
  const std::vector<int> z = {0, 0};
  // Y = {1088, 0}: d = 1088 = 17 octaves -> 0; p = {4095, 0}
  auto out = softmax_fixed(p, std::vector<int64_t>{17, 0}, z, z, sc, lut, e);
  EXPECT_EQ(out.e, (std::vector<uint32_t>{65536, 0}));
  EXPECT_EQ(out.prob, (std::vector<uint32_t>{4095, 0}));
  // 16 octaves: e = 1, sum 65537, p = {floor(65536*4095/65537), floor(4095/65537)} = {4094, 0}
  out = softmax_fixed(p, std::vector<int64_t>{16, 0}, z, z, sc, lut, e);
  EXPECT_EQ(out.e, (std::vector<uint32_t>{65536, 1}));
  EXPECT_EQ(out.prob, (std::vector<uint32_t>{4094, 0}));
}

TEST(SoftmaxFixed, FoldClampsAt31) {
  const TileParams p;
  const std::vector<uint32_t> lut = exp_lut(p.exp_frac);
  SoftmaxEvents e;
  // equal scores: p = 2047 each; ev = {127, -128}: shift min(255, 31) = 31 -> round(2047/2^31) = 0
  const auto out = softmax_fixed(p, std::vector<int64_t>{0, 0}, std::vector<int>{0, 0},
                                 std::vector<int>{127, -128}, QueryScale{32768, 0}, lut, e);
  EXPECT_EQ(out.evmax, 127);
  EXPECT_EQ(out.prob, (std::vector<uint32_t>{2047, 0}));
}

TEST(TileParams, ValidationNamesTheField) {
  TileParams p;
  EXPECT_NO_THROW(p.validate("t"));
  p.tokens = 0;
  try {
    p.validate("tile.yaml");
    FAIL() << "tokens = 0 accepted";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tile.yaml: tokens = 0"), std::string::npos) << e.what();
  }
  p = TileParams{};
  p.kv_bits = 9;
  EXPECT_THROW(p.validate("t"), kvcim::Error);
  p = TileParams{};
  p.prob_bits = 17;
  EXPECT_THROW(p.validate("t"), kvcim::Error);
  p = TileParams{};
  p.exp_frac = -1;
  EXPECT_THROW(p.validate("t"), kvcim::Error);
  p = TileParams{};
  p.head_dim = 0;
  EXPECT_THROW(CModelTile{p}, kvcim::Error);
}

}  // namespace
