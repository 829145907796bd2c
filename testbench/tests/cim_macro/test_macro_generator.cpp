// The macros' counter-based Gaussian generator: draw i is a function of (seed, i) alone (the same
// for any chunking, thread count and kernel), its draws have the moments and tails of N(0, 1),
// and the first draws of a seed are pinned so that any change of the stream shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "macro_test_util.hpp"

using namespace macro_test;
namespace d = kvcim::cmodel::cim::detail;

namespace {

std::vector<float> draws(uint64_t seed, uint64_t first, int n) {
  std::vector<float> out(n);
  d::normal_draws(d::noise_key(seed), first, n, out.data());
  return out;
}

void check_statistics(bool portable) {
  SCOPED_TRACE(portable ? "portable kernel" : "vector kernel");
  const int n = 1 << 21;
  d::force_portable_kernels(portable);
  const auto z = draws(12345, 0, n);
  d::force_portable_kernels(false);
  double s1 = 0, s2 = 0, s4 = 0, lag1 = 0, pair = 0;
  int beyond2 = 0, beyond3 = 0, positive = 0;
  std::vector<int> bins(20, 0);  // Phi(z) in 20 equal-probability bins
  for (int i = 0; i < n; ++i) {
    const double v = z[i];
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_LT(std::abs(v), 5.8);
    s1 += v;
    s2 += v * v;
    s4 += v * v * v * v;
    if (i + 1 < n) lag1 += v * z[i + 1];
    if ((i & 8) == 0) pair += v * z[i + 8];  // the cosine and the sine of one Box-Muller pair
    beyond2 += std::abs(v) > 2.0;
    beyond3 += std::abs(v) > 3.0;
    positive += v > 0;
    const double u = 0.5 * std::erfc(-v / std::sqrt(2.0));
    ++bins[std::min(19, static_cast<int>(u * 20))];
  }
  const double mean = s1 / n, var = s2 / n - mean * mean;
  // Bounds at about 5 standard errors of each estimate.
  EXPECT_NEAR(mean, 0.0, 0.0035);
  EXPECT_NEAR(var, 1.0, 0.005);
  EXPECT_NEAR(s4 / n, 3.0, 0.035);
  EXPECT_NEAR(lag1 / n, 0.0, 0.0035);
  EXPECT_NEAR(pair / (n / 2), 0.0, 0.005);
  EXPECT_NEAR(static_cast<double>(beyond2) / n, 0.0455, 0.0008);
  EXPECT_NEAR(static_cast<double>(beyond3) / n, 0.0027, 0.00018);
  EXPECT_NEAR(static_cast<double>(positive) / n, 0.5, 0.0018);
  double chi2 = 0;
  for (int b : bins) chi2 += (b - n / 20.0) * (b - n / 20.0) / (n / 20.0);
  EXPECT_LT(chi2, 50.0);  // 19 degrees of freedom: P(chi2 > 50) ~ 1e-4
}

}  // namespace

TEST(MacroGenerator, MomentsTailsAndIndependenceOfNormal) {
  check_statistics(false);
  check_statistics(true);
}

TEST(MacroGenerator, DrawIDependsOnSeedAndIOnly) {
  const auto all = draws(7, 1000, 3000);
  // Any chunking (unaligned starts, tails) and the one-draw function give the same bits.
  for (int start : {0, 1, 5, 15, 16, 17, 333}) {
    const auto part = draws(7, 1000 + start, 400);
    for (int i = 0; i < 400; ++i) {
      ASSERT_EQ(part[i], all[start + i]) << start << " " << i;
      ASSERT_EQ(d::normal_draw(d::noise_key(7), 1000 + start + i), all[start + i]);
    }
  }
  // The portable kernel gives the same bits as each vector one the CPU runs (AVX2: 16 draws at a
  // time, AVX-512: 32), also where the low word of the pair counter carries into the high word
  // within a vector (pairs 2^32 - 8 .. 2^32 + 7 are draws 2^33 - 16 .. 2^33 + 15).
  for (int l = static_cast<int>(d::cpu_kernel_level()); l >= 0; --l) {
    SCOPED_TRACE("kernel level " + std::to_string(l));
    d::cap_kernel_level(static_cast<d::KernelLevel>(l));
    EXPECT_EQ(draws(7, 1000, 3000), all);
    const uint64_t carry = (uint64_t{1} << 33) - 48;
    for (int start = 0; start < 20; ++start) {
      const auto v = draws(7, carry + start, 100);
      for (int i = 0; i < 100; ++i) ASSERT_EQ(v[i], d::normal_draw(d::noise_key(7), carry + start + i)) << start << " " << i;
    }
  }
  d::force_portable_kernels(false);
  // Threads drawing disjoint ranges reproduce the single-thread stream.
  std::vector<float> threaded(3000);
  std::thread t1([&] { d::normal_draws(d::noise_key(7), 1000, 1500, threaded.data()); });
  std::thread t2([&] { d::normal_draws(d::noise_key(7), 2500, 1500, threaded.data() + 1500); });
  t1.join();
  t2.join();
  EXPECT_EQ(threaded, all);
  // Other seeds (also neighbouring ones) give other draws; high counters work.
  EXPECT_NE(draws(8, 1000, 3000), all);
  const auto far = draws(7, (uint64_t{1} << 40) + 1000, 3000);
  EXPECT_NE(far, all);
  int equal = 0;
  const auto other = draws(8, 1000, 3000);
  for (int i = 0; i < 3000; ++i) equal += other[i] == all[i];
  EXPECT_LT(equal, 3);
}

