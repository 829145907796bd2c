// cmodel/quant: the rounding rule (half away from zero), symmetric saturation, per-row weight
// scales, per-token activation scales, the power-of-two KV format and shift_round. Expected codes
// are worked out by hand in the comments; inputs are chosen so that every quotient is exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "kvcim/cmodel/quant/quant.hpp"
#include "error_of.hpp"
#include "random_matrix.hpp"
#include "kvcim/error.hpp"

using namespace kvcim::cmodel;
using namespace kvcim::cmodel::quant;

using kvcim::test::error_of;

using kvcim::test::random_matrix;

TEST(Quant, QmaxPerWidthAndRejectsOtherWidths) {
  EXPECT_EQ(qmax(2), 1);
  EXPECT_EQ(qmax(4), 7);
  EXPECT_EQ(qmax(8), 127);
  EXPECT_NE(error_of([] { qmax(1); }).find("bits"), std::string::npos);
  EXPECT_NE(error_of([] { qmax(9); }).find("9"), std::string::npos);
}

TEST(Quant, HalvesRoundAwayFromZero) {
  EXPECT_EQ(quantize_value(2.5f, 1.0f, 8), 3);
  EXPECT_EQ(quantize_value(-2.5f, 1.0f, 8), -3);
  EXPECT_EQ(quantize_value(0.5f, 1.0f, 8), 1);
  EXPECT_EQ(quantize_value(-0.5f, 1.0f, 8), -1);
  EXPECT_EQ(quantize_value(1.5f, 0.5f, 8), 3);   // 3.0 exactly
  EXPECT_EQ(quantize_value(1.25f, 0.5f, 8), 3);  // 2.5 -> 3
  EXPECT_EQ(quantize_value(std::nextafter(0.5f, 0.0f), 1.0f, 8), 0);  // just below a half
  EXPECT_EQ(quantize_value(-0.0f, 1.0f, 8), 0);
}

TEST(Quant, SaturatesSymmetricallyAtQmax) {
  EXPECT_EQ(quantize_value(127.4f, 1.0f, 8), 127);
  EXPECT_EQ(quantize_value(127.5f, 1.0f, 8), 127);  // would round to 128
  EXPECT_EQ(quantize_value(-128.0f, 1.0f, 8), -127);  // -2^(b-1) is never produced
  EXPECT_EQ(quantize_value(1e30f, 1.0f, 8), 127);
  EXPECT_EQ(quantize_value(-std::numeric_limits<float>::infinity(), 1.0f, 4), -7);
  EXPECT_EQ(quantize_value(1.5f, 1.0f, 2), 1);
  EXPECT_EQ(quantize_value(-1.5f, 1.0f, 2), -1);
}

TEST(Quant, RejectsNanAndBadScales) {
  EXPECT_NE(error_of([] { quantize_value(std::nanf(""), 1.0f, 8); }).find("x"), std::string::npos);
  EXPECT_NE(error_of([] { quantize_value(1.0f, 0.0f, 8); }).find("scale"), std::string::npos);
  EXPECT_NE(error_of([] { quantize_value(1.0f, -1.0f, 8); }).find("scale"), std::string::npos);
  const float bad[3] = {1.0f, std::nanf(""), 2.0f};
  EXPECT_NE(error_of([&] { quantize_activation(bad, 3, 8); }).find("x[1]"), std::string::npos);
  EXPECT_NE(error_of([&] { quantize_pow2(bad, 3, 8); }).find("x[1]"), std::string::npos);
  EXPECT_NE(error_of([&] { quantize_activation(bad, -1, 8); }).find("n"), std::string::npos);
}

TEST(Quant, WeightsHavePerOutputChannelScales) {
  Matrix w(3, 4);
  w << 3.0f, 1.5f, -1.5f, 0.5f,     // max 3, bits 3 (qmax 3): scale 1 -> 3, 2, -2, 1
       -6.0f, 3.0f, 1.0f, 0.0f,     // max 6: scale 2 -> -3, 2 (1.5), 1 (0.5), 0
       0.0f, 0.0f, 0.0f, 0.0f;      // zero row: scale 1, codes 0
  const auto q = quantize_weights(w, 3);
  ASSERT_EQ(q.rows, 3);
  ASSERT_EQ(q.cols, 4);
  EXPECT_EQ(q.bits, 3);
  EXPECT_FLOAT_EQ(q.scale[0], 1.0f);
  EXPECT_FLOAT_EQ(q.scale[1], 2.0f);
  EXPECT_FLOAT_EQ(q.scale[2], 1.0f);
  const int8_t expect[12] = {3, 2, -2, 1, -3, 2, 1, 0, 0, 0, 0, 0};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(q.q[i], expect[i]) << "element " << i;
}

