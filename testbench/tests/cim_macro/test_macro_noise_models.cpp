// The fixed noise model (deviations and read noise on a grid of 2^-q levels, integer
// conversions) is the exact model for a user's purposes: the codes of a conversion follow the
// same law (a two-sample chi-square test on many independent conversions), and with the same
// seed the two models give the same code but for conversions within a grid step of a rounding
// boundary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "../../../cmodel/cim/macro_access.hpp"  // the generator (internal)
#include "macro_test_util.hpp"

using namespace macro_test;

namespace {

struct Setting {
  const char* name;
  double cell, read;
  int adc_bits;  // 8: step 1; 7: step 2; 6: step 4 (full scale 64 rows x level 3 = 192)
};

// A macro whose every output is one conversion: 64 rows of one 2-bit cell (2-bit weights, offset
// encoding: level w + 2), unsigned 1-bit inputs, all rows in one conversion, so
// y = code << s - 2 sum(x). Outputs share no cell and no draw: `cols` independent codes per macro,
// each at its own noise-free sum (random weights, the same for every macro and both models), so
// the two samples are the same mixture of conversions (the chi-square test is conservative then).
MacroSpec one_conversion_per_output(const Setting& st, NoiseModel model, uint64_t seed, int cols) {
  MacroSpec s;
  s.kind = MacroKind::analog;
  s.rows = 64;
  s.cols = cols;
  s.rows_per_cycle = 64;
  s.cell_bits = 2;
  s.weight_bits = 2;
  s.encoding = WeightEncoding::offset;
  s.input_signed = false;
  s.input_bits = 1;
  s.adc_bits = st.adc_bits;
  s.cell_noise_sigma = st.cell;
  s.read_noise_sigma = st.read;
  s.noise_model = model;
  s.seed = seed;
  return s;
}

// What the noise did to the codes of `macros` macros x `cols` conversions (seeds first_seed,
// first_seed + 1, ...): each code minus its noise-free code (the law a user sees: the noise's).
std::vector<int64_t> codes(const Setting& st, NoiseModel model, uint64_t first_seed, int macros, int cols) {
  std::mt19937_64 g(77);  // the same data for every macro and model
  std::vector<int32_t> x(64);
  int64_t sx = 0;
  for (auto& v : x) sx += (v = pick(g, 0, 1));
  std::vector<int8_t> w(static_cast<size_t>(64) * cols);
  for (auto& v : w) v = static_cast<int8_t>(pick(g, -2, 1));
  // the noise-free code of each output: round(p / 2^s), p = sum of x (w + 2), half up
  const int sh = one_conversion_per_output(st, model, first_seed, cols).adc_shift();
  std::vector<int64_t> clean(cols, 0);
  for (int o = 0; o < cols; ++o) {
    int64_t p = 0;
    for (int r = 0; r < 64; ++r) p += x[r] * (w[static_cast<size_t>(r) * cols + o] + 2);
    clean[o] = sh == 0 ? p : (p + (int64_t{1} << (sh - 1))) >> sh;
  }
  std::vector<int64_t> out;
  for (int m = 0; m < macros; ++m) {
    const MacroSpec s = one_conversion_per_output(st, model, first_seed + m, cols);
    Macro mac(s);
    mac.write_block(w.data(), 64, cols);
    std::vector<int64_t> y(cols);
    mac.compute(x.data(), 64, y.data(), cols);
    for (int o = 0; o < cols; ++o) out.push_back(((y[o] + 2 * sx) >> sh) - clean[o]);
  }
  return out;
}

// Two-sample chi-square statistic of two equal-size samples of codes (bins with fewer than 10
// codes in both samples together pooled into one), turned into a standard normal score by the
// Wilson-Hilferty transform: about N(0, 1) when both samples follow one law.
double chi_square_z(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::map<int64_t, std::pair<double, double>> bins;
  for (int64_t v : a) bins[v].first += 1;
  for (int64_t v : b) bins[v].second += 1;
  double chi2 = 0, pool_a = 0, pool_b = 0;
  int df = -1;
  for (const auto& [code, n] : bins) {
    if (n.first + n.second < 10) {
      pool_a += n.first;
      pool_b += n.second;
      continue;
    }
    chi2 += (n.first - n.second) * (n.first - n.second) / (n.first + n.second);
    ++df;
  }
  if (pool_a + pool_b > 0) {
    chi2 += (pool_a - pool_b) * (pool_a - pool_b) / (pool_a + pool_b);
    ++df;
  }
  if (df < 1) return 0.0;
  const double k = df, h = 2.0 / (9.0 * k);
  return (std::cbrt(chi2 / k) - (1.0 - h)) / std::sqrt(h);
}

const Setting kSettings[] = {
    {"cell 0.3, step 1", 0.3, 0.0, 8},
    {"cell 0.3 + read 0.3, step 1", 0.3, 0.3, 8},
    {"cell 0.05, step 1", 0.05, 0.0, 8},
    {"cell 0.1 + read 0.5, step 4", 0.1, 0.5, 6},
    {"read 0.4, step 2", 0.0, 0.4, 7},
};
constexpr int kMacros = 16, kCols = 8192;  // 131,072 conversions per model and setting

}  // namespace

