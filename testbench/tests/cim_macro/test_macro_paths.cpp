// The fast analog path equals the bit-level reference in lossy settings too: few ADC bits,
// calibrated (clipping) ranges, shared ADCs, every encoding and geometry. Results and events.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "../../../cmodel/cim/macro_kernels.hpp"  // the kernels themselves (internal)
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

namespace {
// A random block written to a fast and a reference macro of spec s, computed twice on each (the
// second compute checks the generators stayed in step): results and events must agree.
// *conversions gains the conversions of the two computes.
void fast_equals_reference_twice(const MacroSpec& s, std::mt19937_64& g, int64_t* conversions = nullptr) {
  Macro fast(s), ref(s);
  const auto [n_rows, n_out, w, x] = random_block(g, s);
  fast.write_block(w.data(), n_rows, n_out);
  ref.write_block(w.data(), n_rows, n_out);
  for (int rep = 0; rep < 2; ++rep) {
    std::vector<int64_t> yf(n_out), yr(n_out);
    fast.compute(x.data(), n_rows, yf.data(), n_out);
    ref.compute_reference(x.data(), n_rows, yr.data(), n_out);
    ASSERT_EQ(yf, yr);
  }
  ASSERT_EQ(fast.events(), ref.events());
  if (conversions) *conversions += fast.events().adc_conversions;
}
}  // namespace

TEST(MacroPaths, NoisyFastEqualsReferenceBitForBit) {
  // Cell and read noise on random geometries, both noise models (exact: the fast path adds the
  // same doubles in the same order; fixed: the same integers), the read noise drawn in the same
  // order, so results and generator state agree.
  std::mt19937_64 g(404);
  for (int t = 0; t < 300; ++t) {
    MacroSpec s = random_spec(g, MacroKind::analog);
    s.adc_bits = pick(g, 2, 12);
    s.cell_noise_sigma = pick(g, 0, 2) ? 0.3 : 0.0;
    s.read_noise_sigma = pick(g, 0, 2) ? 0.8 : 0.0;
    s.noise_model = t % 2 ? NoiseModel::exact : NoiseModel::fixed;
    SCOPED_TRACE("case " + std::to_string(t));
    fast_equals_reference_twice(s, g);
    if (HasFatalFailure()) return;
  }
}

namespace {
// A random analog spec on the fixed noise model: cell noise of cell_sigma levels, read noise in
// one case in two.
MacroSpec fixed_noisy_spec(std::mt19937_64& g, double cell_sigma) {
  MacroSpec s = random_spec(g, MacroKind::analog);
  s.rows_per_cycle = pick(g, 1, s.rows);
  s.adc_bits = pick(g, 2, 12);
  s.cell_noise_sigma = cell_sigma;
  s.read_noise_sigma = pick(g, 0, 1) ? 0.5 : 0.0;
  s.noise_model = NoiseModel::fixed;
  return s;
}
}  // namespace

TEST(MacroPaths, FixedModelFollowsEveryWriteBetweenComputes) {
  // The fixed model's fast path sums the deviations from a table of subset sums, built for a
  // macro computed twice in a row after a write (detail::subset_sums, Macro::subset_table), or
  // from the rows it lists: a write between two computes (a weight, a block) must show in the
  // next compute as it does in the reference's. At sigma 12 levels (one case in 5) pairs of
  // deviations leave int16: no table is used.
  std::mt19937_64 g(406);
  for (int t = 0; t < 150; ++t) {
    const MacroSpec s = fixed_noisy_spec(g, t % 5 == 4 ? 12.0 : 0.3);
    SCOPED_TRACE("case " + std::to_string(t));
    Macro fast(s), ref(s);
    const Block b = random_block(g, s);
    for (int rep = 0; rep < 4; ++rep) {
      if (rep == 0 || rep == 3) {
        const Block w = rep == 0 ? b : random_block(g, s);
        fast.write_block(w.w.data(), std::min(w.n_rows, b.n_rows), std::min(w.n_out, b.n_out));
        ref.write_block(w.w.data(), std::min(w.n_rows, b.n_rows), std::min(w.n_out, b.n_out));
      } else if (rep == 2) {  // one weight: one cell's deviations change
        const int row = pick(g, 0, b.n_rows - 1), out = pick(g, 0, b.n_out - 1);
        const auto v = static_cast<int32_t>(random_value(g, wmin(s), wmax(s)));
        fast.write(row, out, v);
        ref.write(row, out, v);
      }
      std::vector<int64_t> yf(b.n_out), yr(b.n_out);
      fast.compute(b.x.data(), b.n_rows, yf.data(), b.n_out);
      ref.compute_reference(b.x.data(), b.n_rows, yr.data(), b.n_out);
      ASSERT_EQ(yf, yr) << "compute " << rep;
    }
  }
}

