// The analog read-out: ADC step (a power of two), rounding half up, clipping at the top code, the
// calibrated range. Each expected code is worked out by hand in the comments from the rules of
// docs/cim_macro.md, not by calling the implementation.
#include <gtest/gtest.h>

#include <cmath>

#include "macro_test_util.hpp"

using namespace macro_test;

namespace {

// 4 rows summed at once, 1-bit cells, 2-bit two's-complement weights (slice 0: bit 0, weight +1;
// slice 1: the sign bit, weight -2), unsigned 1-bit inputs (one cycle). Full scale = 4 * 1 * 1.
MacroSpec tiny(int adc_bits, AdcRange range = AdcRange::full_scale, double clip = 1.0) {
  MacroSpec base;
  base.kind = MacroKind::analog;
  base.cell_bits = 1;
  base.input_signed = false;
  MacroSpec s = with_geometry(base, {.rows = 4, .rows_per_cycle = 4, .cols = 2, .weight_bits = 2,
                                     .input_bits = 1, .adc_bits = adc_bits});
  s.adc_range = range;
  s.adc_clip = clip;
  return s;
}

int64_t run(const MacroSpec& s, const std::vector<int8_t>& w, const std::vector<int32_t>& x,
            bool reference) {
  Macro m(s);
  m.write_block(w.data(), static_cast<int>(w.size()), 1);
  int64_t y = 0;
  if (reference)
    m.compute_reference(x.data(), static_cast<int>(x.size()), &y, 1);
  else
    m.compute(x.data(), static_cast<int>(x.size()), &y, 1);
  return y;
}

void expect_both(const MacroSpec& s, const std::vector<int8_t>& w, const std::vector<int32_t>& x,
                 int64_t expect) {
  EXPECT_EQ(run(s, w, x, true), expect);
  EXPECT_EQ(run(s, w, x, false), expect);
}

}  // namespace

TEST(MacroAdc, StepIsThePowerOfTwoThatCoversTheRange) {
  EXPECT_EQ(tiny(3).adc_full_scale(), 4);
  EXPECT_EQ(tiny(3).adc_shift(), 0);  // 7 >= 4
  EXPECT_EQ(tiny(2).adc_shift(), 1);  // 3 < 4, 3*2 >= 4
  EXPECT_EQ(tiny(1).adc_shift(), 2);  // 1*4 >= 4
  EXPECT_EQ(tiny(1, AdcRange::calibrated, 0.5).adc_shift(), 1);   // range 2: 1*2 >= 2
  EXPECT_EQ(tiny(2, AdcRange::calibrated, 0.25).adc_shift(), 0);  // range 1
  MacroSpec s;  // defaults: 64 rows, 1-bit cells, bit-serial: full scale 64; 8-bit ADC lossless
  s.kind = MacroKind::analog;
  EXPECT_EQ(s.adc_full_scale(), 64);
  EXPECT_EQ(s.adc_shift(), 0);
  s.adc_bits = 4;  // 15 * 2^2 = 60 < 64, 15 * 2^3 >= 64
  EXPECT_EQ(s.adc_shift(), 3);
  s.cell_bits = 3;  // widest slice 3 bits (7 magnitude bits in 3-bit cells), dmax 1: 64 * 7
  EXPECT_EQ(s.adc_full_scale(), 64 * 7);
  s.input_bits_per_cycle = 2;  // widest input piece 2 bits: 64 * 3 * 7
  EXPECT_EQ(s.adc_full_scale(), 64 * 3 * 7);
}

TEST(MacroAdc, TwoBitAdcRoundsHalfUpAtStepTwo) {
  // Weights 1, 1, 1, -1: slice 0 levels 1,1,1,1; sign slice levels 0,0,0,1.
  const std::vector<int8_t> w = {1, 1, 1, -1};
  // x = 1,1,1,0: slice 0 p = 3 -> floor(3/2 + 1/2) = 2 -> 4; sign slice p = 0 -> 0.
  // y = 4 - 2*0 = 4 (exact 3: the ADC rounds 3 up to 4).
  expect_both(tiny(2), w, {1, 1, 1, 0}, 4);
  // x = 1,1,1,1: slice 0 p = 4 -> 2 -> 4; sign p = 1 -> floor(1/2 + 1/2) = 1 -> 2. y = 4 - 4 = 0
  // (exact 2).
  expect_both(tiny(2), w, {1, 1, 1, 1}, 0);
  // x = 1,0,0,1: slice 0 p = 2 -> floor(1.5) = 1 -> 2; sign p = 1 -> 2. y = 2 - 4 = -2 (exact 0).
  expect_both(tiny(2), w, {1, 0, 0, 1}, -2);
  // lossless with 3 bits: the exact products 3, 2, 0
  expect_both(tiny(3), w, {1, 1, 1, 0}, 3);
  expect_both(tiny(3), w, {1, 1, 1, 1}, 2);
  expect_both(tiny(3), w, {1, 0, 0, 1}, 0);
}

