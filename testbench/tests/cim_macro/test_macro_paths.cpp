// The fast analog path equals the bit-level reference in lossy settings too: few ADC bits,
// calibrated (clipping) ranges, shared ADCs, every encoding and geometry. Results and events.
#include <gtest/gtest.h>

#include "macro_test_util.hpp"

using namespace macro_test;
using kvcim::cmodel::cim::detail::KernelLevel;

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

TEST(MacroPaths, EveryKernelLevelEqualsThePortableKernels) {
  // The fast path runs the best kernels the CPU has (AVX-512 with VPOPCNTDQ, AVX-512 F/BW, AVX2);
  // each level the CPU supports must give the portable kernels' bits (results, noise, generator
  // state) on every geometry: wide ones too (the AVX-512 kernels take 16, 32 or 64 columns at a
  // time) and column counts that leave a tail.
  const KernelLevel best = detail::cpu_kernel_level();
  std::vector<KernelLevel> levels;
  for (int l = 1; l <= static_cast<int>(best); ++l) levels.push_back(static_cast<KernelLevel>(l));
  if (levels.empty()) GTEST_SKIP() << "this CPU runs the portable kernels only";
  std::mt19937_64 g(505);
  for (int t = 0; t < 400; ++t) {
    // every fourth case digital (its fast path has no vector kernel: the same results either way)
    MacroSpec s = random_spec(g, t % 4 == 3 ? MacroKind::digital : MacroKind::analog);
    if (t % 2 == 0) {  // a wide macro: up to a few hundred columns
      const int S = s.slices_per_weight();
      s.cols = S * pick(g, 1, 300 / S + 1) + pick(g, 0, S - 1);
      s.adc_share = pick(g, 1, s.cols);
    }
    s.rows_per_cycle = pick(g, 1, s.rows);
    s.adc_bits = pick(g, 1, 10);
    const bool analog = s.kind == MacroKind::analog;
    s.cell_noise_sigma = analog && t % 3 == 0 ? 0.3 : 0.0;
    s.read_noise_sigma = analog && t % 4 == 0 ? 0.6 : 0.0;
    SCOPED_TRACE("case " + std::to_string(t));
    const auto [n_rows, n_out, w, x] = random_block(g, s);
    // Two computes per macro: the second checks that the generators stayed in step.
    auto run = [&](KernelLevel level) {
      detail::cap_kernel_level(level);
      EXPECT_EQ(detail::kernel_level(), level);
      Macro m(s);
      m.write_block(w.data(), n_rows, n_out);
      std::vector<int64_t> y(2 * n_out);
      m.compute(x.data(), n_rows, y.data(), n_out);
      m.compute(x.data(), n_rows, y.data() + n_out, n_out);
      detail::force_portable_kernels(false);
      return y;
    };
    const auto portable = run(KernelLevel::portable);
    for (KernelLevel level : levels) {
      SCOPED_TRACE("kernel level " + std::to_string(static_cast<int>(level)));
      ASSERT_EQ(run(level), portable);
    }
  }
  EXPECT_EQ(detail::kernel_level(), best);  // no cap left behind
}