TEST(MacroPaths, FixedModelTableIsTheMacroComputedsWhicheverRanBefore) {
  // A thread keeps one table of subset sums, built for a macro it computes twice in a row
  // (Macro::subset_table; the first compute lists its rows): macros with other deviations computed
  // in turn on one thread, a copy (its source's table until it is written) and the copy written
  // right after its source computed must each give their reference's bits, twice.
  std::mt19937_64 g(407);
  for (int t = 0; t < 60; ++t) {
    const MacroSpec s = fixed_noisy_spec(g, 0.3);
    MacroSpec s2 = s;
    s2.seed = s.seed + 1 + static_cast<uint64_t>(t);  // other deviations for the same weights
    SCOPED_TRACE("case " + std::to_string(t));
    const Block b = random_block(g, s);
    Macro fa(s), fb(s2), ra(s), rb(s2);
    for (Macro* m : {&fa, &fb, &ra, &rb}) m->write_block(b.w.data(), b.n_rows, b.n_out);
    const auto same = [&](Macro& fast, Macro& ref, const char* what) {
      for (int rep = 0; rep < 2; ++rep) {
        std::vector<int64_t> yf(b.n_out), yr(b.n_out);
        fast.compute(b.x.data(), b.n_rows, yf.data(), b.n_out);
        ref.compute_reference(b.x.data(), b.n_rows, yr.data(), b.n_out);
        EXPECT_EQ(yf, yr) << what << ", compute " << rep;
      }
    };
    same(fa, ra, "a");
    Macro fc = fa, rc = ra;  // copies after a compute: a's contents, version and generator state
    same(fc, rc, "the copy");
    same(fb, rb, "b");
    same(fa, ra, "a again");
    const int row = pick(g, 0, b.n_rows - 1), out = pick(g, 0, b.n_out - 1);
    const auto v = static_cast<int32_t>(random_value(g, wmin(s), wmax(s)));
    fc.write(row, out, v);
    rc.write(row, out, v);
    same(fc, rc, "the copy written");
    same(fa, ra, "a after the copy's write");
    same(fb, rb, "b at last");
    if (HasFailure()) return;
  }
}