TEST(Quant, WeightReconstructionErrorIsAtMostHalfAStep) {
  std::mt19937 gen(7);
  for (int bits = kMinBits; bits <= kMaxBits; ++bits) {
    const Matrix w = random_matrix(5, 33, gen);
    const auto q = quantize_weights(w, bits);
    for (int r = 0; r < 5; ++r) {
      bool hit_qmax = false;
      for (int c = 0; c < 33; ++c) {
        const int v = q.q[r * 33 + c];
        EXPECT_LE(std::abs(v), qmax(bits));
        hit_qmax |= std::abs(v) == qmax(bits);
        EXPECT_LE(std::fabs(v * q.scale[r] - w(r, c)), 0.5f * q.scale[r] * (1 + 1e-5f));
      }
      EXPECT_TRUE(hit_qmax) << "the row maximum maps to +-qmax";
    }
  }
}

// quantize_weights' inlined rounding gives exactly quantize_value's codes, ties included.
TEST(Quant, WeightCodesAreQuantizeValueOfEachElement) {
  std::mt19937 gen(11);
  for (int bits = kMinBits; bits <= kMaxBits; ++bits) {
    Matrix w = random_matrix(7, 40, gen);
    // exact ties x / scale = k + 0.5 in row 0 (scale = 2 / qmax: the row maximum is 2)
    const float s = 2.0f / qmax(bits);
    w(0, 0) = 2.0f;
    for (int c = 1; c < 40; ++c) w(0, c) = (c % 2 ? 1 : -1) * ((c % qmax(bits)) + 0.5f) * s * 0.999f;
    w(0, 1) = 0.5f * s;
    w(0, 2) = -0.5f * s;
    const auto q = quantize_weights(w, bits);
    for (int r = 0; r < 7; ++r)
      for (int c = 0; c < 40; ++c)
        ASSERT_EQ(q.q[r * 40 + c], quantize_value(w(r, c), q.scale[r], bits)) << bits << " " << r << " " << c;
  }
}

TEST(Quant, ActivationsHaveOneDynamicScalePerToken) {
  const float x[4] = {2.0f, 1.0f, -1.0f, 0.9f};  // bits 2 (qmax 1): scale 2 -> 1, 1 (0.5), -1, 0
  const auto q = quantize_activation(x, 4, 2);
  EXPECT_FLOAT_EQ(q.scale, 2.0f);
  EXPECT_EQ(q.q, (std::vector<int8_t>{1, 1, -1, 0}));
  const float z[3] = {0.0f, -0.0f, 0.0f};
  const auto qz = quantize_activation(z, 3, 8);
  EXPECT_FLOAT_EQ(qz.scale, 1.0f);
  EXPECT_EQ(qz.q, (std::vector<int8_t>{0, 0, 0}));
  EXPECT_TRUE(quantize_activation(nullptr, 0, 8).q.empty());
}

