// Seeded noise: reproducible for a seed, different across seeds, drawn once per cell when written
// (cell noise) and once per conversion (read noise), of the documented size.
#include <gtest/gtest.h>

#include <cmath>

#include "macro_test_util.hpp"

using namespace macro_test;

namespace {

MacroSpec noisy(double cell, double read, uint64_t seed) {
  MacroSpec s;
  s.kind = MacroKind::analog;
  s.rows = 64;
  s.cols = 64;
  s.adc_bits = 12;  // fine step (1): the noise shows in the result
  s.cell_noise_sigma = cell;
  s.read_noise_sigma = read;
  s.seed = seed;
  return s;
}

std::vector<int64_t> run(const MacroSpec& s, int computes, bool reference = false) {
  Macro m(s);
  std::mt19937_64 g(1234);  // the data are fixed; only the macro's seed varies
  std::vector<int8_t> w(64 * 8);
  for (auto& v : w) v = static_cast<int8_t>(random_value(g, -128, 127));
  m.write_block(w.data(), 64, 8);
  std::vector<int32_t> x(64);
  for (auto& v : x) v = random_value(g, -128, 127);
  std::vector<int64_t> all, y(8);
  for (int i = 0; i < computes; ++i) {
    if (reference)
      m.compute_reference(x.data(), 64, y.data(), 8);
    else
      m.compute(x.data(), 64, y.data(), 8);
    all.insert(all.end(), y.begin(), y.end());
  }
  return all;
}

}  // namespace

TEST(MacroNoise, ReproducibleForASeedDifferentAcrossSeeds) {
  for (auto [cell, read] : {std::pair{0.3, 0.0}, std::pair{0.0, 0.7}, std::pair{0.2, 0.5}}) {
    EXPECT_EQ(run(noisy(cell, read, 7), 3), run(noisy(cell, read, 7), 3));
    EXPECT_NE(run(noisy(cell, read, 7), 3), run(noisy(cell, read, 8), 3));
  }
}

TEST(MacroNoise, CellNoiseIsDrawnOnceReadNoiseOnEveryRead) {
  // Cell noise only: the programmed deviation is fixed, so repeated computes agree.
  const auto c = run(noisy(0.3, 0.0, 3), 2);
  EXPECT_TRUE(std::equal(c.begin(), c.begin() + 8, c.begin() + 8));
  // Read noise: each compute draws anew.
  const auto r = run(noisy(0.0, 0.7, 3), 2);
  EXPECT_FALSE(std::equal(r.begin(), r.begin() + 8, r.begin() + 8));
}

TEST(MacroNoise, FastPathDrawsReadNoiseInTheReferenceOrder) {
  EXPECT_EQ(run(noisy(0.0, 0.7, 11), 3, false), run(noisy(0.0, 0.7, 11), 3, true));
  EXPECT_EQ(run(noisy(0.25, 0.4, 11), 2, false), run(noisy(0.25, 0.4, 11), 2, true));
}

TEST(MacroNoise, ZeroSigmaIsExactAndNoiseHasTheDocumentedSize) {
  const auto clean = run(noisy(0.0, 0.0, 1), 1);
  // Weight -1 in 2-bit two's complement: level 1 in both its columns (bit 0, weight +1; sign bit,
  // weight -2). Unsigned 1-bit inputs all 1: each column reads p = 64 + N(0, sigma), step 1, far
  // from the ADC's ends. y = (64 + n0 + e0) - 2 (64 + n1 + e1) with e the rounding (uniform,
  // variance 1/12): mean -64, spread sqrt(5 (sigma^2 + 1/12)).
  MacroSpec s = noisy(0.0, 2.0, 5);
  s.input_signed = false;
  s.input_bits = 1;
  s.weight_bits = 2;
  s.adc_bits = 8;
  Macro m(s);
  std::vector<int8_t> w(64, -1);
  m.write_column_group(0, w.data(), 64);
  std::vector<int32_t> x(64, 1);
  double sum = 0, sum2 = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    int64_t y;
    m.compute(x.data(), 64, &y, 1);
    const double e = static_cast<double>(y + 64);
    sum += e;
    sum2 += e * e;
  }
  const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.3);
  EXPECT_NEAR(sd, std::sqrt(5 * (4.0 + 1.0 / 12)), 0.25);
  // ... while the clean run is the exact product.
  MacroSpec q = noisy(0.0, 0.0, 1);
  q.kind = MacroKind::digital;
  EXPECT_EQ(clean, run(q, 1));
}