TEST(MacroPaths, CellNoiseSummedInIntegersTakesDoubtfulCodesFromTheReferenceSums) {
  // Programming variation alone: the fast path sums the deviations' int16 grid values and decides
  // a code from them only where the grid's margin cannot change it (detail::adc_noisy_bounded);
  // the other codes are recomputed from the double sums. Wide sigmas (a coarse grid) leave many
  // codes in doubt, narrow ones few: both kinds of decision must give the reference's bits.
  std::mt19937_64 g(405);
  const uint64_t doubts0 = detail::bounded_adc_doubts();
  int64_t conversions = 0;
  for (int t = 0; t < 120; ++t) {
    MacroSpec s = random_spec(g, MacroKind::analog);
    s.input_bits_per_cycle = std::min(s.input_bits_per_cycle, 4);  // room in int32 for the sums
    s.adc_bits = pick(g, 2, 12);
    s.cell_noise_sigma = std::array{0.02, 0.3, 4.0, 30.0}[static_cast<size_t>(pick(g, 0, 3))];
    s.read_noise_sigma = pick(g, 0, 1) ? 0.4 : 0.0;
    s.noise_model = NoiseModel::exact;  // the fixed model's integer sums are the model, no doubt
    SCOPED_TRACE("case " + std::to_string(t));
    fast_equals_reference_twice(s, g, &conversions);
    if (HasFatalFailure()) return;
  }
  const uint64_t doubts = detail::bounded_adc_doubts() - doubts0;
  EXPECT_GT(doubts, 100u) << "the doubtful codes' path must be taken (" << conversions << " conversions)";
  EXPECT_LT(static_cast<int64_t>(doubts), conversions / 4) << "most codes are decided from the integer sums";
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
    s.noise_model = t % 5 < 2 ? NoiseModel::exact : NoiseModel::fixed;
    SCOPED_TRACE("case " + std::to_string(t));
    const Block b = random_block(g, s);
    // Two computes per macro: the second checks that the generators stayed in step.
    auto run = [&](KernelLevel level) {
      detail::cap_kernel_level(level);
      EXPECT_EQ(detail::kernel_level(), level);
      Macro m(s);
      m.write_block(b.w.data(), b.n_rows, b.n_out);
      std::vector<int64_t> y(2 * b.n_out);
      m.compute(b.x.data(), b.n_rows, y.data(), b.n_out);
      m.compute(b.x.data(), b.n_rows, y.data() + b.n_out, b.n_out);
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

namespace {

std::vector<KernelLevel> vector_levels() {
  std::vector<KernelLevel> levels;
  for (int l = 1; l <= static_cast<int>(detail::cpu_kernel_level()); ++l) levels.push_back(static_cast<KernelLevel>(l));
  return levels;
}

std::vector<uint64_t> bits_of(const std::vector<double>& v) {
  std::vector<uint64_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<uint64_t>(v[i]);
  return b;
}

}  // namespace

TEST(MacroKernels, CellNoiseSumsKeepTheRowOrderAtEveryLevel) {
  // Deviations of wildly different magnitudes, so that the double sums round differently in any
  // other order of the rows: every level must add each column's rows in ascending order.
  std::mt19937_64 g(606);
  for (int t = 0; t < 200; ++t) {
    SCOPED_TRACE("case " + std::to_string(t));
    const int n_rows = pick(g, 1, 70), T = pick(g, 1, 16), n = pick(g, 1, 300);
    const int stride = n + pick(g, 0, 9);
    std::vector<float> dev(static_cast<size_t>(n_rows) * stride);
    for (auto& d : dev) d = std::ldexp(static_cast<float>(pick(g, -(1 << 23), 1 << 23)), pick(g, -60, 10));
    std::vector<uint32_t> u(static_cast<size_t>(n_rows) * T);
    for (auto& v : u) v = pick(g, 0, 2) == 0 ? 0u : static_cast<uint32_t>(pick(g, 1, 255));
    auto run = [&](KernelLevel level) {
      detail::cap_kernel_level(level);
      std::vector<double> pn(static_cast<size_t>(T) * n, -1.0);
      detail::cell_noise_sums(dev.data(), stride, n_rows, u.data(), T, n, pn.data());
      detail::force_portable_kernels(false);
      return bits_of(pn);
    };
    const auto portable = run(KernelLevel::portable);
    for (KernelLevel level : vector_levels()) ASSERT_EQ(run(level), portable) << "level " << static_cast<int>(level);
  }
}

namespace {
// Random steps for the kernels: n columns, T input cycles of G row groups, 0 - 4 popcount terms a
// step (random words AND random planes, shifts up to max_shift), a random sign and offset a cycle.
struct RandomKernelSteps {
  int n, T, G;
  std::vector<uint64_t> planes;
  std::vector<detail::PopTerm> terms;
  std::vector<int> step_begin, sign, offset;
  RandomKernelSteps(std::mt19937_64& g, int max_shift)
      : n(pick(g, 1, 200)), T(pick(g, 1, 4)), G(pick(g, 1, 3)) {
    const int words = pick(g, 1, 4);
    planes.resize(static_cast<size_t>(words) * n);
    for (auto& w : planes) w = g() & (pick(g, 0, 1) ? ~uint64_t{0} : g());
    for (int s = 0; s < T * G; ++s) {
      step_begin.push_back(static_cast<int>(terms.size()));
      for (int j = pick(g, 0, 4); j > 0; --j)
        terms.push_back({g(), planes.data() + static_cast<size_t>(pick(g, 0, words - 1)) * n, pick(g, 0, max_shift)});
    }
    step_begin.push_back(static_cast<int>(terms.size()));
    sign.resize(T);
    offset.resize(T);
    for (int k = 0; k < T; ++k) {
      sign[k] = pick(g, 0, 1) ? 1 : -1;
      offset[k] = pick(g, 0, 16);
    }
  }
  // Step s's popcounts alone, into p.
  void popcounts(int s, uint32_t* p) const {
    detail::popcount_columns(terms.data() + step_begin[s], step_begin[s + 1] - step_begin[s], n, p);
  }
  // Every step through the fused kernel at the current level, into acc.
  void analog(detail::AdcRule adc, int64_t* acc, const detail::RoundedDraws* noise = nullptr) const {
    std::vector<detail::InputTerm> at;  // the same terms by their words' offsets in planes
    for (const detail::PopTerm& t : terms) at.push_back({t.xm, static_cast<size_t>(t.plane - planes.data()), t.shift});
    detail::analog_columns(at.data(), planes.data(), step_begin.data(), T, G, sign.data(), offset.data(), adc, n,
                           acc, noise);
  }
};
}  // namespace

TEST(MacroKernels, FusedRoundedNoiseEqualsTheSeparateDrawsAtEveryLevel) {
  // analog_columns with read noise at a step of one level against the unfused computation (each
  // step's popcounts, then detail::rounded_noise_codes from the step's first draw), at every
  // level, with counters whose low word wraps inside a column block (the carry into the high
  // word) and keyed counters (bit 63 set).
  std::mt19937_64 g(808);
  for (int t = 0; t < 200; ++t) {
    SCOPED_TRACE("case " + std::to_string(t));
    const RandomKernelSteps steps(g, 3);
    const int n = steps.n, T = steps.T, G = steps.G;
    const int32_t top = pick(g, 1, 1023);
    const double sigma = std::array<double, 4>{0.15, 0.3, 0.6, 1.2}[static_cast<size_t>(pick(g, 0, 3))];
    const detail::NoiseKey key = detail::noise_key(g());
    // a low word that wraps within the call (and within a block of 16 or 32 columns), or a keyed base
    const uint64_t hi = pick(g, 0, 1) ? (uint64_t{1} << 63) | (g() & 0x7fffffff00000000ull) : uint64_t{7} << 32;
    const uint64_t base = hi - static_cast<uint64_t>(pick(g, 1, 40 * T * G));
    const detail::RoundedDraws draws{key, base, detail::rounded_noise_law(sigma), top};
    ASSERT_GT(draws.law.k_max, 0);
    std::vector<int64_t> want(n, 0);
    {
      std::vector<uint32_t> p(n);
      for (int k = 0; k < T; ++k) {
        std::vector<uint32_t> pk(n, 0);
        for (int gg = 0; gg < G; ++gg) {
          const int s = k * G + gg;
          steps.popcounts(s, p.data());
          detail::rounded_noise_codes(key, base + static_cast<uint64_t>(s) * n, n, draws.law, p.data(), top, pk.data());
        }
        for (int c = 0; c < n; ++c) want[c] += steps.sign[k] * (static_cast<int64_t>(pk[c]) << steps.offset[k]);
      }
    }
    for (KernelLevel level : {KernelLevel::portable, KernelLevel::avx2, KernelLevel::avx512, KernelLevel::avx512_vpopcntdq}) {
      if (static_cast<int>(level) > static_cast<int>(detail::cpu_kernel_level())) continue;
      detail::cap_kernel_level(level);
      std::vector<int64_t> acc(n, -7);
      steps.analog({0, 0, 0}, acc.data(), &draws);
      detail::force_portable_kernels(false);
      ASSERT_EQ(acc, want) << "level " << static_cast<int>(level);
    }
  }
}

TEST(MacroKernels, PopcountsAndAdcsEqualThePortableKernelsAtEveryLevel) {
  // Several terms per step with shifts, random words and ADC rules; the noisy ADC on values near
  // its rounding edges and outside its range.
  std::mt19937_64 g(707);
  for (int t = 0; t < 300; ++t) {
    SCOPED_TRACE("case " + std::to_string(t));
    const RandomKernelSteps steps(g, 8);
    const int n = steps.n, T = steps.T, G = steps.G;
    const int adc_shift = pick(g, 0, 8);
    const detail::AdcRule adc{adc_shift, adc_shift > 0 ? 1u << (adc_shift - 1) : 0u, static_cast<uint32_t>(pick(g, 1, 4095))};
    std::vector<double> pn(n), rn(n);
    for (int c = 0; c < n; ++c) {
      pn[c] = pick(g, 0, 3) == 0 ? 0.0 : std::uniform_real_distribution<double>(-300, 300)(g);
      rn[c] = pick(g, 0, 3) == 0 ? (pick(g, 0, 1) ? 0.5 : -0.5) : std::uniform_real_distribution<double>(-50, 50)(g);
    }
    const double scale = std::ldexp(1.0, -adc_shift), top = adc.top;
    auto run = [&](KernelLevel level) {
      detail::cap_kernel_level(level);
      std::vector<int64_t> acc(n, -7);
      steps.analog(adc, acc.data());
      std::vector<uint32_t> p(n, 7), pk(n, 3);
      for (int s = 0; s < T * G; ++s) {
        steps.popcounts(s, p.data());
        for (int c = 0; c < n; ++c) acc.push_back(p[c]);
        detail::adc_noisy(p.data(), pn.data(), rn.data(), n, scale, top, adc_shift, pk.data());
      }
      for (int c = 0; c < n; ++c) acc.push_back(pk[c]);
      detail::force_portable_kernels(false);
      return acc;
    };
    const auto portable = run(KernelLevel::portable);
    for (KernelLevel level : vector_levels()) ASSERT_EQ(run(level), portable) << "level " << static_cast<int>(level);
  }
}

TEST(MacroKernels, InputBitPlanesEqualThePortableTranspositionAtEveryLevel) {
  // The codes' bit-planes (the vector levels take whole 64-row words of codes up to 8 bits, the
  // portable loop the rest): every level gives the portable planes, rows past n_rows 0, for
  // codes of any width from any int32 (a code is the value's low B bits).
  std::mt19937_64 g(808);
  for (int t = 0; t < 400; ++t) {
    SCOPED_TRACE("case " + std::to_string(t));
    const int n_rows = pick(g, 1, pick(g, 0, 1) ? 70 : 300), B = pick(g, 1, pick(g, 0, 3) == 0 ? 16 : 8);
    const int nw = (n_rows + 63) / 64;
    std::vector<int32_t> x(static_cast<size_t>(n_rows));
    for (auto& v : x) v = static_cast<int32_t>(g());
    auto run = [&](KernelLevel level) {
      detail::cap_kernel_level(level);
      std::vector<uint64_t> cb(static_cast<size_t>(B) * nw, ~uint64_t{0});  // every word must be written
      detail::code_planes(x.data(), n_rows, B, nw, cb.data());
      detail::force_portable_kernels(false);
      return cb;
    };
    const auto portable = run(KernelLevel::portable);
    for (int r = 0; r < 64 * nw; ++r)
      for (int b = 0; b < B; ++b)
        ASSERT_EQ((portable[static_cast<size_t>(b) * nw + r / 64] >> (r % 64)) & 1,
                  r < n_rows ? (static_cast<uint32_t>(x[static_cast<size_t>(r)]) >> b) & 1u : 0u)
            << "row " << r << ", bit " << b;
    for (KernelLevel level : vector_levels()) ASSERT_EQ(run(level), portable) << "level " << static_cast<int>(level);
  }
}