TEST(MacroAdc, OneBitAdcAndCalibratedClipping) {
  const std::vector<int8_t> w = {1, 1, 1, 1};  // slice 0 all 1, sign slice all 0
  // 1-bit full scale: step 4, codes {0, 1}. p = 1 -> floor(0.25 + 0.5) = 0; p = 2 -> 1 -> 4;
  // p = 3 -> floor(1.25) = 1 -> 4.
  expect_both(tiny(1), w, {1, 0, 0, 0}, 0);
  expect_both(tiny(1), w, {1, 1, 0, 0}, 4);
  expect_both(tiny(1), w, {1, 1, 1, 0}, 4);
  // Calibrated at half scale: step 2, codes {0, 1}. p = 1 -> floor(1) = 1 -> 2;
  // p = 3 -> floor(2) = 2, clipped to the top code 1 -> 2; p = 4 -> clipped -> 2.
  const MacroSpec cal = tiny(1, AdcRange::calibrated, 0.5);
  expect_both(cal, w, {1, 0, 0, 0}, 2);
  expect_both(cal, w, {1, 1, 1, 0}, 2);
  expect_both(cal, w, {1, 1, 1, 1}, 2);
  // 2-bit calibrated at a quarter: step 1, codes 0..3: p = 4 clips to 3 (exact 4).
  expect_both(tiny(2, AdcRange::calibrated, 0.25), w, {1, 1, 1, 1}, 3);
}

TEST(MacroAdc, ShiftAndAddOfQuantisedPartialSumsAcrossCyclesAndGroups) {
  // Signed 3-bit inputs bit-serial (bit 0 weight 1, bit 1 weight 2, sign bit weight -4), two row
  // groups of 2, 1-bit cells, 3-bit two's-complement weights (bits 0,1 and the sign bit).
  // Full scale = 2 rows * 1 * 1 = 2; a 1-bit ADC has step 2: p = 1 -> 1 -> 2, p = 2 -> 1 -> 2.
  MacroSpec base;
  base.kind = MacroKind::analog;
  MacroSpec s = with_geometry(base, {.rows = 4, .rows_per_cycle = 2, .cols = 3,
                                     .weight_bits = 3, .input_bits = 3, .adc_bits = 1});
  ASSERT_EQ(s.adc_shift(), 1);
  // weights 3 (011), 1 (001), 0, 2 (010); inputs 1 (001), 3 (011), -4 (100), 2 (010)
  const std::vector<int8_t> w = {3, 1, 0, 2};
  const std::vector<int32_t> x = {1, 3, -4, 2};
  // Column partial sums p[slice][cycle][group] (rows 0,1 | rows 2,3); any p > 0 reads as 2:
  // slice 0 (bit 0 of w: 1,1,0,0): cycle 0 (x bit0: 1,1,0,0): g0 p=2 -> 2; g1 0
  //                                 cycle 1 (x bit1: 0,1,0,1): g0 p=1 -> 2; g1 0
  //                                 sign cycle (0,0,1,0):      g0 0;       g1 0
  // slice 1 (bit 1 of w: 1,0,0,1): cycle 0: g0 p=1 -> 2; g1 0 | cycle 1: g0 0; g1 p=1 -> 2
  //                                 sign cycle: g1 0
  // sign slice: all 0.
  // y = 1*(1*2 + 2*2) + 2*(1*2 + 2*2) = 6 + 12 = 18  (exact: 3 + 3 + 0 + 4 = 10)
  expect_both(s, w, x, 18);
  s.adc_bits = 2;  // lossless (3 >= 2): the exact product
  expect_both(s, w, x, 10);
}

TEST(MacroAdc, ErrorStaysWithinTheQuantisationBound) {
  // Without clipping every conversion errs by at most half a step, so with 1-bit cells and
  // bit-serial inputs |y - exact| <= G * 2^(s-1) * (2^W - 1) * (2^B - 1).
  std::mt19937_64 g(99);
  int lossy = 0;
  for (int t = 0; t < 300; ++t) {
    MacroSpec s;
    s.kind = MacroKind::analog;
    s.rows = pick(g, 1, 128);
    s.rows_per_cycle = pick(g, 1, s.rows);
    s.weight_bits = pick(g, 2, 8);
    s.input_bits = pick(g, 2, 8);
    s.cols = s.weight_bits * pick(g, 1, 6);
    s.adc_bits = pick(g, 1, 8);
    int shift = 0;
    while (((int64_t{1} << s.adc_bits) - 1) << shift < s.rows_per_cycle) ++shift;
    ASSERT_EQ(s.adc_shift(), shift);
    lossy += shift > 0;
    Macro m(s);
    const int n_rows = s.rows, n_out = s.weights_per_row();
    std::vector<int8_t> w(n_rows * n_out);
    for (auto& v : w) v = static_cast<int8_t>(random_value(g, wmin(s), wmax(s)));
    std::vector<int32_t> x(n_rows);
    for (auto& v : x) v = random_value(g, xmin(s), xmax(s));
    m.write_block(w.data(), n_rows, n_out);
    std::vector<int64_t> y(n_out);
    m.compute(x.data(), n_rows, y.data(), n_out);
    const auto exact = exact_product(x, w, n_rows, n_out);
    const double bound = s.row_groups(n_rows) * std::ldexp(1.0, shift - 1) *
                         ((1 << s.weight_bits) - 1) * ((1 << s.input_bits) - 1);
    for (int o = 0; o < n_out; ++o) {
      EXPECT_LE(std::fabs(static_cast<double>(y[o] - exact[o])), bound);
      if (shift == 0) {
        EXPECT_EQ(y[o], exact[o]);
      }
    }
  }
  EXPECT_GT(lossy, 100);
}