// P(round(n) = j), n ~ N(0, sigma^2): the law the rounded read noise must draw.
static double rounded_probability(int j, double sigma) {
  const auto phi = [sigma](double x) { return 0.5 * std::erfc(-x / (sigma * std::sqrt(2.0))); };
  return phi(j + 0.5) - phi(j - 0.5);
}

TEST(MacroNoise, RoundedReadNoiseDrawsTheLawOfRoundedGaussians) {
  // 2^20 draws at each sigma: every value's count within 5 binomial sigmas of n P(j).
  const auto key = detail::noise_key(99);
  const int n = 1 << 20;
  std::vector<int32_t> k(n);
  for (double sigma : {0.15, 0.3, 0.8, 1.2}) {
    SCOPED_TRACE("sigma " + std::to_string(sigma));
    const auto law = detail::rounded_noise_law(sigma);
    ASSERT_GT(law.k_max, 0);
    EXPECT_LT(rounded_probability(law.k_max + 1, sigma), 1e-9);  // the tails it leaves out
    detail::rounded_noise(key, 12345, n, law, k.data());
    for (int j = -law.k_max; j <= law.k_max; ++j) {
      const double expected = n * rounded_probability(j, sigma);
      const double count = static_cast<double>(std::count(k.begin(), k.end(), j));
      EXPECT_NEAR(count, expected, 5.0 * std::sqrt(expected) + 1.0) << "j = " << j;
    }
    // Counter-based: draws [first, first + n) are the same whichever call takes them.
    std::vector<int32_t> tail(100);
    detail::rounded_noise(key, 12345 + 500, 100, law, tail.data());
    EXPECT_TRUE(std::equal(tail.begin(), tail.end(), k.begin() + 500));
  }
  EXPECT_EQ(detail::rounded_noise_law(2.0).k_max, 0);  // wider: the Gaussian path
  EXPECT_EQ(detail::rounded_noise_law(0.0).k_max, 0);
}

TEST(MacroNoise, StepOneReadNoiseAloneIsTheRoundedNoiseByHand) {
  // The set-up of the test above: two columns read p = 64 each at step 1 (8-bit ADC, 64 rows of
  // 1-bit products), y = (64 + k0) - 2 (64 + k1), k the rounded noise of conversions 0 and 1,
  // then 2 and 3 for the second compute. Both compute paths.
  for (bool reference : {false, true}) {
    MacroSpec s = noisy(0.0, 0.5, 5);
    s.input_signed = false;
    s.input_bits = 1;
    s.weight_bits = 2;
    s.adc_bits = 8;
    ASSERT_EQ(s.adc_shift(), 0);
    Macro m(s);
    std::vector<int8_t> w(64, -1);
    m.write_column_group(0, w.data(), 64);
    std::vector<int32_t> x(64, 1);
    std::vector<int32_t> k(4);
    detail::rounded_noise(detail::noise_key(5), 0, 4, detail::rounded_noise_law(0.5), k.data());
    for (int c = 0; c < 2; ++c) {
      int64_t y;
      if (reference)
        m.compute_reference(x.data(), 64, &y, 1);
      else
        m.compute(x.data(), 64, &y, 1);
      EXPECT_EQ(y, (64 + k[2 * c]) - 2 * (64 + k[2 * c + 1])) << "compute " << c << (reference ? ", reference" : "");
    }
  }
}

TEST(MacroNoise, CellNoiseScalesWithTheInputLevel) {
  // Weight 1: a level-1 cell (deviation d0) and a level-0 sign cell (deviation d1). Input 0 reads
  // 0 exactly (no current flows), so zero inputs see no cell noise; input 1 reads
  // round(1 + d0) - 2 clamp(round(d1), 0, 3), which is 1 only when both deviations are small.
  MacroSpec s = with_geometry(noisy(0.4, 0.0, 21), {.rows = 1, .rows_per_cycle = 1, .cols = 64,
                                                     .weight_bits = 2, .input_bits = 1, .adc_bits = 2});
  s.input_signed = false;
  int nonzero = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    s.seed = seed;
    Macro m(s);
    m.write(0, 0, 1);
    const int32_t zero = 0, one = 1;
    int64_t y;
    m.compute(&zero, 1, &y, 1);
    EXPECT_EQ(y, 0);
    m.compute(&one, 1, &y, 1);
    EXPECT_GE(y, -6);
    EXPECT_LE(y, 3);
    nonzero += y != 1;
  }
  EXPECT_GT(nonzero, 3);  // P(|N(0, .4)| >= .5) ~ 0.21 per seed
}