TEST(MacroNoiseModels, FixedAndExactCodesFollowOneLaw) {
  // 131,072 independent conversions per model (independent seeds). Each z is N(0, 1) under one
  // law; z > 4 (p < 3.2e-5) fails. Power: a difference of Cohen's w = 0.025 between the code
  // laws (a total variation near 1%) gives a noncentrality 131,072 w^2 / 2 = 41, detected with
  // power above 0.9 at that level for the 5 - 15 bins these settings have.
  for (const Setting& st : kSettings) {
    SCOPED_TRACE(st.name);
    const auto exact = codes(st, NoiseModel::exact, 1, kMacros, kCols);
    const auto fixed = codes(st, NoiseModel::fixed, 1001, kMacros, kCols);
    const double z = chi_square_z(exact, fixed);
    EXPECT_LT(z, 4.0) << "the fixed model's codes follow another law";
    // ... and the test sees a law 20% wider: the same model at 1.2 sigma.
    const Setting wide{st.name, st.cell * 1.2, st.read * 1.2, st.adc_bits};
    EXPECT_GT(chi_square_z(exact, codes(wide, NoiseModel::exact, 2001, kMacros, kCols)), 4.0)
        << "the test must tell sigma from 1.2 sigma";
  }
}

TEST(MacroNoiseModels, SameSeedGivesTheSameCodeButNearARoundingBoundary) {
  // Same seed, same draws: the fixed model's value differs from the exact one by the grid's
  // roundings (each deviation and read draw within 2^-11 levels), so a code can differ only where
  // the exact value lies within about 0.01 levels of a rounding boundary: well under 1% of them.
  for (const Setting& st : kSettings) {
    SCOPED_TRACE(st.name);
    const auto exact = codes(st, NoiseModel::exact, 1, 2, kCols);
    const auto fixed = codes(st, NoiseModel::fixed, 1, 2, kCols);
    ASSERT_EQ(exact.size(), fixed.size());
    int64_t differ = 0;
    for (size_t i = 0; i < exact.size(); ++i) {
      differ += exact[i] != fixed[i];
      ASSERT_LE(std::abs(exact[i] - fixed[i]), 1) << "conversion " << i;
    }
    EXPECT_LT(differ, static_cast<int64_t>(exact.size()) / 100);
  }
}

