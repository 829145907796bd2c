// The fast analog path equals the bit-level reference in lossy settings too: few ADC bits,
// calibrated (clipping) ranges, shared ADCs, every encoding and geometry. Results and events.
#include <gtest/gtest.h>

#include "macro_test_util.hpp"

using namespace macro_test;

TEST(MacroPaths, AnalogFastEqualsReferenceWhenLossy) {
  std::mt19937_64 g(303);
  int differs_from_exact = 0;
  for (int t = 0; t < 600; ++t) {
    MacroSpec s = random_spec(g, MacroKind::analog);
    s.rows_per_cycle = pick(g, 1, s.rows);
    s.adc_bits = pick(g, 1, 10);
    s.adc_range = pick(g, 0, 1) ? AdcRange::calibrated : AdcRange::full_scale;
    s.adc_clip = std::uniform_real_distribution<double>(0.01, 1.0)(g);
    SCOPED_TRACE("case " + std::to_string(t));
    Macro fast(s), ref(s);
    const auto [n_rows, n_out, w, x] = random_block(g, s);
    fast.write_block(w.data(), n_rows, n_out);
    ref.write_block(w.data(), n_rows, n_out);
    std::vector<int64_t> yf(n_out), yr(n_out);
    fast.compute(x.data(), n_rows, yf.data(), n_out);
    ref.compute_reference(x.data(), n_rows, yr.data(), n_out);
    ASSERT_EQ(yf, yr);
    ASSERT_EQ(fast.events(), ref.events());
    differs_from_exact += yf != exact_product(x, w, n_rows, n_out);
  }
  EXPECT_GT(differs_from_exact, 200) << "the cases must actually be lossy";
}

TEST(MacroPaths, NoisyFastEqualsReferenceBitForBit) {
  // Cell and read noise on random geometries: the fast path adds the same doubles in the same
  // order and draws the read noise in the same order, so results and generator state agree.
  std::mt19937_64 g(404);
  for (int t = 0; t < 200; ++t) {
    MacroSpec s = random_spec(g, MacroKind::analog);
    s.adc_bits = pick(g, 2, 12);
    s.cell_noise_sigma = pick(g, 0, 2) ? 0.3 : 0.0;
    s.read_noise_sigma = pick(g, 0, 2) ? 0.8 : 0.0;
    SCOPED_TRACE("case " + std::to_string(t));
    Macro fast(s), ref(s);
    const auto [n_rows, n_out, w, x] = random_block(g, s);
    fast.write_block(w.data(), n_rows, n_out);
    ref.write_block(w.data(), n_rows, n_out);
    for (int rep = 0; rep < 2; ++rep) {  // the second compute checks the generators stayed in step
      std::vector<int64_t> yf(n_out), yr(n_out);
      fast.compute(x.data(), n_rows, yf.data(), n_out);
      ref.compute_reference(x.data(), n_rows, yr.data(), n_out);
      ASSERT_EQ(yf, yr);
    }
    ASSERT_EQ(fast.events(), ref.events());
  }
}

TEST(MacroPaths, PortableKernelsEqualTheVectorKernels) {
  // The fast path runs AVX2 kernels where the CPU has them; the portable kernels must give the
  // same bits (results, noise) on every geometry, including column counts that leave a tail.
  std::mt19937_64 g(505);
  for (int t = 0; t < 400; ++t) {
    // every fourth case digital (its fast path has no vector kernel: the same results either way)
    MacroSpec s = random_spec(g, t % 4 == 3 ? MacroKind::digital : MacroKind::analog);
    s.rows_per_cycle = pick(g, 1, s.rows);
    s.adc_bits = pick(g, 1, 10);
    const bool analog = s.kind == MacroKind::analog;
    s.cell_noise_sigma = analog && t % 3 == 0 ? 0.3 : 0.0;
    s.read_noise_sigma = analog && t % 4 == 0 ? 0.6 : 0.0;
    SCOPED_TRACE("case " + std::to_string(t));
    Macro vec(s), port(s);
    const auto [n_rows, n_out, w, x] = random_block(g, s);
    vec.write_block(w.data(), n_rows, n_out);
    detail::force_portable_kernels(true);
    port.write_block(w.data(), n_rows, n_out);
    std::vector<int64_t> yv(n_out), yp(n_out);
    port.compute(x.data(), n_rows, yp.data(), n_out);
    detail::force_portable_kernels(false);
    vec.compute(x.data(), n_rows, yv.data(), n_out);
    ASSERT_EQ(yv, yp);
  }
}