TEST(MacroNoise, BlockWriteEqualsWritesOneByOne) {
  // write_block fills the bit-planes a word at a time and takes the cell draws in bulk; row by
  // row writes go through store() one weight at a time. Over a full block, then a partial one
  // (40 rows: a word whose upper rows must keep their bits), both leave the same cells, the same
  // programmed noise and the same generator state: every later compute agrees, fast and reference.
  for (int cell_bits : {1, 2}) {
    MacroSpec s = noisy(0.3, 0.5, 17);
    s.rows = 100;  // two row words, the second partial
    s.cell_bits = cell_bits;
    std::mt19937_64 g(99);
    std::vector<int8_t> full(static_cast<size_t>(s.rows) * 8), part(40 * 8);
    for (auto& v : full) v = static_cast<int8_t>(random_value(g, -128, 127));
    for (auto& v : part) v = static_cast<int8_t>(random_value(g, -128, 127));
    std::vector<int32_t> x(s.rows);
    for (auto& v : x) v = random_value(g, -128, 127);
    Macro bulk(s), single(s);
    bulk.write_block(full.data(), s.rows, 8);
    bulk.write_block(part.data(), 40, 8);
    for (int r = 0; r < s.rows; ++r) single.write_row(r, &full[static_cast<size_t>(r) * 8], 8);
    for (int r = 0; r < 40; ++r) single.write_row(r, &part[static_cast<size_t>(r) * 8], 8);
    for (int i = 0; i < 3; ++i) {
      std::vector<int64_t> a(8), b(8);
      bulk.compute(x.data(), s.rows, a.data(), 8);
      single.compute(x.data(), s.rows, b.data(), 8);
      EXPECT_EQ(a, b) << "compute " << i << ", cell_bits " << cell_bits;
      bulk.compute_reference(x.data(), s.rows, a.data(), 8);
      single.compute_reference(x.data(), s.rows, b.data(), 8);
      EXPECT_EQ(a, b) << "reference compute " << i << ", cell_bits " << cell_bits;
    }
    for (int r : {0, 39, 40, 63, 64, 99})
      for (int o : {0, 7}) EXPECT_EQ(bulk.read(r, o), single.read(r, o));
  }
}

// Conductance drift: a cell programmed to level L reads L (t / t0)^-nu a time t after programming.
// One 4-bit offset-encoded cell (level w + 8) under a 1-bit input: y = round((w + 8) f) - 8.
namespace {
// `rows` rows of one 4-bit offset-encoded cell (level w + 8) read by 1-bit inputs, one conversion
MacroSpec one_cell_per_row(int rows) {
  MacroSpec s;
  s.kind = MacroKind::analog;
  s.rows = rows, s.cols = 1, s.rows_per_cycle = rows;
  s.cell_bits = 4, s.weight_bits = 4;
  s.encoding = WeightEncoding::offset;
  s.input_signed = false, s.input_bits = 1;
  s.adc_bits = 12;
  return s;
}
}  // namespace

TEST(MacroDrift, FollowsThePowerLawOnAHandExample) {
  MacroSpec s = one_cell_per_row(1);
  s.drift_nu = 0.1;
  s.drift_compensation = false;
  const int32_t one = 1;
  for (double t : {0.5, 1.0, 10.0, 1000.0, 3.15e7}) {
    s.drift_time_s = t;
    for (int w : {7, 3, -8}) {
      Macro m(s);
      m.write(0, 0, w);
      const double f = t > 1.0 ? std::pow(t, -0.1) : 1.0;
      const int64_t want = static_cast<int64_t>(std::floor((w + 8) * f + 0.5)) - 8;
      int64_t fast, ref;
      m.compute(&one, 1, &fast, 1);
      m.compute_reference(&one, 1, &ref, 1);
      EXPECT_EQ(fast, want) << "t " << t << " w " << w;
      EXPECT_EQ(ref, want) << "t " << t << " w " << w;
    }
  }
  // compensated by the mean drift, with no spread: no drift at all
  s.drift_compensation = true;
  s.drift_time_s = 3.15e7;
  Macro m(s);
  m.write(0, 0, 7);
  int64_t y;
  m.compute(&one, 1, &y, 1);
  EXPECT_EQ(y, 7);
  // a digital macro has no drift
  MacroSpec d;
  d.drift_nu = 0.1;
  EXPECT_THROW(d.validate("macro"), kvcim::Error);
}