TEST(MacroNoiseModels, GridIsTenBitsUnlessTheAdcStepLeavesLess) {
  MacroSpec s = one_conversion_per_output(kSettings[1], NoiseModel::fixed, 1, 64);
  EXPECT_EQ(s.noise_grid_bits(), 10);
  s.noise_model = NoiseModel::exact;
  EXPECT_EQ(s.noise_grid_bits(), 0);
  s.noise_model = NoiseModel::fixed;
  s.cell_noise_sigma = s.read_noise_sigma = 0.0;
  EXPECT_EQ(s.noise_grid_bits(), 0) << "noise-free: nothing on a grid";
  // A 1-bit ADC over 65,536 rows of 4-bit cells (step 2^20 levels): the sums would leave int32.
  MacroSpec wide = one_conversion_per_output({"wide", 0.0, 1.0, 1}, NoiseModel::fixed, 1, 8);
  wide.rows = wide.rows_per_cycle = 65536;
  wide.cell_bits = wide.weight_bits = 4;
  EXPECT_EQ(wide.adc_shift(), 20);
  EXPECT_EQ(wide.noise_grid_bits(), 0) << "65,536 rows x level 1 x 2^15 leaves int32: exact";
  wide.rows = wide.rows_per_cycle = 16384;
  EXPECT_EQ(wide.adc_shift(), 18);
  EXPECT_EQ(wide.noise_grid_bits(), 10);
  wide.input_bits = 2;  // a 2-bit DAC: u_max 3, so 16,384 rows x 3 x 2^15 leaves int32 too
  wide.input_bits_per_cycle = 2;
  EXPECT_EQ(wide.noise_grid_bits(), 0);
  MacroSpec bad = s;
  bad.noise_model = static_cast<NoiseModel>(7);
  EXPECT_NE(error_of([&] { bad.validate("m"); }).find("noise_model"), std::string::npos);
}

TEST(MacroNoiseModels, FixedReadNoiseIsEachDrawRoundedHalfAwayOnTheGrid) {
  // Both of the fixed model's paths take its read noise from Macro::read_noise_fixed, so the
  // bit-level reference cannot check it: each value must be draw i of the seed times sigma 2^q
  // (in float, the draws' precision), clamped to +-2^24 and rounded half away from zero, call
  // after call (the counter moves on by n), whatever the loop's vector form. At sigma 5,000 levels
  // the clamp is taken (|draw| > 3.3).
  for (const double sigma : {0.3, 7.5, 5000.0}) {
    MacroSpec s = one_conversion_per_output({"read", 0.0, sigma, 8}, NoiseModel::fixed, 11, 8);
    SCOPED_TRACE("sigma " + std::to_string(sigma));
    Macro m(s);
    const int q = detail::MacroAccess::fixed_q(m);
    ASSERT_EQ(q, 10);
    const detail::NoiseKey key = detail::noise_key(s.seed);
    const float a = static_cast<float>(std::ldexp(sigma, q));
    uint64_t at = detail::MacroAccess::noise_draws(m);
    int clamped = 0, halves_away = 0;
    for (const int n : {1, 7, 64, 1000, 4096}) {
      std::vector<int32_t> R(static_cast<size_t>(n));
      detail::MacroAccess::read_noise_fixed(m, R.data(), n);
      for (int i = 0; i < n; ++i) {
        float v = a * detail::normal_draw(key, at + static_cast<uint64_t>(i));
        clamped += std::fabs(v) > 16777216.f;
        v = std::min(std::max(v, -16777216.f), 16777216.f);
        const float t = std::trunc(v), frac = std::fabs(v - t);
        halves_away += frac >= 0.5f;
        const auto want = static_cast<int32_t>(frac >= 0.5f ? t + std::copysign(1.f, v) : t);
        ASSERT_EQ(R[static_cast<size_t>(i)], want) << "draw " << at + static_cast<uint64_t>(i) << ", sigma 2^q draw " << v;
      }
      at += static_cast<uint64_t>(n);
      ASSERT_EQ(detail::MacroAccess::noise_draws(m), at);
    }
    EXPECT_GT(halves_away, 1000) << "values rounded away from zero must occur";
    if (sigma > 1000.0) {
      EXPECT_GT(clamped, 0) << "the clamp must be taken";
    }
  }
}