TEST(MacroGenerator, FirstDrawsOfSeedOneArePinned) {
  // The stream on every machine: these are the exact floats (printed with %a).
  const auto z = draws(1, 0, 32);
  const int index[6] = {0, 1, 8, 16, 17, 31};
  const float expect[6] = {-0x1.a637c8p-2f, -0x1.b4cab6p-1f, 0x1.54e8c2p+0f,
                           -0x1.c8a636p+0f, -0x1.6e066ep+0f, 0x1.1e704cp-3f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(z[index[i]], expect[i]) << index[i];
}

TEST(MacroGenerator, RoundedNoiseStreamIsPinnedAndCrossesTheCounterWordsLikeOneByOne) {
  // The rounded read noise's uniforms (detail::noise_uniform) on every machine, and the law's
  // thresholds at sigma 0.15: 2^32 Phi(-1/2 / 0.15) = 1842800 (computed apart, with Python's erfc).
  const auto key = detail::noise_key(1);
  EXPECT_EQ(detail::noise_uniform(key, 0), 0xbf869d3bu);
  EXPECT_EQ(detail::noise_uniform(key, 1), 0x11e748b0u);
  EXPECT_EQ(detail::noise_uniform(key, 1000), 0x2ae48f92u);
  EXPECT_EQ(detail::noise_uniform(key, (uint64_t{1} << 32) + 5), 0xdf8f27b2u);
  const auto law = detail::rounded_noise_law(0.15);
  ASSERT_EQ(law.k_max, 1);
  EXPECT_EQ(law.thr[0], 1842800u);
  EXPECT_EQ(law.thr[1], 4294967296u - 1842800u);
  // A block across the low word's wrap equals the draws taken one by one.
  const auto wide = detail::rounded_noise_law(1.0);
  const uint64_t first = (uint64_t{1} << 32) - 40;
  std::vector<int32_t> block(80);
  detail::rounded_noise(key, first, 80, wide, block.data());
  for (int i = 0; i < 80; ++i) {
    const uint32_t u = detail::noise_uniform(key, first + static_cast<uint64_t>(i));
    int32_t k = -wide.k_max;
    for (int j = 0; j < 2 * wide.k_max; ++j) k += u >= wide.thr[j] ? 1 : 0;
    EXPECT_EQ(block[i], k) << i;
  }
  // The fused form: codes clamp(p + k) added to what pk held, the same draws, clamped at both ends.
  const int32_t top = 6;
  std::vector<uint32_t> p(80), pk(80);
  for (int i = 0; i < 80; ++i) {
    p[i] = static_cast<uint32_t>(i % 7);  // 0 .. top: the noise pushes some past either end
    pk[i] = static_cast<uint32_t>(100 * i);
  }
  detail::rounded_noise_codes(key, first, 80, wide, p.data(), top, pk.data());
  int clamped = 0;
  for (int i = 0; i < 80; ++i) {
    const int32_t v = static_cast<int32_t>(p[i]) + block[i];
    clamped += v < 0 || v > top;
    EXPECT_EQ(pk[i], static_cast<uint32_t>(100 * i + std::clamp(v, 0, top))) << i;
  }
  EXPECT_GT(clamped, 0) << "the case must reach the clamps";
}