// The spread of nu is what compensation leaves: over 64 cells of level 15 (weight 7) read by one
// conversion, the sum's deviation has the standard deviation sqrt(64) x 15 x sigma_nu x ln(t / t0)
// (to first order) and the lognormal's small bias as its mean; nu is a function of the cell, not
// of the write order.
TEST(MacroDrift, CompensatedSpreadHasTheDocumentedSize) {
  MacroSpec s = one_cell_per_row(64);
  s.drift_nu = 0.1, s.drift_nu_sigma = 0.01, s.drift_time_s = 1e4;
  const std::vector<int32_t> ones(64, 1);
  const std::vector<int8_t> sevens(64, 7);
  double sum = 0, sum2 = 0;
  const int seeds = 300;
  for (int seed = 1; seed <= seeds; ++seed) {
    s.seed = static_cast<uint64_t>(seed);
    Macro block(s), single(s);
    block.write_block(sevens.data(), 64, 1);
    for (int r = 63; r >= 0; --r) single.write(r, 0, 7);  // the other order
    int64_t a, b;
    block.compute(ones.data(), 64, &a, 1);
    single.compute(ones.data(), 64, &b, 1);
    ASSERT_EQ(a, b) << "seed " << seed;
    const double dev = static_cast<double>(a) - 64.0 * 7;
    sum += dev, sum2 += dev * dev;
  }
  const double mean = sum / seeds, sd = std::sqrt(sum2 / seeds - mean * mean);
  // the factor r^-(nu - mean nu) is lognormal with log-sd s = sigma_nu ln r: its mean is
  // exp(s^2 / 2), a small bias the compensation by the mean nu leaves
  const double s_log = 0.01 * std::log(1e4);
  const double want = std::sqrt(64.0) * 15 * s_log;  // 11.05
  EXPECT_NEAR(sd, want, 0.15 * want);
  EXPECT_NEAR(mean, 64.0 * 15 * (std::exp(s_log * s_log / 2) - 1), 4 * want / std::sqrt(seeds) + 0.5);
}

// Stuck-at faults of weight cells: a cell is stuck, by its identity, at its lowest or highest
// level whatever is written. One 4-bit offset cell holding 0 (level 8) reads 0, or -8 / 7 when
// stuck at level 0 / 15: over 4,000 macros the stuck ones land at the requested rate (binomial,
// 4.5 sigma), both rails alike, and rewriting a stuck cell does not free it.
TEST(MacroStuckAt, CellsLandStuckAtTheRequestedRate) {
  MacroSpec s = one_cell_per_row(1);
  const int32_t one = 1;
  for (double rate : {0.01, 0.2}) {
    s.stuck_rate = rate;
    int stuck = 0, low = 0;
    const int n = 4000;
    for (int seed = 1; seed <= n; ++seed) {
      s.seed = static_cast<uint64_t>(seed);
      Macro m(s);
      m.write(0, 0, 0);
      int64_t y;
      m.compute(&one, 1, &y, 1);
      ASSERT_TRUE(y == 0 || y == -8 || y == 7) << y;
      stuck += y != 0;
      low += y == -8;
      if (y != 0) {  // stuck whatever is written
        m.write(0, 0, 3);
        int64_t again;
        m.compute_reference(&one, 1, &again, 1);
        EXPECT_EQ(again, y);
      }
    }
    const double sigma = std::sqrt(n * rate * (1 - rate));
    EXPECT_NEAR(stuck, n * rate, 4.5 * sigma) << "rate " << rate;
    EXPECT_NEAR(low, stuck / 2.0, 4.5 * std::sqrt(stuck / 4.0) + 1) << "rate " << rate;
  }
  MacroSpec d;  // digital cells are read exactly
  d.stuck_rate = 0.01;
  EXPECT_THROW(d.validate("macro"), kvcim::Error);
}