TEST(Quant, ActivationsIntoInt32AreTheSameCodesAndScale) {
  // What the CIM linear layers quantise a batch with: quantize_activation's codes and scale
  // for every width, halves that round away from zero included, and the same refusals.
  std::mt19937 g(5);
  for (int bits = 2; bits <= 8; ++bits)
    for (int t = 0; t < 20; ++t) {
      std::vector<float> x(37);
      for (auto& v : x) v = std::uniform_real_distribution<float>(-3.f, 3.f)(g);
      if (t % 4 == 0) x[3] = x[0] * 0.5f;  // an exact half of the maximum
      const auto want = quantize_activation(x.data(), 37, bits);
      std::vector<int32_t> got(37, 99);
      EXPECT_EQ(quantize_activation_into(x.data(), 37, bits, got.data()), want.scale);
      for (int i = 0; i < 37; ++i) ASSERT_EQ(got[i], want.q[i]) << bits << " " << t << " " << i;
    }
  const float bad[3] = {1.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
  int32_t out[3];
  EXPECT_NE(error_of([&] { quantize_activation_into(bad, 3, 8, out); }).find("x[1]"), std::string::npos);
}

TEST(Quant, Pow2ExponentIsTheSmallestThatCoversTheMaximum) {
  const float a[3] = {3.0f, -1.0f, 0.5f};  // bits 3: 3 <= 3 * 2^0 -> e = 0; codes 3, -1, 1
  const auto qa = quantize_pow2(a, 3, 3);
  EXPECT_EQ(qa.exponent, 0);
  EXPECT_EQ(qa.q, (std::vector<int8_t>{3, -1, 1}));
  const float b[1] = {3.01f};  // > 3 * 2^0 -> e = 1; 1.505 -> 2
  const auto qb = quantize_pow2(b, 1, 3);
  EXPECT_EQ(qb.exponent, 1);
  EXPECT_EQ(qb.q[0], 2);
  const float c[2] = {0.75f, -0.375f};  // bits 8: 127/128 >= .75 > 127/256 -> e = -7; 96, -48
  const auto qc = quantize_pow2(c, 2, 8);
  EXPECT_EQ(qc.exponent, -7);
  EXPECT_EQ(qc.q, (std::vector<int8_t>{96, -48}));
  const float z[2] = {0.0f, 0.0f};
  const auto qz = quantize_pow2(z, 2, 8);
  EXPECT_EQ(qz.exponent, kPow2ZeroExponent);
  EXPECT_EQ(qz.q, (std::vector<int8_t>{0, 0}));
  const float h[2] = {-6.0f, 2.5f};  // bits 3: e = 1; -3, 1.25 -> 1 ... and -2.5 tie below
  const auto qh = quantize_pow2(h, 2, 3);
  EXPECT_EQ(qh.exponent, 1);
  EXPECT_EQ(qh.q, (std::vector<int8_t>{-3, 1}));
}

TEST(Quant, Pow2PropertiesOnRandomVectors) {
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> mag(-20.0f, 10.0f);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int t = 0; t < 500; ++t) {
    const int bits = kMinBits + t % (kMaxBits - kMinBits + 1);
    const float s = std::exp2(mag(gen));
    std::vector<float> x(1 + t % 17);
    for (auto& v : x) v = s * nd(gen);
    const auto q = quantize_pow2(x.data(), static_cast<int>(x.size()), bits);
    float m = 0;
    for (float v : x) m = std::max(m, std::fabs(v));
    if (m == 0) continue;
    const double step = std::ldexp(1.0, q.exponent);
    EXPECT_LE(m, qmax(bits) * step);
    EXPECT_GT(m, qmax(bits) * step / 2);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_LE(std::fabs(q.q[i] * step - x[i]), step / 2);
  }
}

TEST(Quant, ShiftRoundRoundsHalfUp) {
  EXPECT_EQ(shift_round(7, 0), 7);
  EXPECT_EQ(shift_round(5, 1), 3);    // 2.5 -> 3
  EXPECT_EQ(shift_round(-5, 1), -2);  // -2.5 -> -2 (half up, not away from zero)
  EXPECT_EQ(shift_round(4, 2), 1);
  EXPECT_EQ(shift_round(5, 2), 1);    // 1.25
  EXPECT_EQ(shift_round(6, 2), 2);    // 1.5
  EXPECT_EQ(shift_round(-6, 2), -1);  // -1.5
  EXPECT_EQ(shift_round(-7, 2), -2);  // -1.75
  EXPECT_EQ(shift_round(std::numeric_limits<int64_t>::max(), 1), int64_t{1} << 62);
  EXPECT_EQ(shift_round(std::numeric_limits<int64_t>::min(), 62), -2);
  EXPECT_NE(error_of([] { shift_round(1, -1); }).find("shift"), std::string::npos);
  EXPECT_NE(error_of([] { shift_round(1, 63); }).find("63"), std::string::npos);
  for (int64_t v = -300; v <= 300; ++v)
    for (int s = 1; s < 6; ++s)
      EXPECT_EQ(shift_round(v, s), static_cast<int64_t>(std::floor(v / std::ldexp(1.0, s) + 0.5)));
}
