// The vector kernels of the macro's fast paths (macro_kernels.hpp). Each has a portable
// version and vector versions (AVX2, AVX-512) chosen at run time; tests hold them all equal.
#include "macro_kernels.hpp"
#include "macro_layout.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "kvcim/cmodel/cim/macro.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
// GCC 12's unmasked AVX-512 intrinsics (shifts, min, broadcasts...) start from an "undefined"
// vector and trip -W(maybe-)uninitialized where they are inlined (GCC bug 105593): silenced for
// the intrinsics' header only.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#define KVCIM_MACRO_X86 1
#endif

namespace kvcim::cmodel::cim::detail {
namespace {

void popcount_columns_portable(const PopTerm* terms, int n_terms, int n, uint32_t* p) {
  for (int col = 0; col < n; ++col) p[col] = 0;
  for (int t = 0; t < n_terms; ++t) {
    const uint64_t xm = terms[t].xm;
    const uint64_t* pl = terms[t].plane;
    const int sh = terms[t].shift;
    for (int col = 0; col < n; ++col) p[col] += static_cast<uint32_t>(std::popcount(xm & pl[col])) << sh;
  }
}

// The rounded read noise of uniform u: -k_max + #{j : u >= thr[j]} (detail::RoundedNoise).
inline int32_t rounded_k(const RoundedNoise& law, uint32_t u) {
  int32_t c = -law.k_max;
  for (int j = 0; j < 2 * law.k_max; ++j) c += u >= law.thr[j] ? 1 : 0;
  return c;
}

void analog_columns_portable(const InputTerm* terms, const uint64_t* planes, const int* step_begin, int T, int G,
                             const int* sign, const int* offset, AdcRule adc, int col0, int n,
                             int64_t* acc, const RoundedDraws* noise) {
  for (int col = col0; col < n; ++col) {
    int64_t a = 0;
    for (int k = 0; k < T; ++k) {
      uint32_t pk = 0;
      for (int g = 0; g < G; ++g) {
        uint32_t p = 0;
        for (int t = step_begin[k * G + g]; t < step_begin[k * G + g + 1]; ++t)
          p += static_cast<uint32_t>(std::popcount(terms[t].xm & planes[terms[t].at + static_cast<size_t>(col)])) << terms[t].shift;
        if (noise != nullptr) {
          const uint64_t at = noise->base + static_cast<uint64_t>(k * G + g) * static_cast<uint64_t>(n) + static_cast<uint64_t>(col);
          const int32_t v = static_cast<int32_t>(p) + rounded_k(noise->law, noise_uniform(noise->key, at));
          pk += static_cast<uint32_t>(std::clamp(v, 0, noise->top));
          continue;
        }
        const uint32_t code = (p + adc.half) >> adc.shift;
        pk += (code < adc.top ? code : adc.top) << adc.shift;
      }
      a += sign[k] * (static_cast<int64_t>(pk) << offset[k]);
    }
    acc[col] = a;
  }
}


// ---- Gaussian generator (the file is compiled with -ffp-contract=off: only the fused
// multiply-adds written out below are fused, in the portable and the vector code alike).
constexpr float kSqrt2 = 1.41421356f;
constexpr float kLn2 = 0.693147180559945f;
constexpr float kPiOver4 = 0.785398163397448f;
constexpr float kC8 = 0.923879532511287f;  // cos(pi / 8)
constexpr float kS8 = 0.382683432365090f;  // sin(pi / 8)
// cos and sin of the octant centres (2 o + 1) pi / 8, o < 8.
constexpr float kOctCos[8] = {kC8, kS8, -kS8, -kC8, -kC8, -kS8, kS8, kC8};
constexpr float kOctSin[8] = {kS8, kC8, kC8, kS8, -kS8, -kC8, -kC8, -kS8};

inline uint32_t mix32(uint32_t x) {  // "lowbias32" (C. Wellons), a bijection of 32-bit words
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// The Box-Muller pair j: r cos t (cos_out) and r sin t (sin_out).
void normal_pair(const NoiseKey& key, uint64_t j, float& cos_out, float& sin_out) {
  const uint32_t a = mix32(mix32(static_cast<uint32_t>(j) ^ key.k0) ^ (static_cast<uint32_t>(j >> 32) + key.k1));
  const uint32_t b = mix32(a ^ key.k2);
  // ln u1 = ln m - 24 ln 2, m = (a >> 8) + 1 in [1, 2^24]: m = f 2^e, f in [sqrt(1/2), sqrt(2)).
  const float m = static_cast<float>(static_cast<int32_t>((a >> 8) + 1));
  const uint32_t bits = std::bit_cast<uint32_t>(m);
  int32_t e = static_cast<int32_t>(bits >> 23) - 127;
  float f = std::bit_cast<float>((bits & 0x7fffffu) | 0x3f800000u);
  if (f > kSqrt2) {
    f = f * 0.5f;
    e = e + 1;
  }
  const float t = f - 1.0f;
  const float z = t * t;
  float q = 7.0376836292e-2f;  // ln(1 + t) = t - z/2 + t z P(t) (Cephes logf)
  q = std::fma(q, t, -1.1514610310e-1f);
  q = std::fma(q, t, 1.1676998740e-1f);
  q = std::fma(q, t, -1.2420140846e-1f);
  q = std::fma(q, t, 1.4249322787e-1f);
  q = std::fma(q, t, -1.6668057665e-1f);
  q = std::fma(q, t, 2.0000714765e-1f);
  q = std::fma(q, t, -2.4999993993e-1f);
  q = std::fma(q, t, 3.3333331174e-1f);
  float y = q * t;
  y = y * z;
  y = std::fma(-0.5f, z, y);
  const float ln_u1 = std::fma(static_cast<float>(e - 24), kLn2, t + y);
  const float r = std::sqrt(std::max(0.0f, -2.0f * ln_u1));  // +0 for -0, as vmaxps
  // t = 2 pi u2 = (2 o + 1) pi / 8 + w pi / 4, o = top 3 bits of b >> 8, w in [-1/2, 1/2).
  const uint32_t u = b >> 8;
  const uint32_t o = u >> 21;
  const float w = static_cast<float>(static_cast<int32_t>(u & 0x1fffffu)) * 0x1p-21f - 0.5f;
  const float th = w * kPiOver4;
  const float z2 = th * th;
  float ps = std::fma(-1.9515295891e-4f, z2, 8.3321608736e-3f);  // Cephes sinf / cosf
  ps = std::fma(ps, z2, -1.6666654611e-1f);
  const float s_th = std::fma(ps * z2, th, th);
  float pc = std::fma(2.443315711809948e-5f, z2, -1.388731625493765e-3f);
  pc = std::fma(pc, z2, 4.166664568298827e-2f);
  const float c_th = std::fma(pc * z2, z2, std::fma(-0.5f, z2, 1.0f));
  const float cos_t = std::fma(kOctCos[o], c_th, -(kOctSin[o] * s_th));
  const float sin_t = std::fma(kOctSin[o], c_th, kOctCos[o] * s_th);
  cos_out = r * cos_t;
  sin_out = r * sin_t;
}

void normal_draws_portable(const NoiseKey& key, uint64_t first, int n, float* out) {
  for (int i = 0; i < n; ++i) out[i] = normal_draw(key, first + static_cast<uint64_t>(i));
}

void combine_slices_portable(const int64_t* acc, int o0, int n_out, int S, const int* sign, const int* offset,
                             int64_t* y) {
  for (int o = o0; o < n_out; ++o) {
    const int64_t* a = acc + static_cast<size_t>(o) * S;
    int64_t v = 0;
    for (int j = 0; j < S; ++j) v += sign[j] < 0 ? -(a[j] << offset[j]) : a[j] << offset[j];
    y[o] = v;
  }
}

void adc_noisy_portable(const uint32_t* p, const double* pn, const double* rn, int col0, int n,
                        double scale, double top, int shift, uint32_t* pk) {
  for (int col = col0; col < n; ++col) {
    const double v = static_cast<double>(p[col]) + (pn[col] + rn[col]);
    double code = std::floor(v * scale + 0.5);
    code = code < 0.0 ? 0.0 : code;
    code = code > top ? top : code;
    pk[col] += static_cast<uint32_t>(static_cast<int32_t>(code)) << shift;
  }
}

void cell_noise_sums_portable(const float* dev, size_t stride, int n_rows, const uint32_t* u,
                              int T, int col0, int n, double* pn) {
  for (int k = 0; k < T; ++k)
    for (int col = col0; col < n; ++col) pn[static_cast<size_t>(k) * n + col] = 0.0;
  constexpr int kBlock = 512;  // columns per block: T blocks of doubles stay in L1/L2
  for (int c0 = col0; c0 < n; c0 += kBlock) {
    const int c1 = std::min(n, c0 + kBlock);
    for (int i = 0; i < n_rows; ++i) {
      const float* dr = dev + static_cast<size_t>(i) * stride;
      for (int k = 0; k < T; ++k) {
        const uint32_t ui = u[static_cast<size_t>(i) * T + k];
        if (ui == 0) continue;
        const double du = ui;
        double* pnp = pn + static_cast<size_t>(k) * n;
        for (int col = c0; col < c1; ++col) pnp[col] += du * dr[col];
      }
    }
  }
}

void cell_noise_isums_portable(const int16_t* qdev, size_t stride, int n_rows, const uint32_t* u,
                               int T, int col0, int n, int32_t* S) {
  for (int k = 0; k < T; ++k)
    for (int col = col0; col < n; ++col) S[static_cast<size_t>(k) * n + col] = 0;
  for (int i = 0; i < n_rows; ++i) {
    const int16_t* q = qdev + static_cast<size_t>(i) * stride;
    for (int k = 0; k < T; ++k) {
      const int32_t ui = static_cast<int32_t>(u[static_cast<size_t>(i) * T + k]);
      if (ui == 0) continue;
      int32_t* s = S + static_cast<size_t>(k) * n;
      for (int col = col0; col < n; ++col) s[col] += ui * q[col];
    }
  }
}

// The rows of one row group by input cycle and level bit, for the vector cell_noise_isums
// kernels: rows[begin[k * bits + b] .. begin[k * bits + b + 1]) are the deviations of the rows i
// whose level u[i * T + k] has bit b set, in ascending order. Per thread, reused (no allocation
// per call once grown).
struct RowLists {
  int bits = 0;
  std::vector<int>& begin;
  std::vector<const int16_t*>& rows;
  RowLists(const int16_t* qdev, size_t stride, int n_rows, const uint32_t* u, int T)
      : begin(storage<int>()), rows(storage<const int16_t*>()) {
    uint32_t all = 0;
    for (size_t i = 0; i < static_cast<size_t>(n_rows) * T; ++i) all |= u[i];
    bits = std::bit_width(all);
    begin.clear();
    rows.clear();
    for (int k = 0; k < T; ++k)
      for (int b = 0; b < bits; ++b) {
        begin.push_back(static_cast<int>(rows.size()));
        for (int i = 0; i < n_rows; ++i)
          if ((u[static_cast<size_t>(i) * T + k] >> b) & 1u) rows.push_back(qdev + static_cast<size_t>(i) * stride);
      }
    begin.push_back(static_cast<int>(rows.size()));
  }
  template <class V>
  static std::vector<V>& storage() {
    thread_local std::vector<V> v;
    return v;
  }
};

void fixed_columns_portable(const FixedSteps& f, int col0, int n, int64_t* acc) {
  for (int col = col0; col < n; ++col) {
    int64_t a = 0;
    for (int k = 0; k < f.T; ++k) {
      uint32_t pk = 0;
      for (int g = 0; g < f.G; ++g) {
        const size_t s = static_cast<size_t>(k) * f.G + g;
        int32_t d = f.R != nullptr ? f.R[s * n + col] : 0;
        uint32_t p = 0;  // the partial sum: given, or counted from the step's terms
        if (f.p != nullptr) p = f.p[s * n + col];
        for (int t = f.p == nullptr ? f.step_begin[s] : 0; f.p == nullptr && t < f.step_begin[s + 1]; ++t)
          p += static_cast<uint32_t>(std::popcount(f.terms[t].xm & f.terms[t].plane[col])) << f.terms[t].shift;
        for (int b = 0; b < f.bits; ++b)
          for (int i = f.row_begin[s * f.bits + b]; i < f.row_begin[s * f.bits + b + 1]; ++i)
            d += static_cast<int32_t>(fixed_grid_at(f, col)[f.row_off[i]]) * (1 << b);
        pk += static_cast<uint32_t>(adc_fixed_code(p, d, f.q, f.shift, f.top)) << f.shift;
      }
      a += f.sign[k] * (static_cast<int64_t>(pk) << f.offset[k]);
    }
    acc[col] = a;
  }
}

// The margin of one conversion: `margin` plus room for the roundings of p + (pna + rn), of the
// reference's p + (pn + rn) and of va -+ m (each below 2^-53 (|va| + p), as |pn + rn| <= |va| + p
// up to rounding; 2^-48 covers the four with room to spare).
inline double bounded_margin(double margin, double va, double p) { return margin + (std::fabs(va) + p) * 0x1p-48; }

int adc_noisy_bounded_portable(const uint32_t* p, const int32_t* S, double qscale, const double* rn,
                               double margin, int col0, int n, double scale, double top, int shift,
                               uint32_t* pk, int* uncertain) {
  int m = 0;
  for (int col = col0; col < n; ++col) {
    const double pv = static_cast<double>(p[col]);
    const double va = pv + (static_cast<double>(S[col]) * qscale + rn[col]);
    const double mc = bounded_margin(margin, va, pv);
    const double lo = std::floor((va - mc) * scale + 0.5), hi = std::floor((va + mc) * scale + 0.5);
    if (lo != hi) {
      uncertain[m++] = col;
      continue;
    }
    const double code = std::min(std::max(lo, 0.0), top);
    pk[col] += static_cast<uint32_t>(static_cast<int32_t>(code)) << shift;
  }
  return m;
}

#ifdef KVCIM_MACRO_X86
__attribute__((target("avx2"))) void adc_noisy_avx2(const uint32_t* p, const double* pn,
                                                    const double* rn, int n, double scale,
                                                    double top, int shift, uint32_t* pk) {
  const __m256d vs = _mm256_set1_pd(scale), vh = _mm256_set1_pd(0.5), vt = _mm256_set1_pd(top);
  const __m256d zero = _mm256_setzero_pd();
  const __m128i sh = _mm_cvtsi32_si128(shift);
  int col = 0;
  for (; col + 4 <= n; col += 4) {
    const __m256d pv = _mm256_cvtepi32_pd(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + col)));
    const __m256d v = _mm256_add_pd(pv, _mm256_add_pd(_mm256_loadu_pd(pn + col), _mm256_loadu_pd(rn + col)));
    __m256d code = _mm256_round_pd(_mm256_add_pd(_mm256_mul_pd(v, vs), vh), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    code = _mm256_min_pd(_mm256_max_pd(code, zero), vt);
    const __m128i c = _mm_sll_epi32(_mm256_cvttpd_epi32(code), sh);
    __m128i* dst = reinterpret_cast<__m128i*>(pk + col);
    _mm_storeu_si128(dst, _mm_add_epi32(_mm_loadu_si128(dst), c));
  }
  adc_noisy_portable(p, pn, rn, col, n, scale, top, shift, pk);
}

// mix32 lane by lane, in 8 (AVX2) or 16 (AVX-512) lanes: one body for both widths.
#define KVCIM_MACRO_MIX32(SUFFIX, TARGET, VEC, P, BITS)                                   \
  __attribute__((target(TARGET))) inline VEC mix32_##SUFFIX(VEC x) {                      \
    x = P##_xor_si##BITS(x, P##_srli_epi32(x, 16));                                        \
    x = P##_mullo_epi32(x, P##_set1_epi32(0x7feb352d));                                    \
    x = P##_xor_si##BITS(x, P##_srli_epi32(x, 15));                                        \
    x = P##_mullo_epi32(x, P##_set1_epi32(static_cast<int>(0x846ca68bu)));                 \
    return P##_xor_si##BITS(x, P##_srli_epi32(x, 16));                                     \
  }
KVCIM_MACRO_MIX32(avx2, "avx2", __m256i, _mm256, 256)
KVCIM_MACRO_MIX32(avx512, "avx512f,avx512bw", __m512i, _mm512, 512)
#undef KVCIM_MACRO_MIX32

// Block m of 16 draws (pairs 8 m .. 8 m + 7), the operations of normal_pair lane by lane.
__attribute__((target("avx2,fma"))) void normal_block_avx2(const NoiseKey& key, uint64_t m, float* out) {
  const uint64_t j0 = m << 3;
  const __m256i lo = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(j0))),
                                      _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i hik = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(j0 >> 32) + key.k1));
  const __m256i a = mix32_avx2(_mm256_xor_si256(mix32_avx2(_mm256_xor_si256(lo, _mm256_set1_epi32(static_cast<int>(key.k0)))), hik));
  const __m256i b = mix32_avx2(_mm256_xor_si256(a, _mm256_set1_epi32(static_cast<int>(key.k2))));
  const __m256 mf = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_srli_epi32(a, 8), _mm256_set1_epi32(1)));
  const __m256i bits = _mm256_castps_si256(mf);
  __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
  __m256 f = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffff)),
                                                  _mm256_set1_epi32(0x3f800000)));
  const __m256 big = _mm256_cmp_ps(f, _mm256_set1_ps(kSqrt2), _CMP_GT_OQ);
  f = _mm256_blendv_ps(f, _mm256_mul_ps(f, _mm256_set1_ps(0.5f)), big);
  e = _mm256_sub_epi32(e, _mm256_castps_si256(big));  // +1 where big (the mask is -1)
  const __m256 t = _mm256_sub_ps(f, _mm256_set1_ps(1.0f));
  const __m256 z = _mm256_mul_ps(t, t);
  __m256 q = _mm256_set1_ps(7.0376836292e-2f);
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-1.1514610310e-1f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(1.1676998740e-1f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-1.2420140846e-1f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(1.4249322787e-1f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-1.6668057665e-1f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(2.0000714765e-1f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(-2.4999993993e-1f));
  q = _mm256_fmadd_ps(q, t, _mm256_set1_ps(3.3333331174e-1f));
  __m256 y = _mm256_mul_ps(q, t);
  y = _mm256_mul_ps(y, z);
  y = _mm256_fmadd_ps(_mm256_set1_ps(-0.5f), z, y);
  const __m256 ln_u1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(e, _mm256_set1_epi32(24))),
                                       _mm256_set1_ps(kLn2), _mm256_add_ps(t, y));
  const __m256 r = _mm256_sqrt_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), ln_u1), _mm256_setzero_ps()));
  const __m256i u = _mm256_srli_epi32(b, 8);
  const __m256i o = _mm256_srli_epi32(u, 21);
  const __m256 w = _mm256_sub_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_and_si256(u, _mm256_set1_epi32(0x1fffff))),
                                               _mm256_set1_ps(0x1p-21f)),
                                 _mm256_set1_ps(0.5f));
  const __m256 th = _mm256_mul_ps(w, _mm256_set1_ps(kPiOver4));
  const __m256 z2 = _mm256_mul_ps(th, th);
  __m256 ps = _mm256_fmadd_ps(_mm256_set1_ps(-1.9515295891e-4f), z2, _mm256_set1_ps(8.3321608736e-3f));
  ps = _mm256_fmadd_ps(ps, z2, _mm256_set1_ps(-1.6666654611e-1f));
  const __m256 s_th = _mm256_fmadd_ps(_mm256_mul_ps(ps, z2), th, th);
  __m256 pc = _mm256_fmadd_ps(_mm256_set1_ps(2.443315711809948e-5f), z2, _mm256_set1_ps(-1.388731625493765e-3f));
  pc = _mm256_fmadd_ps(pc, z2, _mm256_set1_ps(4.166664568298827e-2f));
  const __m256 c_th = _mm256_fmadd_ps(_mm256_mul_ps(pc, z2), z2,
                                      _mm256_fmadd_ps(_mm256_set1_ps(-0.5f), z2, _mm256_set1_ps(1.0f)));
  const __m256 oc = _mm256_permutevar8x32_ps(_mm256_loadu_ps(kOctCos), o);
  const __m256 os = _mm256_permutevar8x32_ps(_mm256_loadu_ps(kOctSin), o);
  const __m256 neg = _mm256_set1_ps(-0.0f);
  const __m256 cos_t = _mm256_fmadd_ps(oc, c_th, _mm256_xor_ps(_mm256_mul_ps(os, s_th), neg));
  const __m256 sin_t = _mm256_fmadd_ps(os, c_th, _mm256_mul_ps(oc, s_th));
  _mm256_storeu_ps(out, _mm256_mul_ps(r, cos_t));
  _mm256_storeu_ps(out + 8, _mm256_mul_ps(r, sin_t));
}

// Popcount of each 64-bit lane: nibble look-up (vpshufb) and a byte sum per lane (vpsadbw).
// popcnt_bytes: each byte's popcount (<= 8), so that up to kByteRun of them add up in bytes
// before one vpsadbw.
__attribute__((target("avx2"))) inline __m256i popcnt_bytes(__m256i v) {
  const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                       0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_and_si256(v, low);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
  return _mm256_add_epi8(_mm256_shuffle_epi8(lut, lo), _mm256_shuffle_epi8(lut, hi));
}
constexpr int kByteRun = 31;  // 31 * 8 = 248: byte sums that cannot wrap
__attribute__((target("avx2"))) inline __m256i popcnt64(__m256i v) {
  return _mm256_sad_epu8(popcnt_bytes(v), _mm256_setzero_si256());
}

__attribute__((target("avx2"))) void popcount_columns_avx2(const PopTerm* terms, int n_terms, int n,
                                                           uint32_t* p) {
  const __m256i order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  int col = 0;
  for (; col + 8 <= n; col += 8) {
    __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();  // columns 0-3, 4-7 (u64)
    for (int t = 0; t < n_terms; ++t) {
      const __m256i xm = _mm256_set1_epi64x(static_cast<long long>(terms[t].xm));
      const __m128i sh = _mm_cvtsi32_si128(terms[t].shift);
      const uint64_t* pl = terms[t].plane + col;
      const __m256i ca = popcnt64(_mm256_and_si256(xm, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pl))));
      const __m256i cb = popcnt64(_mm256_and_si256(xm, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pl + 4))));
      a = _mm256_add_epi64(a, _mm256_sll_epi64(ca, sh));
      b = _mm256_add_epi64(b, _mm256_sll_epi64(cb, sh));
    }
    // Sums below 2^32: interleave the low halves and restore the column order.
    const __m256i mixed = _mm256_blend_epi32(a, _mm256_slli_epi64(b, 32), 0xAA);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + col), _mm256_permutevar8x32_epi32(mixed, order));
  }
  for (; col < n; ++col) {
    uint32_t s = 0;
    for (int t = 0; t < n_terms; ++t)
      s += static_cast<uint32_t>(std::popcount(terms[t].xm & terms[t].plane[col])) << terms[t].shift;
    p[col] = s;
  }
}


// The codes clamp(p + k, 0, top) of 8 conversions, k the rounded read noise of draw at0 + idx
// (lane by lane: analog_columns_portable's, with the counter's carry into its high word).
__attribute__((target("avx2"))) inline __m256i rounded_codes_avx2(__m256i p, uint64_t at0, __m256i idx,
                                                                  const RoundedDraws& nz, const __m256i* thr,
                                                                  int n_thr, __m256i top) {
  const __m256i vlo0 = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(at0)));
  const __m256i lo = _mm256_add_epi32(vlo0, idx);
  const __m256i sb = _mm256_set1_epi32(std::numeric_limits<int32_t>::min());
  const __m256i carry = _mm256_cmpgt_epi32(_mm256_xor_si256(vlo0, sb), _mm256_xor_si256(lo, sb));  // -1: wrapped
  const __m256i hi = _mm256_sub_epi32(_mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(at0 >> 32) + nz.key.k0)), carry);
  const __m256i u = mix32_avx2(_mm256_xor_si256(mix32_avx2(_mm256_xor_si256(lo, _mm256_set1_epi32(static_cast<int>(nz.key.k2)))), hi));
  __m256i c = _mm256_set1_epi32(-nz.law.k_max);
  for (int j = 0; j < n_thr; ++j) c = _mm256_sub_epi32(c, _mm256_cmpeq_epi32(_mm256_max_epu32(u, thr[j]), u));
  return _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(p, c), _mm256_setzero_si256()), top);
}

// kNoisy: noise is given (one instantiation each, so that the noise-free kernel carries none of it).
template <bool kNoisy>
__attribute__((target("avx2"))) void analog_columns_avx2(const InputTerm* terms, const uint64_t* planes, const int* step_begin,
                                                         int T, int G, const int* sign,
                                                         const int* offset, AdcRule adc, int n,
                                                         int64_t* acc, const RoundedDraws* noise) {
  // 16 columns per block in two halves h of 8. Within a half, 32-bit lane 2i holds column i and
  // lane 2i+1 column 4+i (the low halves of two popcount vectors, interleaved): the ADC works
  // lane by lane, and the 64-bit view splits the lanes back into columns 0-3 and 4-7.
  const __m256i half = _mm256_set1_epi32(static_cast<int>(adc.half));
  const __m256i top = _mm256_set1_epi32(static_cast<int>(adc.top));
  const __m256i low32 = _mm256_set1_epi64x(0xffffffffll);
  const __m128i adc_shift = _mm_cvtsi32_si128(adc.shift);
  // with noise: the thresholds, and each lane's column within its half (lane 2i: i, 2i + 1: 4 + i)
  __m256i thr[2 * kRoundedNoiseMaxK];
  const int n_thr = noise != nullptr ? 2 * noise->law.k_max : 0;
  for (int j = 0; j < n_thr; ++j) thr[j] = _mm256_set1_epi32(static_cast<int>(noise->law.thr[j]));
  const __m256i idx0 = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7), idx1 = _mm256_add_epi32(idx0, _mm256_set1_epi32(8));
  const __m256i ntop = _mm256_set1_epi32(noise != nullptr ? noise->top : 0);
  int col = 0;
  for (; col + 16 <= n; col += 16) {
    __m256i acc_v[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                        _mm256_setzero_si256()};  // int64 columns 0-3, 4-7, 8-11, 12-15
    for (int k = 0; k < T; ++k) {
      __m256i pk0 = _mm256_setzero_si256(), pk1 = _mm256_setzero_si256();
      for (int g = 0; g < G; ++g) {
        __m256i c[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                        _mm256_setzero_si256()};
        for (int t = step_begin[k * G + g]; t < step_begin[k * G + g + 1]; ++t) {
          const __m256i xm = _mm256_set1_epi64x(static_cast<long long>(terms[t].xm));
          const __m128i sh = _mm_cvtsi32_si128(terms[t].shift);
          const __m256i* pl = reinterpret_cast<const __m256i*>(planes + terms[t].at + col);
          for (int i = 0; i < 4; ++i)
            c[i] = _mm256_add_epi64(c[i], _mm256_sll_epi64(popcnt64(_mm256_and_si256(xm, _mm256_loadu_si256(pl + i))), sh));
        }
        const __m256i p0 = _mm256_or_si256(c[0], _mm256_slli_epi64(c[1], 32));
        const __m256i p1 = _mm256_or_si256(c[2], _mm256_slli_epi64(c[3], 32));
        if constexpr (kNoisy) {
          const uint64_t at0 = noise->base + static_cast<uint64_t>(k * G + g) * static_cast<uint64_t>(n) + static_cast<uint64_t>(col);
          pk0 = _mm256_add_epi32(pk0, rounded_codes_avx2(p0, at0, idx0, *noise, thr, n_thr, ntop));
          pk1 = _mm256_add_epi32(pk1, rounded_codes_avx2(p1, at0, idx1, *noise, thr, n_thr, ntop));
          continue;
        }
        const __m256i q0 = _mm256_min_epu32(_mm256_srl_epi32(_mm256_add_epi32(p0, half), adc_shift), top);
        const __m256i q1 = _mm256_min_epu32(_mm256_srl_epi32(_mm256_add_epi32(p1, half), adc_shift), top);
        pk0 = _mm256_add_epi32(pk0, _mm256_sll_epi32(q0, adc_shift));
        pk1 = _mm256_add_epi32(pk1, _mm256_sll_epi32(q1, adc_shift));
      }
      const __m128i off = _mm_cvtsi32_si128(offset[k]);
      const __m256i w[4] = {_mm256_sll_epi64(_mm256_and_si256(pk0, low32), off),
                            _mm256_sll_epi64(_mm256_srli_epi64(pk0, 32), off),
                            _mm256_sll_epi64(_mm256_and_si256(pk1, low32), off),
                            _mm256_sll_epi64(_mm256_srli_epi64(pk1, 32), off)};
      for (int i = 0; i < 4; ++i)
        acc_v[i] = sign[k] > 0 ? _mm256_add_epi64(acc_v[i], w[i]) : _mm256_sub_epi64(acc_v[i], w[i]);
    }
    for (int i = 0; i < 4; ++i) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + col + 4 * i), acc_v[i]);
  }
  analog_columns_portable(terms, planes, step_begin, T, G, sign, offset, adc, col, n, acc, noise);
}

// ---- AVX-512 (F and BW; F, BW and VPOPCNTDQ for the vpopcntq kernels). 16 lanes of the same
// operations as the AVX2 and portable kernels.

// Popcount of each 64-bit lane without VPOPCNTDQ: nibble look-up (vpshufb) and vpsadbw.
__attribute__((target("avx512f,avx512bw"))) inline __m512i popcnt_bytes_bw(__m512i v) {
  const __m512i lut = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4));
  const __m512i low = _mm512_set1_epi8(0x0f);
  const __m512i lo = _mm512_and_si512(v, low);
  const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
  return _mm512_add_epi8(_mm512_shuffle_epi8(lut, lo), _mm512_shuffle_epi8(lut, hi));
}
__attribute__((target("avx512f,avx512bw"))) inline __m512i sad_bw(__m512i bytes) {
  return _mm512_sad_epu8(bytes, _mm512_setzero_si512());
}
__attribute__((target("avx512f,avx512bw"))) inline __m512i same512(__m512i v) { return v; }


// noise_uniform of 16 counters at0 + idx, written with fewer operations for the same bits. With
// pre(v) = v ^ (v >> 16) and post(y) = y ^ (y >> 16), mix32(v) = post(core(pre(v))), core the
// two multiplies and the shift by 15 between them; pre is linear in xor and pre(post(y)) = y (in
// 32 bits y >> 32 is 0), so u = mix32(mix32(lo ^ k2) ^ hi) = post(core(core(pre(lo) ^ pre(k2)) ^
// pre(hi))): the first mix32's last shift and the second one's first cancel, and the keys' parts
// are constants of the call.
__attribute__((target("avx512f,avx512bw"))) inline __m512i mix_core_avx512(__m512i x) {
  x = _mm512_mullo_epi32(x, _mm512_set1_epi32(0x7feb352d));
  x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 15));
  return _mm512_mullo_epi32(x, _mm512_set1_epi32(static_cast<int>(0x846ca68bu)));
}
inline uint32_t pre16(uint32_t v) { return v ^ (v >> 16); }

// The codes clamp(p + k, 0, top) of 16 conversions (rounded_codes_avx2's, in 16 lanes): lo the
// counters' low words, hi_pre = pre(hi + k0) of their high word (per lane where the low word
// wrapped within the block), k2_pre = pre(k2).
__attribute__((target("avx512f,avx512bw"))) inline __m512i rounded_codes_avx512(__m512i p, __m512i lo, __m512i hi_pre,
                                                                              __m512i k2_pre, const __m512i* thr,
                                                                              int n_thr, __m512i c0, __m512i top) {
  const __m512i y = mix_core_avx512(_mm512_ternarylogic_epi32(lo, _mm512_srli_epi32(lo, 16), k2_pre, 0x96));
  const __m512i x = mix_core_avx512(_mm512_xor_si512(y, hi_pre));
  const __m512i u = _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
  __m512i c = c0;  // -k_max, plus one for each threshold u reaches
  const __m512i one = _mm512_set1_epi32(1);
  for (int j = 0; j < n_thr; ++j) c = _mm512_mask_add_epi32(c, _mm512_cmpge_epu32_mask(u, thr[j]), c, one);
  return _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(p, c), _mm512_setzero_si512()), top);
}

// Whether acc = sum over k of sign_k (pk << offset_k) stays within int32 for every column: each
// pk is at most G codes of at most `code` (top << shift, or the noisy top).
inline bool sums_fit_int32(int T, int G, const int* offset, uint64_t code) {
  uint64_t bound = 0;
  for (int k = 0; k < T; ++k) {
    if (offset[k] < 0 || offset[k] > 31) return false;
    bound += (static_cast<uint64_t>(G) * code) << offset[k];
    if (bound >= (uint64_t{1} << 31)) return false;
  }
  return true;
}

// popcount_columns and analog_columns on 512-bit vectors, once per popcount instruction, in
// functions of the matching target. popcount_columns sums the terms of a run (one shift, at most
// RUN terms) as PART counts by PADD, then REDUCE gives each 64-bit lane's count (nibble look-up
// bytes summed in bytes, one vpsadbw a run; or _mm512_popcnt_epi64 summed in 64-bit lanes);
// analog_columns with DIRECT (the popcounts in 64-bit lanes, no REDUCE) sums the counts of steps
// whose shifts descend Horner-wise in one set of accumulators; otherwise it counts short steps term by term (one term a
// step on 64-row groups, where the runs' bookkeeping cost more than they saved) and longer ones in
// runs. popcount_columns' layout is the AVX2 kernels' with 8 columns per vector; analog_columns
// puts a step's 16 column counts of two vectors in order in one (vpermt2d), so that the noise
// counters, the codes and the 32-bit sums over the input cycles run lane by lane in column order.
#define KVCIM_MACRO_AVX512_POPCOUNT_KERNELS(SUFFIX, TARGET, PART, PADD, REDUCE, RUN, DIRECT)              \
  __attribute__((target(TARGET))) void popcount_columns_##SUFFIX(const PopTerm* terms, int n_terms, \
                                                                 int n, uint32_t* p) {              \
    int col = 0;                                                                                    \
    for (; col + 16 <= n; col += 16) {                                                              \
      __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512(); /* columns 0-7, 8-15 */       \
      /* a run of terms of one shift (an input bit's row words) summed unshifted, shifted once */  \
      __m512i ra = _mm512_setzero_si512(), rb = _mm512_setzero_si512();                             \
      int run_shift = n_terms > 0 ? terms[0].shift : 0, len = 0;                                    \
      for (int t = 0; t < n_terms; ++t, ++len) {                                                    \
        if (terms[t].shift != run_shift || len == (RUN)) {                                          \
          const __m128i sh = _mm_cvtsi32_si128(run_shift);                                          \
          a = _mm512_add_epi64(a, _mm512_sll_epi64(REDUCE(ra), sh));                                \
          b = _mm512_add_epi64(b, _mm512_sll_epi64(REDUCE(rb), sh));                                \
          ra = rb = _mm512_setzero_si512();                                                         \
          run_shift = terms[t].shift;                                                               \
          len = 0;                                                                                  \
        }                                                                                           \
        const __m512i xm = _mm512_set1_epi64(static_cast<long long>(terms[t].xm));                  \
        const uint64_t* pl = terms[t].plane + col;                                                  \
        ra = PADD(ra, PART(_mm512_and_si512(xm, _mm512_loadu_si512(pl))));                          \
        rb = PADD(rb, PART(_mm512_and_si512(xm, _mm512_loadu_si512(pl + 8))));                      \
      }                                                                                             \
      const __m128i sh = _mm_cvtsi32_si128(run_shift);                                              \
      a = _mm512_add_epi64(a, _mm512_sll_epi64(REDUCE(ra), sh));                                    \
      b = _mm512_add_epi64(b, _mm512_sll_epi64(REDUCE(rb), sh));                                    \
      /* sums below 2^32: the low halves */                                                         \
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + col), _mm512_cvtepi64_epi32(a));           \
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + col + 8), _mm512_cvtepi64_epi32(b));       \
    }                                                                                               \
    if (col < n) {                                                                                  \
      for (int c = col; c < n; ++c) p[c] = 0;                                                       \
      for (int t = 0; t < n_terms; ++t)                                                             \
        for (int c = col; c < n; ++c)                                                               \
          p[c] += static_cast<uint32_t>(std::popcount(terms[t].xm & terms[t].plane[c])) << terms[t].shift; \
    }                                                                                               \
  }                                                                                                 \
                                                                                                    \
  /* kThr: the thresholds of the rounded noise, when fixed at compile time (0: the law's) */         \
  /* kHorner (DIRECT only): every step's shifts descend (compute_analog_fast's lists) */                \
  template <bool kNoisy, int kThr, bool kHorner>                                                     \
  __attribute__((target(TARGET))) void analog_columns_##SUFFIX(                                      \
      const InputTerm* terms, const uint64_t* planes, const int* step_begin, int T, int G, const int* sign,                    \
      const int* offset, AdcRule adc, int n, int64_t* acc, const RoundedDraws* noise) {              \
    /* 32 columns per block in two halves of 16, column i of a half in 32-bit lane i */              \
    const __m512i half = _mm512_set1_epi32(static_cast<int>(adc.half));                              \
    const __m512i top = _mm512_set1_epi32(static_cast<int>(adc.top));                                \
    const __m128i adc_shift = _mm_cvtsi32_si128(adc.shift);                                          \
    /* the low halves of two vectors of 8 column counts: 16 columns in order */                      \
    const __m512i pick = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30); \
    /* with noise: the thresholds, each lane's column in its block, the key's constant parts */      \
    __m512i thr[2 * kRoundedNoiseMaxK];                                                              \
    const int n_thr = kThr > 0 ? kThr : noise != nullptr ? 2 * noise->law.k_max : 0;                \
    static_assert(!kHorner || (DIRECT), "Horner sums need the counts in 64-bit lanes");              \
    for (int j = 0; j < n_thr; ++j) thr[j] = _mm512_set1_epi32(static_cast<int>(noise->law.thr[j])); \
    const __m512i idx0 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);    \
    const __m512i idx1 = _mm512_add_epi32(idx0, _mm512_set1_epi32(16));                              \
    const __m512i ntop = _mm512_set1_epi32(noise != nullptr ? noise->top : 0);                       \
    const __m512i c0 = _mm512_set1_epi32(noise != nullptr ? -noise->law.k_max : 0);                  \
    const __m512i k2_pre = _mm512_set1_epi32(static_cast<int>(noise != nullptr ? pre16(noise->key.k2) : 0u)); \
    /* the input cycles' weighted sums in 32-bit lanes where no column's can leave int32 */          \
    const bool narrow = sums_fit_int32(T, G, offset, noise != nullptr ? static_cast<uint64_t>(noise->top) \
                                                                       : static_cast<uint64_t>(adc.top) << adc.shift); \
    int col = 0;                                                                                     \
    for (; col + 32 <= n; col += 32) {                                                               \
      __m512i a32[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()}; /* narrow: columns 0-15, 16-31 */ \
      __m512i acc_v[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),    \
                          _mm512_setzero_si512()}; /* otherwise int64 columns 0-7, 8-15, 16-23, 24-31 */ \
      for (int k = 0; k < T; ++k) {                                                                  \
        __m512i pk0 = _mm512_setzero_si512(), pk1 = _mm512_setzero_si512();                          \
        for (int g = 0; g < G; ++g) {                                                                \
          __m512i c[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),    \
                          _mm512_setzero_si512()};                                                   \
          const int t0 = step_begin[k * G + g], t1 = step_begin[k * G + g + 1];                      \
          if constexpr (kHorner) {                                                                   \
            /* counts summed Horner-wise: where the shift falls, the sum so far is shifted */        \
            /* by the difference; the last shift once at the end */                                  \
            int cur = t0 < t1 ? terms[t0].shift : 0;                                                 \
            for (int t = t0; t < t1; ++t) {                                                          \
              if (terms[t].shift != cur) {                                                           \
                const __m128i d = _mm_cvtsi32_si128(cur - terms[t].shift);                           \
                for (int i = 0; i < 4; ++i) c[i] = _mm512_sll_epi64(c[i], d);                        \
                cur = terms[t].shift;                                                                \
              }                                                                                      \
              const __m512i xm = _mm512_set1_epi64(static_cast<long long>(terms[t].xm));             \
              const uint64_t* pl = planes + terms[t].at + col;                                       \
              for (int i = 0; i < 4; ++i) c[i] = PADD(c[i], PART(_mm512_and_si512(xm, _mm512_loadu_si512(pl + 8 * i)))); \
            }                                                                                        \
            if (cur > 0) {                                                                           \
              const __m128i d = _mm_cvtsi32_si128(cur);                                              \
              for (int i = 0; i < 4; ++i) c[i] = _mm512_sll_epi64(c[i], d);                          \
            }                                                                                        \
          } else if (t1 - t0 <= 2) {                                                                 \
            /* runs of one shift summed before one shift (as popcount_columns) where a step */       \
            /* has more than two terms (256-row groups: 4 words an input bit); shorter steps */      \
            /* (64-row groups) shift each term, which the runs' bookkeeping would cost more */       \
            for (int t = t0; t < t1; ++t) {                                                          \
              const __m512i xm = _mm512_set1_epi64(static_cast<long long>(terms[t].xm));             \
              const __m128i sh = _mm_cvtsi32_si128(terms[t].shift);                                  \
              const uint64_t* pl = planes + terms[t].at + col;                                             \
              for (int i = 0; i < 4; ++i)                                                            \
                c[i] = _mm512_add_epi64(c[i], _mm512_sll_epi64(REDUCE(PART(_mm512_and_si512(xm, _mm512_loadu_si512(pl + 8 * i)))), sh)); \
            }                                                                                        \
          } else {                                                                                   \
            __m512i r[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),  \
                            _mm512_setzero_si512()};                                                 \
            for (int t = t0, len = 1; t < t1; ++t, ++len) {                                          \
              const __m512i xm = _mm512_set1_epi64(static_cast<long long>(terms[t].xm));             \
              const uint64_t* pl = planes + terms[t].at + col;                                             \
              for (int i = 0; i < 4; ++i) r[i] = PADD(r[i], PART(_mm512_and_si512(xm, _mm512_loadu_si512(pl + 8 * i)))); \
              if (t + 1 == t1 || terms[t + 1].shift != terms[t].shift || len == (RUN)) {             \
                const __m128i sh = _mm_cvtsi32_si128(terms[t].shift);                                \
                for (int i = 0; i < 4; ++i) {                                                        \
                  c[i] = _mm512_add_epi64(c[i], _mm512_sll_epi64(REDUCE(r[i]), sh));                 \
                  r[i] = _mm512_setzero_si512();                                                     \
                }                                                                                    \
                len = 0;                                                                             \
              }                                                                                      \
            }                                                                                        \
          }                                                                                          \
          const __m512i p0 = _mm512_permutex2var_epi32(c[0], pick, c[1]);                            \
          const __m512i p1 = _mm512_permutex2var_epi32(c[2], pick, c[3]);                            \
          if constexpr (kNoisy) {                                                                    \
            const uint64_t at0 = noise->base + static_cast<uint64_t>(k * G + g) * static_cast<uint64_t>(n) + static_cast<uint64_t>(col); \
            const uint32_t lo0 = static_cast<uint32_t>(at0), hi = static_cast<uint32_t>(at0 >> 32) + noise->key.k0; \
            const __m512i vlo0 = _mm512_set1_epi32(static_cast<int>(lo0));                           \
            const __m512i lo_a = _mm512_add_epi32(vlo0, idx0), lo_b = _mm512_add_epi32(vlo0, idx1);  \
            __m512i h_a = _mm512_set1_epi32(static_cast<int>(pre16(hi))), h_b = h_a;                 \
            if (lo0 > 0xffffffffu - 31u) { /* the low word wraps within the block: hi + 1 past it */ \
              const __m512i h1 = _mm512_set1_epi32(static_cast<int>(pre16(hi + 1)));                 \
              h_a = _mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(lo_a, vlo0), h_a, h1);           \
              h_b = _mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(lo_b, vlo0), h_b, h1);           \
            }                                                                                        \
            pk0 = _mm512_add_epi32(pk0, rounded_codes_avx512(p0, lo_a, h_a, k2_pre, thr, n_thr, c0, ntop)); \
            pk1 = _mm512_add_epi32(pk1, rounded_codes_avx512(p1, lo_b, h_b, k2_pre, thr, n_thr, c0, ntop)); \
            continue;                                                                                \
          }                                                                                          \
          const __m512i q0 = _mm512_min_epu32(_mm512_srl_epi32(_mm512_add_epi32(p0, half), adc_shift), top); \
          const __m512i q1 = _mm512_min_epu32(_mm512_srl_epi32(_mm512_add_epi32(p1, half), adc_shift), top); \
          pk0 = _mm512_add_epi32(pk0, _mm512_sll_epi32(q0, adc_shift));                              \
          pk1 = _mm512_add_epi32(pk1, _mm512_sll_epi32(q1, adc_shift));                              \
        }                                                                                            \
        const __m128i off = _mm_cvtsi32_si128(offset[k]);                                            \
        if (narrow) {                                                                                \
          const __m512i w0 = _mm512_sll_epi32(pk0, off), w1 = _mm512_sll_epi32(pk1, off);            \
          a32[0] = sign[k] > 0 ? _mm512_add_epi32(a32[0], w0) : _mm512_sub_epi32(a32[0], w0);        \
          a32[1] = sign[k] > 0 ? _mm512_add_epi32(a32[1], w1) : _mm512_sub_epi32(a32[1], w1);        \
          continue;                                                                                  \
        }                                                                                            \
        const __m512i w[4] = {_mm512_sll_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(pk0)), off), \
                              _mm512_sll_epi64(_mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(pk0, 1)), off), \
                              _mm512_sll_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(pk1)), off), \
                              _mm512_sll_epi64(_mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(pk1, 1)), off)}; \
        for (int i = 0; i < 4; ++i)                                                                  \
          acc_v[i] = sign[k] > 0 ? _mm512_add_epi64(acc_v[i], w[i]) : _mm512_sub_epi64(acc_v[i], w[i]); \
      }                                                                                              \
      if (narrow)                                                                                    \
        for (int h = 0; h < 2; ++h) {                                                                \
          acc_v[2 * h] = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(a32[h]));                      \
          acc_v[2 * h + 1] = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(a32[h], 1));            \
        }                                                                                            \
      for (int i = 0; i < 4; ++i) _mm512_storeu_si512(acc + col + 8 * i, acc_v[i]);                  \
    }                                                                                                \
    analog_columns_portable(terms, planes, step_begin, T, G, sign, offset, adc, col, n, acc, noise);         \
  }

KVCIM_MACRO_AVX512_POPCOUNT_KERNELS(avx512bw, "avx512f,avx512bw", popcnt_bytes_bw, _mm512_add_epi8, sad_bw, kByteRun, false)
KVCIM_MACRO_AVX512_POPCOUNT_KERNELS(avx512vp, "avx512f,avx512bw,avx512vpopcntdq", _mm512_popcnt_epi64,
                                    _mm512_add_epi64, same512, 1 << 30, true)
#undef KVCIM_MACRO_AVX512_POPCOUNT_KERNELS

__attribute__((target("avx512f,avx512bw"))) void adc_noisy_avx512(const uint32_t* p, const double* pn,
                                                                  const double* rn, int n, double scale,
                                                                  double top, int shift, uint32_t* pk) {
  const __m512d vs = _mm512_set1_pd(scale), vh = _mm512_set1_pd(0.5), vt = _mm512_set1_pd(top);
  const __m512d zero = _mm512_setzero_pd();
  const __m128i sh = _mm_cvtsi32_si128(shift);
  int col = 0;
  for (; col + 16 <= n; col += 16) {
    __m256i c[2];
    for (int h = 0; h < 2; ++h) {
      const int i = col + 8 * h;
      const __m512d pv = _mm512_cvtepi32_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
      const __m512d v = _mm512_add_pd(pv, _mm512_add_pd(_mm512_loadu_pd(pn + i), _mm512_loadu_pd(rn + i)));
      __m512d code = _mm512_roundscale_pd(_mm512_add_pd(_mm512_mul_pd(v, vs), vh), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
      code = _mm512_min_pd(_mm512_max_pd(code, zero), vt);
      c[h] = _mm512_cvttpd_epi32(code);
    }
    const __m512i cv = _mm512_sll_epi32(_mm512_inserti64x4(_mm512_castsi256_si512(c[0]), c[1], 1), sh);
    _mm512_storeu_si512(pk + col, _mm512_add_epi32(_mm512_loadu_si512(pk + col), cv));
  }
  adc_noisy_portable(p, pn, rn, col, n, scale, top, shift, pk);
}

// Blocks m and m + 1 (32 draws: pairs 8 m .. 8 m + 15), the operations of normal_pair lane by lane.
__attribute__((target("avx512f,avx512bw"))) void normal_blocks_avx512(const NoiseKey& key, uint64_t m, float* out) {
  const uint64_t j0 = m << 3;
  const __m512i base = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(j0)));
  const __m512i lo = _mm512_add_epi32(base, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  // The high word of the counter: + 1 in the lanes past a carry out of the low word.
  __m512i hik = _mm512_set1_epi32(static_cast<int>(static_cast<uint32_t>(j0 >> 32) + key.k1));
  hik = _mm512_mask_add_epi32(hik, _mm512_cmplt_epu32_mask(lo, base), hik, _mm512_set1_epi32(1));
  const __m512i a = mix32_avx512(_mm512_xor_si512(mix32_avx512(_mm512_xor_si512(lo, _mm512_set1_epi32(static_cast<int>(key.k0)))), hik));
  const __m512i b = mix32_avx512(_mm512_xor_si512(a, _mm512_set1_epi32(static_cast<int>(key.k2))));
  const __m512 mf = _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_srli_epi32(a, 8), _mm512_set1_epi32(1)));
  const __m512i bits = _mm512_castps_si512(mf);
  __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(127));
  __m512 f = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x7fffff)),
                                                  _mm512_set1_epi32(0x3f800000)));
  const __mmask16 big = _mm512_cmp_ps_mask(f, _mm512_set1_ps(kSqrt2), _CMP_GT_OQ);
  f = _mm512_mask_mul_ps(f, big, f, _mm512_set1_ps(0.5f));
  e = _mm512_mask_add_epi32(e, big, e, _mm512_set1_epi32(1));
  const __m512 t = _mm512_sub_ps(f, _mm512_set1_ps(1.0f));
  const __m512 z = _mm512_mul_ps(t, t);
  __m512 q = _mm512_set1_ps(7.0376836292e-2f);
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-1.1514610310e-1f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.1676998740e-1f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-1.2420140846e-1f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(1.4249322787e-1f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-1.6668057665e-1f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(2.0000714765e-1f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(-2.4999993993e-1f));
  q = _mm512_fmadd_ps(q, t, _mm512_set1_ps(3.3333331174e-1f));
  __m512 y = _mm512_mul_ps(q, t);
  y = _mm512_mul_ps(y, z);
  y = _mm512_fmadd_ps(_mm512_set1_ps(-0.5f), z, y);
  const __m512 ln_u1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(e, _mm512_set1_epi32(24))),
                                       _mm512_set1_ps(kLn2), _mm512_add_ps(t, y));
  const __m512 r = _mm512_sqrt_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_set1_ps(-2.0f), ln_u1), _mm512_setzero_ps()));
  const __m512i u = _mm512_srli_epi32(b, 8);
  const __m512i o = _mm512_srli_epi32(u, 21);
  const __m512 w = _mm512_sub_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_and_si512(u, _mm512_set1_epi32(0x1fffff))),
                                               _mm512_set1_ps(0x1p-21f)),
                                 _mm512_set1_ps(0.5f));
  const __m512 th = _mm512_mul_ps(w, _mm512_set1_ps(kPiOver4));
  const __m512 z2 = _mm512_mul_ps(th, th);
  __m512 ps = _mm512_fmadd_ps(_mm512_set1_ps(-1.9515295891e-4f), z2, _mm512_set1_ps(8.3321608736e-3f));
  ps = _mm512_fmadd_ps(ps, z2, _mm512_set1_ps(-1.6666654611e-1f));
  const __m512 s_th = _mm512_fmadd_ps(_mm512_mul_ps(ps, z2), th, th);
  __m512 pc = _mm512_fmadd_ps(_mm512_set1_ps(2.443315711809948e-5f), z2, _mm512_set1_ps(-1.388731625493765e-3f));
  pc = _mm512_fmadd_ps(pc, z2, _mm512_set1_ps(4.166664568298827e-2f));
  const __m512 c_th = _mm512_fmadd_ps(_mm512_mul_ps(pc, z2), z2,
                                      _mm512_fmadd_ps(_mm512_set1_ps(-0.5f), z2, _mm512_set1_ps(1.0f)));
  // o < 8 reads the low 8 lanes of each table only.
  const __m512 oc = _mm512_permutexvar_ps(o, _mm512_castps256_ps512(_mm256_loadu_ps(kOctCos)));
  const __m512 os = _mm512_permutexvar_ps(o, _mm512_castps256_ps512(_mm256_loadu_ps(kOctSin)));
  const __m512 cos_t = _mm512_fmsub_ps(oc, c_th, _mm512_mul_ps(os, s_th));  // fma(oc, c_th, -(os s_th))
  const __m512 sin_t = _mm512_fmadd_ps(os, c_th, _mm512_mul_ps(oc, s_th));
  const __m512 rc = _mm512_mul_ps(r, cos_t), rs = _mm512_mul_ps(r, sin_t);
  // Block m: cosines then sines of lanes 0-7; block m + 1: the same of lanes 8-15.
  _mm512_storeu_ps(out, _mm512_permutex2var_ps(rc, _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23), rs));
  _mm512_storeu_ps(out + 16, _mm512_permutex2var_ps(rc, _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31), rs));
}

// cell_noise_sums over blocks of 64 columns: for each k, 8 vectors of double sums stay in registers
// while the rows with u != 0 go by in ascending order (fma(u, dev, s) == s + u * dev: the product
// is exact). The block's deviations are converted to double once, into a scratch that the k
// then read from L1 (a 64-row group: 32 KB).
__attribute__((target("avx512f,avx512bw"))) void cell_noise_sums_avx512(const float* dev, size_t stride,
                                                                       int n_rows, const uint32_t* u,
                                                                       int T, int n, double* pn) {
  std::vector<int> rows(static_cast<size_t>(T) * n_rows);
  std::vector<double> level(static_cast<size_t>(T) * n_rows);
  std::vector<int> count(T, 0);
  for (int k = 0; k < T; ++k)
    for (int i = 0; i < n_rows; ++i) {
      const uint32_t ui = u[static_cast<size_t>(i) * T + k];
      if (ui == 0) continue;
      const size_t at = static_cast<size_t>(k) * n_rows + count[k]++;
      rows[at] = i;
      level[at] = ui;
    }
  constexpr int kW = 64;  // columns per block
  std::vector<double> dd(static_cast<size_t>(n_rows) * kW);  // the block's deviations in double
  int col = 0;
  for (; col + kW <= n; col += kW) {
    // Converted once, row by row; the rows of the block after next are fetched meanwhile (the
    // hardware prefetcher does not follow these short strided runs).
    const bool ahead = col + 3 * kW <= n;
    for (int i = 0; i < n_rows; ++i) {
      const float* d = dev + static_cast<size_t>(i) * stride + col;
      if (ahead)
        for (int b = 0; b < kW * 4; b += 64) _mm_prefetch(reinterpret_cast<const char*>(d + 2 * kW) + b, _MM_HINT_T0);
      for (int j = 0; j < kW / 8; ++j)
        _mm512_storeu_pd(dd.data() + static_cast<size_t>(i) * kW + 8 * j, _mm512_cvtps_pd(_mm256_loadu_ps(d + 8 * j)));
    }
    for (int k = 0; k < T; ++k) {
      __m512d s[kW / 8];
      for (int j = 0; j < kW / 8; ++j) s[j] = _mm512_setzero_pd();
      const int* rk = rows.data() + static_cast<size_t>(k) * n_rows;
      const double* lk = level.data() + static_cast<size_t>(k) * n_rows;
      for (int i = 0; i < count[k]; ++i) {
        const double* d = dd.data() + static_cast<size_t>(rk[i]) * kW;
        const __m512d du = _mm512_set1_pd(lk[i]);
        for (int j = 0; j < kW / 8; ++j) s[j] = _mm512_fmadd_pd(du, _mm512_loadu_pd(d + 8 * j), s[j]);
      }
      double* out = pn + static_cast<size_t>(k) * n + col;
      for (int j = 0; j < kW / 8; ++j) _mm512_storeu_pd(out + 8 * j, s[j]);
    }
  }
  if (col < n) cell_noise_sums_portable(dev, stride, n_rows, u, T, col, n, pn);
}

// The listed rows i < m (ROW(i): row i's first column of the block) in runs of `run` rows summed
// in int16 lanes (two vectors of L16 columns), each run widened to int32, shifted by sb and added
// to A0 .. A3 (columns in order); shared by cell_noise_isums and fixed_columns.
#define KVCIM_MACRO_ROW_RUNS(VEC, P, L16, LOAD, WIDEN_LO, WIDEN_HI, ROW, A0, A1, A2, A3) \
  for (int i0 = 0; run > 1 && i0 < m; i0 += run) {                                        \
    const int i1 = std::min(m, i0 + run);                                                 \
    VEC h0 = LOAD(ROW(i0)), h1 = LOAD(ROW(i0) + (L16));                                   \
    for (int i = i0 + 1; i < i1; ++i) {                                                   \
      h0 = P##_add_epi16(h0, LOAD(ROW(i)));                                               \
      h1 = P##_add_epi16(h1, LOAD(ROW(i) + (L16)));                                       \
    }                                                                                     \
    A0 = P##_add_epi32(A0, P##_sll_epi32(WIDEN_LO(h0), sb));                              \
    A1 = P##_add_epi32(A1, P##_sll_epi32(WIDEN_HI(h0), sb));                              \
    A2 = P##_add_epi32(A2, P##_sll_epi32(WIDEN_LO(h1), sb));                              \
    A3 = P##_add_epi32(A3, P##_sll_epi32(WIDEN_HI(h1), sb));                              \
  }
#define KVCIM_MACRO_ISUMS_ROW(i) (r[i] + col)
#define KVCIM_MACRO_FIXED_ROW(i) (q0 + r[i])

// cell_noise_isums over blocks of two int16 vectors of columns (64 columns on AVX-512, 32 on
// AVX2): for each input cycle k and level bit b, the listed rows' deviations are added in int16
// lanes, `run` rows at a time (|sum| <= run * qmax <= 32767: no lane wraps), each run widened to
// int32, shifted by b and added to the block's sums. A zero input bit costs nothing, and one int16
// add covers a row of 32 (16) columns: against multiplying every row pair by its two levels
// (vpmaddwd / VNNI vpdpwssd, 16 columns), a quarter of the instructions at half density. The
// group's rows of a block (64 rows x 128 bytes) stay in L1 for the T cycles (grid_row_stride).
// Integer sums: every kernel and order gives the same S.
#define KVCIM_MACRO_ISUMS_KERNEL(SUFFIX, TARGET, VEC, BITS, L16, P, LOAD, STORE, WIDEN_LO, WIDEN_HI, WIDEN_LOAD) \
  __attribute__((target(TARGET))) void cell_noise_isums_##SUFFIX(const int16_t* qdev, size_t stride,      \
                                                                int n_rows, const uint32_t* u, int T,   \
                                                                int n, int32_t qmax, int32_t* S) {      \
    const RowLists rl(qdev, stride, n_rows, u, T);                                                       \
    const int run = qmax > 0 ? std::max(1, 32767 / qmax) : std::max(1, n_rows);                         \
    constexpr int kW = 2 * (L16); /* columns per block */                                                \
    int col = 0;                                                                                         \
    for (; col + kW <= n; col += kW) {                                                                   \
      /* the next block's rows, fetched meanwhile: 64 strided runs are more than the hardware */        \
      /* prefetcher follows, and a macro's deviations (1 MB at 256 x 2,048) do not stay in L2 */          \
      if (col + 2 * kW <= n)                                                                             \
        for (int i = 0; i < n_rows; ++i)                                                                 \
          for (int c = kW; c < 2 * kW; c += 32)                                                          \
            _mm_prefetch(reinterpret_cast<const char*>(qdev + i * stride + col + c), _MM_HINT_T0);       \
      for (int k = 0; k < T; ++k) {                                                                      \
        VEC a0 = P##_setzero_si##BITS(), a1 = a0, a2 = a0, a3 = a0;                                      \
        for (int b = 0; b < rl.bits; ++b) {                                                              \
          const __m128i sb = _mm_cvtsi32_si128(b);                                                       \
          const int* at = rl.begin.data() + k * rl.bits + b;                                             \
          const int16_t* const* r = rl.rows.data() + at[0];                                              \
          const int m = at[1] - at[0];                                                                   \
          if (run == 1) /* no two rows fit an int16 lane: each row widened as it is loaded */           \
            for (int i = 0; i < m; ++i) {                                                                \
              a0 = P##_add_epi32(a0, P##_sll_epi32(WIDEN_LOAD(r[i] + col), sb));                         \
              a1 = P##_add_epi32(a1, P##_sll_epi32(WIDEN_LOAD(r[i] + col + (L16) / 2), sb));             \
              a2 = P##_add_epi32(a2, P##_sll_epi32(WIDEN_LOAD(r[i] + col + (L16)), sb));                 \
              a3 = P##_add_epi32(a3, P##_sll_epi32(WIDEN_LOAD(r[i] + col + 3 * (L16) / 2), sb));         \
            }                                                                                            \
          KVCIM_MACRO_ROW_RUNS(VEC, P, L16, LOAD, WIDEN_LO, WIDEN_HI, KVCIM_MACRO_ISUMS_ROW, a0, a1, a2, a3) \
        }                                                                                                \
        int32_t* out = S + static_cast<size_t>(k) * n + col;                                            \
        STORE(out, a0);                                                                                  \
        STORE(out + (L16) / 2, a1);                                                                      \
        STORE(out + (L16), a2);                                                                          \
        STORE(out + 3 * (L16) / 2, a3);                                                                  \
      }                                                                                                  \
    }                                                                                                    \
    if (col < n) cell_noise_isums_portable(qdev, stride, n_rows, u, T, col, n, S);                       \
  }

__attribute__((target("avx2"))) inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
__attribute__((target("avx2"))) inline void store256(void* p, __m256i v) {
  _mm256_storeu_si256(static_cast<__m256i*>(p), v);
}
// The low and high halves of a vector, each widened by CVT: NAME_lo256 / NAME_hi256 (AVX2),
// NAME_lo512 / NAME_hi512 (AVX-512). widen: int16 to int32; u64: uint32 to 64 bits.
#define KVCIM_MACRO_HALF_WIDEN(NAME, CVT256, CVT512)                                                      \
  __attribute__((target("avx2"))) inline __m256i NAME##_lo256(__m256i v) {                                \
    return CVT256(_mm256_castsi256_si128(v));                                                             \
  }                                                                                                       \
  __attribute__((target("avx2"))) inline __m256i NAME##_hi256(__m256i v) {                                \
    return CVT256(_mm256_extracti128_si256(v, 1));                                                        \
  }                                                                                                       \
  __attribute__((target("avx512f,avx512bw"))) inline __m512i NAME##_lo512(__m512i v) {                    \
    return CVT512(_mm512_castsi512_si256(v));                                                             \
  }                                                                                                       \
  __attribute__((target("avx512f,avx512bw"))) inline __m512i NAME##_hi512(__m512i v) {                    \
    return CVT512(_mm512_extracti64x4_epi64(v, 1));                                                       \
  }
KVCIM_MACRO_HALF_WIDEN(widen, _mm256_cvtepi16_epi32, _mm512_cvtepi16_epi32)
KVCIM_MACRO_HALF_WIDEN(u64, _mm256_cvtepu32_epi64, _mm512_cvtepu32_epi64)
#undef KVCIM_MACRO_HALF_WIDEN
__attribute__((target("avx2"))) inline __m256i widen_load256(const int16_t* p) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
__attribute__((target("avx512f,avx512bw"))) inline __m512i widen_load512(const int16_t* p) {
  return _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
KVCIM_MACRO_ISUMS_KERNEL(avx2, "avx2", __m256i, 256, 16, _mm256, load256, store256, widen_lo256, widen_hi256,
                         widen_load256)
KVCIM_MACRO_ISUMS_KERNEL(avx512, "avx512f,avx512bw", __m512i, 512, 32, _mm512, _mm512_loadu_si512, _mm512_storeu_si512,
                         widen_lo512, widen_hi512, widen_load512)
#undef KVCIM_MACRO_ISUMS_KERNEL

constexpr int kFixedMaxT = 16;  // input cycles the vector fixed_columns takes (wider: portable)
// fixed_columns over blocks of two int16 vectors of columns (64 on AVX-512, 32 on AVX2): every
// step's cell sums as cell_noise_isums' runs, in registers, then the integer ADC of adc_fixed_code and
// the sum over the groups and input cycles, so that neither the sums, the codes nor pk go through
// memory. The group's rows of a block stay in L1 for its T input cycles, the codes summed in a small L1 buffer.
#define KVCIM_MACRO_FIXED_KERNEL(SUFFIX, TARGET, VEC, L16, P, AND, LOAD, STORE, WIDEN_LO, WIDEN_HI, WIDEN_LOAD, \
                                 U64_LO, U64_HI, SET1_64, POPCNT64, PACK)                                 \
  __attribute__((target(TARGET))) void fixed_columns_##SUFFIX(const FixedSteps& f, int n, int64_t* acc) {   \
    const int run = f.qmax > 0 ? std::max(1, 32767 / f.qmax) : std::numeric_limits<int>::max();           \
    const VEC mask = P##_set1_epi32(static_cast<int32_t>((1u << f.shift) - 1u));                           \
    const VEC half = P##_set1_epi32(1 << (f.q + f.shift - 1)), vt = P##_set1_epi32(f.top);               \
    const VEC zero = P##_set1_epi32(0);                                                                   \
    const __m128i sq = _mm_cvtsi32_si128(f.q), ss = _mm_cvtsi32_si128(f.shift);                           \
    const __m128i sqs = _mm_cvtsi32_si128(f.q + f.shift);                                                 \
    constexpr int kW = 2 * (L16), kL32 = (L16) / 2, kL64 = (L16) / 4;                                     \
    int col = 0;                                                                                          \
    alignas(64) int32_t pkb[kFixedMaxT * kW]; /* pk of every input cycle k, the block's columns */         \
    for (; f.T <= kFixedMaxT && col + kW <= n; col += kW) {                                               \
      /* no deviations (read noise only): no rows listed, q0 never read */                               \
      const int16_t* q0 = f.qdev != nullptr ? fixed_grid_at(f, col) : nullptr;                            \
      for (int g = 0; g < f.G; ++g) {                                                                     \
        /* the rows of the next (block, group), fetched meanwhile: 64 strided runs are more */         \
        /* than the hardware prefetcher follows (a further one would be evicted before its use) */       \
        const int gn = g + 1 < f.G ? g + 1 : 0, cn = g + 1 < f.G ? 0 : kW;                               \
        /* (a tiled table's lines lie together: the hardware prefetcher follows them) */                 \
        if (q0 != nullptr && f.tile == 0 && col + cn + kW <= n)                                          \
          for (int i = gn * f.rpc; i < std::min(f.n_rows, (gn + 1) * f.rpc); ++i)                         \
            for (int c = cn; c < cn + kW; c += 32)                                                        \
              _mm_prefetch(reinterpret_cast<const char*>(q0 + i * f.stride + c), _MM_HINT_T0);            \
        for (int k = 0; k < f.T; ++k) {                                                                   \
          const size_t s = static_cast<size_t>(k) * f.G + g;                                              \
          VEC a[4] = {zero, zero, zero, zero};                                                            \
          for (int b = 0; b < f.bits; ++b) {                                                              \
            const __m128i sb = _mm_cvtsi32_si128(b);                                                      \
            const int32_t* r = f.row_off + f.row_begin[s * f.bits + b];                                  \
            const int m = f.row_begin[s * f.bits + b + 1] - f.row_begin[s * f.bits + b];                  \
            if (run == 1) /* no two rows fit an int16 lane */                                             \
              for (int i = 0; i < m; ++i)                                                                 \
                for (int j = 0; j < 4; ++j)                                                               \
                  a[j] = P##_add_epi32(a[j], P##_sll_epi32(WIDEN_LOAD(q0 + r[i] + j * kL32), sb));        \
            KVCIM_MACRO_ROW_RUNS(VEC, P, L16, LOAD, WIDEN_LO, WIDEN_HI, KVCIM_MACRO_FIXED_ROW, a[0], a[1], a[2], a[3]) \
          }                                                                                               \
          VEC pc[4]; /* the step's partial sums, counted here (popcount_columns' terms) */              \
          if (f.p == nullptr) {                                                                           \
            VEC c64[8];                                                                                   \
            for (auto& v : c64) v = zero;                                                                 \
            for (int t = f.step_begin[s]; t < f.step_begin[s + 1]; ++t) {                                 \
              const VEC xm = SET1_64(static_cast<long long>(f.terms[t].xm));                              \
              const __m128i sh = _mm_cvtsi32_si128(f.terms[t].shift);                                     \
              const uint64_t* pl = f.terms[t].plane + col;                                                \
              for (int i = 0; i < 8; ++i)                                                                 \
                c64[i] = P##_add_epi64(c64[i], P##_sll_epi64(POPCNT64(AND(xm, LOAD(pl + i * kL64))), sh)); \
            }                                                                                             \
            for (int j = 0; j < 4; ++j) pc[j] = PACK(c64[2 * j], c64[2 * j + 1]);                        \
          }                                                                                               \
          for (int j = 0; j < 4; ++j) { /* adc_fixed_code, 16 (8) lanes */                                    \
            const size_t at = s * static_cast<size_t>(n) + col + j * kL32;                                \
            VEC d = P##_add_epi32(a[j], half);                                                            \
            if (f.R != nullptr) d = P##_add_epi32(d, LOAD(f.R + at));                                     \
            const VEC pv = f.p == nullptr ? pc[j] : LOAD(f.p + at);                                       \
            const VEC rem = P##_sll_epi32(AND(pv, mask), sq);                                             \
            VEC c = P##_add_epi32(P##_srl_epi32(pv, ss), P##_sra_epi32(P##_add_epi32(rem, d), sqs));      \
            c = P##_sll_epi32(P##_min_epi32(P##_max_epi32(c, zero), vt), ss);                             \
            int32_t* pk = pkb + k * kW + j * kL32;                                                        \
            STORE(pk, g == 0 ? c : P##_add_epi32(LOAD(pk), c));                                           \
          }                                                                                               \
        }                                                                                                 \
      }                                                                                                   \
      VEC a64[8];                                                                                         \
      for (auto& v : a64) v = zero;                                                                       \
      for (int k = 0; k < f.T; ++k) {                                                                     \
        const __m128i off = _mm_cvtsi32_si128(f.offset[k]);                                               \
        for (int j = 0; j < 4; ++j) {                                                                     \
          const VEC pk = LOAD(pkb + k * kW + j * kL32);                                                   \
          const VEC lo = P##_sll_epi64(U64_LO(pk), off), hi = P##_sll_epi64(U64_HI(pk), off);             \
          a64[2 * j] = f.sign[k] > 0 ? P##_add_epi64(a64[2 * j], lo) : P##_sub_epi64(a64[2 * j], lo);     \
          a64[2 * j + 1] = f.sign[k] > 0 ? P##_add_epi64(a64[2 * j + 1], hi) : P##_sub_epi64(a64[2 * j + 1], hi); \
        }                                                                                                 \
      }                                                                                                   \
      for (int j = 0; j < 8; ++j) STORE(acc + col + j * kL64, a64[j]);                                    \
    }                                                                                                     \
    fixed_columns_portable(f, col, n, acc);                                                               \
  }
// The low 32 bits of the 64-bit lanes of a and then b, in order, in one vector (fixed_columns' counts).
__attribute__((target("avx2"))) inline __m256i pack_lo32_256(__m256i a, __m256i b) {
  const __m256i x = _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), 0x88));
  return _mm256_permute4x64_epi64(x, 0xD8);  // a0 a1 b0 b1 | a2 a3 b2 b3 -> a0 .. a3 b0 .. b3
}
__attribute__((target("avx512f,avx512bw"))) inline __m512i pack_lo32_512(__m512i a, __m512i b) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(a)), _mm512_cvtepi64_epi32(b), 1);
}
__attribute__((target("avx512f,avx512bw"))) inline __m512i popcnt64_bw(__m512i v) { return sad_bw(popcnt_bytes_bw(v)); }
KVCIM_MACRO_FIXED_KERNEL(avx2, "avx2", __m256i, 16, _mm256, _mm256_and_si256, load256, store256, widen_lo256, widen_hi256, widen_load256,
                         u64_lo256, u64_hi256, _mm256_set1_epi64x, popcnt64, pack_lo32_256)
KVCIM_MACRO_FIXED_KERNEL(avx512, "avx512f,avx512bw", __m512i, 32, _mm512, _mm512_and_si512, _mm512_loadu_si512, _mm512_storeu_si512,
                         widen_lo512, widen_hi512, widen_load512, u64_lo512, u64_hi512, _mm512_set1_epi64, popcnt64_bw, pack_lo32_512)
KVCIM_MACRO_FIXED_KERNEL(avx512vp, "avx512f,avx512bw,avx512vpopcntdq", __m512i, 32, _mm512, _mm512_and_si512, _mm512_loadu_si512,
                         _mm512_storeu_si512, widen_lo512, widen_hi512, widen_load512, u64_lo512, u64_hi512, _mm512_set1_epi64,
                         _mm512_popcnt_epi64,
                         pack_lo32_512)
#undef KVCIM_MACRO_FIXED_KERNEL
#undef KVCIM_MACRO_ROW_RUNS
#undef KVCIM_MACRO_ISUMS_ROW
#undef KVCIM_MACRO_FIXED_ROW

__attribute__((target("avx512f,avx512bw"))) int adc_noisy_bounded_avx512(
    const uint32_t* p, const int32_t* S, double qscale, const double* rn, double margin, int n,
    double scale, double top, int shift, uint32_t* pk, int* uncertain) {
  const __m512d vs = _mm512_set1_pd(scale), vh = _mm512_set1_pd(0.5), vt = _mm512_set1_pd(top);
  const __m512d vq = _mm512_set1_pd(qscale), vm = _mm512_set1_pd(margin), eps = _mm512_set1_pd(0x1p-48);
  const __m512d zero = _mm512_setzero_pd();
  const __m256i sh = _mm256_set1_epi32(shift);
  constexpr int kFloor = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  int m = 0, col = 0;
  for (; col + 8 <= n; col += 8) {
    const __m512d pv = _mm512_cvtepi32_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + col)));
    const __m512d pna = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(S + col))), vq);
    const __m512d va = _mm512_add_pd(pv, _mm512_add_pd(pna, _mm512_loadu_pd(rn + col)));
    // mc = bounded_margin(margin, va, p)
    const __m512d mc = _mm512_add_pd(vm, _mm512_mul_pd(_mm512_add_pd(_mm512_abs_pd(va), pv), eps));
    const __m512d lo = _mm512_roundscale_pd(_mm512_add_pd(_mm512_mul_pd(_mm512_sub_pd(va, mc), vs), vh), kFloor);
    const __m512d hi = _mm512_roundscale_pd(_mm512_add_pd(_mm512_mul_pd(_mm512_add_pd(va, mc), vs), vh), kFloor);
    const __mmask8 sure = _mm512_cmp_pd_mask(lo, hi, _CMP_EQ_OQ);
    // the uncertain lanes add 0 here (their code is the caller's)
    const __m512d code = _mm512_mask_blend_pd(sure, zero, _mm512_min_pd(_mm512_max_pd(lo, zero), vt));
    const __m256i c = _mm256_sllv_epi32(_mm512_cvttpd_epi32(code), sh);
    __m256i* dst = reinterpret_cast<__m256i*>(pk + col);
    _mm256_storeu_si256(dst, _mm256_add_epi32(_mm256_loadu_si256(dst), c));
    for (unsigned left = static_cast<unsigned>(~sure) & 0xFFu; left != 0; left &= left - 1)
      uncertain[m++] = col + std::countr_zero(left);
  }
  return m + adc_noisy_bounded_portable(p, S, qscale, rn, margin, col, n, scale, top, shift, pk, uncertain + m);
}

// combine_slices for S = 8: each weight's 8 slices one vector, shifted and signed lane by lane;
// 8 weights' vectors summed across their lanes in three steps of pairs (64-bit, 128-bit and
// 256-bit halves), which leaves the 8 sums in order.
__attribute__((target("avx512f"))) void combine_slices8_avx512(const int64_t* acc, int n_out, const int* sign,
                                                               const int* offset, int64_t* y) {
  const __m512i off = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(offset)));
  __mmask8 neg = 0;
  for (int j = 0; j < 8; ++j) neg = static_cast<__mmask8>(neg | (sign[j] < 0 ? 1u << j : 0u));
  const __m512i zero = _mm512_setzero_si512();
  int o = 0;
  for (; o + 8 <= n_out; o += 8) {
    __m512i v[8];
    for (int i = 0; i < 8; ++i) {
      const __m512i a = _mm512_sllv_epi64(_mm512_loadu_si512(acc + static_cast<size_t>(o + i) * 8), off);
      v[i] = _mm512_mask_sub_epi64(a, neg, zero, a);
    }
    __m512i t[4], u[2];
    for (int i = 0; i < 4; ++i)  // 128-bit lane L: weight 2i's lanes 2L + 2L+1, weight 2i+1's
      t[i] = _mm512_add_epi64(_mm512_unpacklo_epi64(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_epi64(v[2 * i], v[2 * i + 1]));
    for (int i = 0; i < 2; ++i)  // [4i, 4i+1 of lanes 0-3 | of 4-7 | 4i+2, 4i+3 of 0-3 | of 4-7]
      u[i] = _mm512_add_epi64(_mm512_shuffle_i64x2(t[2 * i], t[2 * i + 1], 0x88),
                              _mm512_shuffle_i64x2(t[2 * i], t[2 * i + 1], 0xDD));
    _mm512_storeu_si512(y + o, _mm512_add_epi64(_mm512_shuffle_i64x2(u[0], u[1], 0x88), _mm512_shuffle_i64x2(u[0], u[1], 0xDD)));
  }
  combine_slices_portable(acc, o, n_out, 8, sign, offset, y);
}
#endif

// Eight bytes (byte i = row i) to eight bytes (byte b = bit b of every row, bit i = row i): the
// 8 x 8 bit transpose of Hacker's Delight (section 7-3), three exchange steps.
inline uint64_t transpose8(uint64_t x) {
  uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  return x ^ t ^ (t << 28);
}

// code_planes for rows r .. n_rows - 1 (r a multiple of 8), ORed into cb (zeroed by the caller).
void code_planes_portable(const int32_t* x, int r, int n_rows, int B, int nw, uint64_t* cb) {
  const uint32_t mask = low_mask(B);
  for (int r0 = r; r0 < n_rows; r0 += 8) {
    uint32_t code[8] = {};
    for (int i = 0; i < 8 && r0 + i < n_rows; ++i) code[i] = static_cast<uint32_t>(x[r0 + i]) & mask;
    for (int h = 0; 8 * h < B; ++h) {  // the codes' byte h
      uint64_t bytes = 0;
      for (int i = 0; i < 8; ++i) bytes |= uint64_t{(code[i] >> (8 * h)) & 0xFFu} << (8 * i);
      const uint64_t t = transpose8(bytes);
      for (int b = 8 * h; b < B && b < 8 * h + 8; ++b)
        cb[static_cast<size_t>(b) * nw + r0 / 64] |= ((t >> (8 * (b - 8 * h))) & 0xFFu) << (r0 % 64);
    }
  }
}
#ifdef KVCIM_MACRO_X86
// code_planes of 8-bit codes (B <= 8) for the whole 64-row words of the rows: a word's 64 codes
// truncated to bytes, bit b of each byte gathered into one 64-bit word per plane. Returns the rows
// done (a multiple of 64).
__attribute__((target("avx512f,avx512bw"))) int code_planes8_avx512(const int32_t* x, int n_rows, int B, int nw,
                                                                   uint64_t* cb) {
  int w = 0;
  for (; 64 * (w + 1) <= n_rows; ++w) {
    const int32_t* xw = x + 64 * w;
    const __m512i bytes = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm512_cvtepi32_epi8(_mm512_loadu_si512(xw))),
            _mm512_cvtepi32_epi8(_mm512_loadu_si512(xw + 16)), 1)),
        _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(_mm512_loadu_si512(xw + 32))),
                                _mm512_cvtepi32_epi8(_mm512_loadu_si512(xw + 48)), 1),
        1);
    for (int b = 0; b < B; ++b)
      cb[static_cast<size_t>(b) * nw + w] =
          _cvtmask64_u64(_mm512_test_epi8_mask(bytes, _mm512_set1_epi8(static_cast<char>(1 << b))));
  }
  return 64 * w;
}

// The same in 32-row halves: the codes' low bytes packed in row order, bit b moved to each
// byte's top bit and gathered by movemask.
__attribute__((target("avx2"))) int code_planes8_avx2(const int32_t* x, int n_rows, int B, int nw, uint64_t* cb) {
  const __m256i low = _mm256_set1_epi32(0xff);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);  // packs interleave 128-bit lanes
  int w = 0;
  for (; 64 * (w + 1) <= n_rows; ++w) {
    uint32_t half[2][8];
    for (int h = 0; h < 2; ++h) {
      const int32_t* xh = x + 64 * w + 32 * h;
      __m256i v[4];
      for (int i = 0; i < 4; ++i)
        v[i] = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xh + 8 * i)), low);
      const __m256i bytes = _mm256_permutevar8x32_epi32(
          _mm256_packus_epi16(_mm256_packus_epi32(v[0], v[1]), _mm256_packus_epi32(v[2], v[3])), order);
      for (int b = 0; b < B; ++b)
        half[h][b] = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_slli_epi16(bytes, 7 - b)));
    }
    for (int b = 0; b < B; ++b)
      cb[static_cast<size_t>(b) * nw + w] = uint64_t{half[0][b]} | (uint64_t{half[1][b]} << 32);
  }
  return 64 * w;
}
#endif

// The digital macro's exact products y[o] = sum_r x[r] w[r * wpr + o] for tiles of K outputs
// from o0 while a whole tile fits in n_out, in int32 (the caller checks that no sum leaves it),
// each tile's sums kept in registers over the rows. Returns the first output not computed.
template <int K>
int digital_tiles(const int32_t* x, int n_rows, const int8_t* w, int wpr, int o0, int n_out, int64_t* y) {
  for (; o0 + K <= n_out; o0 += K) {
    int32_t acc[K] = {};
    for (int r = 0; r < n_rows; ++r) {
      const int32_t xr = x[r];
      const int8_t* wr = w + static_cast<size_t>(r) * wpr + o0;
      for (int o = 0; o < K; ++o) acc[o] += xr * wr[o];
    }
    for (int o = 0; o < K; ++o) y[o0 + o] = acc[o];
  }
  return o0;
}

// digital_columns from output o0: tiles of 64, 32 and 16 outputs, the rest one by one.
void digital_columns_portable(const int32_t* x, int n_rows, const int8_t* w, int wpr, int o0, int n_out, int64_t* y) {
  o0 = digital_tiles<64>(x, n_rows, w, wpr, o0, n_out, y);
  o0 = digital_tiles<32>(x, n_rows, w, wpr, o0, n_out, y);
  o0 = digital_tiles<16>(x, n_rows, w, wpr, o0, n_out, y);
  for (int o = o0; o < n_out; ++o) {
    int32_t acc = 0;
    for (int r = 0; r < n_rows; ++r) acc += x[r] * w[static_cast<size_t>(r) * wpr + o];
    y[o] = acc;
  }
}

#ifdef KVCIM_MACRO_X86
// digital_columns in tiles of 4 vectors of int32 sums (64 outputs on AVX-512, 32 on AVX2), then
// of 2 and of one vector, each row's weights widened from int8 and multiplied by its input; the
// outputs left over by the portable code.
#define KVCIM_MACRO_DIGITAL_TILES(SUFFIX, VEC, L, P, WIDEN8, TILE)                                     \
  for (; o0 + (TILE) * (L) <= n_out; o0 += (TILE) * (L)) {                                               \
    VEC acc[TILE];                                                                                       \
    for (auto& a : acc) a = P##_setzero_si##SUFFIX();                                                    \
    for (int r = 0; r < n_rows; ++r) {                                                                   \
      const VEC xr = P##_set1_epi32(x[r]);                                                               \
      const int8_t* wr = w + static_cast<size_t>(r) * wpr + o0;                                          \
      for (int j = 0; j < (TILE); ++j) acc[j] = P##_add_epi32(acc[j], P##_mullo_epi32(WIDEN8(wr + j * (L)), xr)); \
    }                                                                                                    \
    for (int j = 0; j < (TILE); ++j) P##_storeu_si##SUFFIX(reinterpret_cast<VEC*>(out + j * (L)), acc[j]); \
    for (int o = 0; o < (TILE) * (L); ++o) y[o0 + o] = out[o];                                           \
  }
#define KVCIM_MACRO_DIGITAL_KERNEL(SUFFIX, TARGET, VEC, L, P, WIDEN8)                                    \
  __attribute__((target(TARGET))) void digital_columns_##SUFFIX(const int32_t* x, int n_rows, const int8_t* w, \
                                                                int wpr, int n_out, int64_t* y) {           \
    int o0 = 0;                                                                                          \
    alignas(64) int32_t out[4 * (L)];                                                                    \
    KVCIM_MACRO_DIGITAL_TILES(SUFFIX, VEC, L, P, WIDEN8, 4)                                              \
    KVCIM_MACRO_DIGITAL_TILES(SUFFIX, VEC, L, P, WIDEN8, 2)                                              \
    KVCIM_MACRO_DIGITAL_TILES(SUFFIX, VEC, L, P, WIDEN8, 1)                                              \
    digital_columns_portable(x, n_rows, w, wpr, o0, n_out, y);                                           \
  }
__attribute__((target("avx2"))) inline __m256i widen8_256(const int8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
__attribute__((target("avx512f,avx512bw"))) inline __m512i widen8_512(const int8_t* p) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
KVCIM_MACRO_DIGITAL_KERNEL(256, "avx2", __m256i, 8, _mm256, widen8_256)
KVCIM_MACRO_DIGITAL_KERNEL(512, "avx512f,avx512bw", __m512i, 16, _mm512, widen8_512)
#undef KVCIM_MACRO_DIGITAL_KERNEL
#undef KVCIM_MACRO_DIGITAL_TILES
#endif

// The dispatch level: the CPU's, capped by cap_kernel_level() (tests).
std::atomic<int> g_cap{static_cast<int>(KernelLevel::avx512_vpopcntdq)};

KernelLevel detect_level() {
#ifdef KVCIM_MACRO_X86
  if (!__builtin_cpu_supports("avx2")) return KernelLevel::portable;
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw")) return KernelLevel::avx2;
  if (!__builtin_cpu_supports("avx512vpopcntdq")) return KernelLevel::avx512;
  return KernelLevel::avx512_vpopcntdq;
#else
  return KernelLevel::portable;
#endif
}

int level() {
  static const int cpu = static_cast<int>(detect_level());
  return std::min(cpu, g_cap.load(std::memory_order_relaxed));
}

constexpr int kAvx2 = static_cast<int>(KernelLevel::avx2);
constexpr int kAvx512 = static_cast<int>(KernelLevel::avx512);
constexpr int kAvx512Vp = static_cast<int>(KernelLevel::avx512_vpopcntdq);

bool have_avx2_fma() {
#ifdef KVCIM_MACRO_X86
  static const bool yes = __builtin_cpu_supports("fma");
  return yes && level() >= kAvx2;
#else
  return false;
#endif
}

}  // namespace

KernelLevel cpu_kernel_level() {
  static const KernelLevel cpu = detect_level();
  return cpu;
}

KernelLevel kernel_level() { return static_cast<KernelLevel>(level()); }

void cap_kernel_level(KernelLevel cap) { g_cap.store(static_cast<int>(cap), std::memory_order_relaxed); }

void force_portable_kernels(bool on) {
  cap_kernel_level(on ? KernelLevel::portable : KernelLevel::avx512_vpopcntdq);
}

void analog_columns(const InputTerm* terms, const uint64_t* planes, const int* step_begin, int T, int G, const int* sign,
                    const int* offset, AdcRule adc, int n, int64_t* acc, const RoundedDraws* noise,
                    bool descending) {
#ifdef KVCIM_MACRO_X86
  const int l = level();
  const bool noisy = noise != nullptr;
  // sram_analog's read noise of 0.15 levels has k_max 1: its two thresholds unrolled
  const bool two = noisy && noise->law.k_max == 1;
  if (l >= kAvx512Vp) {
    // steps whose shifts descend (compute_analog_fast lists them so) summed Horner-wise
    if (!descending) {  // not vouched for: looked at
      descending = true;
      for (int s = 0; s < T * G && descending; ++s)
        for (int t = step_begin[s] + 1; t < step_begin[s + 1]; ++t)
          descending = descending && terms[t].shift <= terms[t - 1].shift;
    }
    if (descending)
      return (two     ? analog_columns_avx512vp<true, 2, true>
              : noisy ? analog_columns_avx512vp<true, 0, true>
                      : analog_columns_avx512vp<false, 0, true>)(terms, planes, step_begin, T, G, sign, offset, adc, n, acc, noise);
    return (two     ? analog_columns_avx512vp<true, 2, false>
            : noisy ? analog_columns_avx512vp<true, 0, false>
                    : analog_columns_avx512vp<false, 0, false>)(terms, planes, step_begin, T, G, sign, offset, adc, n, acc, noise);
  }
  if (l >= kAvx512)
    return (two     ? analog_columns_avx512bw<true, 2, false>
            : noisy ? analog_columns_avx512bw<true, 0, false>
                    : analog_columns_avx512bw<false, 0, false>)(terms, planes, step_begin, T, G, sign, offset, adc, n, acc, noise);
  if (l >= kAvx2)
    return (noisy ? analog_columns_avx2<true> : analog_columns_avx2<false>)(terms, planes, step_begin, T, G, sign, offset,
                                                                            adc, n, acc, noise);
#endif
  analog_columns_portable(terms, planes, step_begin, T, G, sign, offset, adc, 0, n, acc, noise);
}

void combine_slices(const int64_t* acc, int n_out, int S, const int* sign, const int* offset, int64_t* y) {
#ifdef KVCIM_MACRO_X86
  if (S == 8 && level() >= kAvx512) return combine_slices8_avx512(acc, n_out, sign, offset, y);
#endif
  combine_slices_portable(acc, 0, n_out, S, sign, offset, y);
}

NoiseKey noise_key(uint64_t seed) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull;  // splitmix64 of the seed: keys far apart for nearby seeds
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return {static_cast<uint32_t>(z), static_cast<uint32_t>(z >> 32),
          mix32(static_cast<uint32_t>(z >> 32) ^ 0x68E31DA4u)};
}

float normal_draw(const NoiseKey& key, uint64_t i) {
  float c, s;
  normal_pair(key, ((i >> 4) << 3) | (i & 7), c, s);
  return (i & 8) ? s : c;
}

void normal_draws(const NoiseKey& key, uint64_t first, int n, float* out) {
#ifdef KVCIM_MACRO_X86
  if (have_avx2_fma()) {
    int i = 0;
    for (; i < n && ((first + static_cast<uint64_t>(i)) & 15) != 0; ++i) out[i] = normal_draw(key, first + i);
    if (level() >= kAvx512)
      for (; i + 32 <= n; i += 32) normal_blocks_avx512(key, (first + static_cast<uint64_t>(i)) >> 4, out + i);
    for (; i + 16 <= n; i += 16) normal_block_avx2(key, (first + static_cast<uint64_t>(i)) >> 4, out + i);
    for (; i < n; ++i) out[i] = normal_draw(key, first + static_cast<uint64_t>(i));
    return;
  }
#endif
  normal_draws_portable(key, first, n, out);
}

RoundedNoise rounded_noise_law(double sigma) {
  RoundedNoise law;
  if (!(sigma > 0.0)) return law;
  const auto cdf = [sigma](double x) { return 0.5 * std::erfc(-x / (sigma * std::numbers::sqrt2)); };
  // The smallest k_max whose tail P(k < -k_max) = Phi((-k_max - 1/2) / sigma) is below 2^-33:
  // 2^32 times it rounds to 0, so leaving it out changes no threshold.
  int k = 1;
  while (k <= kRoundedNoiseMaxK && cdf(-k - 0.5) >= 0x1p-33) ++k;
  if (k > kRoundedNoiseMaxK) return law;
  law.k_max = k;
  for (int j = 0; j < 2 * k; ++j) {
    const double t = std::nearbyint(std::ldexp(cdf(j - k + 0.5), 32));
    law.thr[j] = static_cast<uint32_t>(std::clamp(t, 0.0, 4294967295.0));
  }
  return law;
}

uint32_t noise_uniform(const NoiseKey& key, uint64_t i) {
  return mix32(mix32(static_cast<uint32_t>(i) ^ key.k2) ^ (static_cast<uint32_t>(i >> 32) + key.k0));
}

namespace {
// A fixed number of thresholds, so that the compiler unrolls them and vectorises over i.
// The counter's high word changes once in 2^32 draws: within a run of one high word the loop is
// over 32-bit lanes only (noise_uniform written out), which the compiler vectorises.
template <int K2, class Emit>
void rounded_noise_k(const NoiseKey& key, uint64_t first, int n, const uint32_t* thr_in, Emit emit) {
  uint32_t thr[K2];
  for (int j = 0; j < K2; ++j) thr[j] = thr_in[j];
  int i = 0;
  while (i < n) {
    const uint64_t at = first + static_cast<uint64_t>(i);
    const uint32_t lo0 = static_cast<uint32_t>(at);
    const uint32_t hi = static_cast<uint32_t>(at >> 32) + key.k0;
    // draws until the low word wraps (at most n - i)
    const uint64_t room = (uint64_t{1} << 32) - lo0;
    const int m = static_cast<int>(std::min<uint64_t>(room, static_cast<uint64_t>(n - i)));
    for (int t = 0; t < m; ++t) {
      const uint32_t u = mix32(mix32((lo0 + static_cast<uint32_t>(t)) ^ key.k2) ^ hi);
      int32_t c = -(K2 / 2);
      for (int j = 0; j < K2; ++j) c += u >= thr[j] ? 1 : 0;
      emit(i + t, c);
    }
    i += m;
  }
}

template <class Emit>
void rounded_noise_each(const NoiseKey& key, uint64_t first, int n, const RoundedNoise& law, Emit emit) {
  static_assert(kRoundedNoiseMaxK == 8, "one case per k_max below");
  switch (law.k_max) {
    case 1: return rounded_noise_k<2>(key, first, n, law.thr, emit);
    case 2: return rounded_noise_k<4>(key, first, n, law.thr, emit);
    case 3: return rounded_noise_k<6>(key, first, n, law.thr, emit);
    case 4: return rounded_noise_k<8>(key, first, n, law.thr, emit);
    case 5: return rounded_noise_k<10>(key, first, n, law.thr, emit);
    case 6: return rounded_noise_k<12>(key, first, n, law.thr, emit);
    case 7: return rounded_noise_k<14>(key, first, n, law.thr, emit);
    case 8: return rounded_noise_k<16>(key, first, n, law.thr, emit);
    default: throw std::logic_error("detail::rounded_noise: k_max " + std::to_string(law.k_max));
  }
}
}  // namespace

void rounded_noise(const NoiseKey& key, uint64_t first, int n, const RoundedNoise& law, int32_t* out) {
  rounded_noise_each(key, first, n, law, [out](int i, int32_t k) { out[i] = k; });
}

void rounded_noise_codes(const NoiseKey& key, uint64_t first, int n, const RoundedNoise& law,
                         const uint32_t* p, int32_t top, uint32_t* pk) {
  rounded_noise_each(key, first, n, law, [p, top, pk](int i, int32_t k) {
    pk[i] += static_cast<uint32_t>(std::clamp(static_cast<int32_t>(p[i]) + k, 0, top));
  });
}

void adc_noisy(const uint32_t* p, const double* pn, const double* rn, int n, double scale,
               double top, int shift, uint32_t* pk) {
#ifdef KVCIM_MACRO_X86
  const int l = level();
  if (l >= kAvx512) return adc_noisy_avx512(p, pn, rn, n, scale, top, shift, pk);
  if (l >= kAvx2) return adc_noisy_avx2(p, pn, rn, n, scale, top, shift, pk);
#endif
  adc_noisy_portable(p, pn, rn, 0, n, scale, top, shift, pk);
}

void cell_noise_sums(const float* dev, size_t stride, int n_rows, const uint32_t* u, int T, int n,
                     double* pn) {
#ifdef KVCIM_MACRO_X86
  if (level() >= kAvx512) return cell_noise_sums_avx512(dev, stride, n_rows, u, T, n, pn);
#endif
  cell_noise_sums_portable(dev, stride, n_rows, u, T, 0, n, pn);
}

void cell_noise_isums(const int16_t* qdev, size_t stride, int n_rows, const uint32_t* u, int T,
                      int n, int32_t qmax, int32_t* S) {
#ifdef KVCIM_MACRO_X86
  const int l = level();
  if (l >= kAvx512) return cell_noise_isums_avx512(qdev, stride, n_rows, u, T, n, qmax, S);
  if (l >= kAvx2) return cell_noise_isums_avx2(qdev, stride, n_rows, u, T, n, qmax, S);
#endif
  cell_noise_isums_portable(qdev, stride, n_rows, u, T, 0, n, S);
}

void fixed_columns(const FixedSteps& f, int n, int64_t* acc) {
#ifdef KVCIM_MACRO_X86
  const int l = level();
  if (l >= kAvx512Vp) return fixed_columns_avx512vp(f, n, acc);
  if (l >= kAvx512) return fixed_columns_avx512(f, n, acc);
  if (l >= kAvx2) return fixed_columns_avx2(f, n, acc);
#endif
  fixed_columns_portable(f, 0, n, acc);
}

namespace {
std::atomic<uint64_t> g_doubts{0};
}

int adc_noisy_bounded(const uint32_t* p, const int32_t* S, double qscale, const double* rn,
                      double margin, int n, double scale, double top, int shift, uint32_t* pk,
                      int* uncertain) {
  int m = 0;
#ifdef KVCIM_MACRO_X86
  if (level() >= kAvx512)
    m = adc_noisy_bounded_avx512(p, S, qscale, rn, margin, n, scale, top, shift, pk, uncertain);
  else
#endif
    m = adc_noisy_bounded_portable(p, S, qscale, rn, margin, 0, n, scale, top, shift, pk, uncertain);
  if (m > 0) g_doubts.fetch_add(static_cast<uint64_t>(m), std::memory_order_relaxed);
  return m;
}

uint64_t bounded_adc_doubts() { return g_doubts.load(std::memory_order_relaxed); }

void digital_columns(const int32_t* x, int n_rows, const int8_t* w, int wpr, int n_out, int64_t* y) {
#ifdef KVCIM_MACRO_X86
  if (level() >= kAvx512) return digital_columns_512(x, n_rows, w, wpr, n_out, y);
  if (level() >= kAvx2) return digital_columns_256(x, n_rows, w, wpr, n_out, y);
#endif
  digital_columns_portable(x, n_rows, w, wpr, 0, n_out, y);
}

void code_planes(const int32_t* x, int n_rows, int B, int nw, uint64_t* cb) {
  std::fill(cb, cb + static_cast<size_t>(B) * nw, uint64_t{0});
  int r = 0;
#ifdef KVCIM_MACRO_X86
  if (B <= 8 && level() >= kAvx512)
    r = code_planes8_avx512(x, n_rows, B, nw, cb);
  else if (B <= 8 && level() >= kAvx2)
    r = code_planes8_avx2(x, n_rows, B, nw, cb);
#endif
  code_planes_portable(x, r, n_rows, B, nw, cb);
}

void popcount_columns(const PopTerm* terms, int n_terms, int n, uint32_t* p) {
#ifdef KVCIM_MACRO_X86
  const int l = level();
  if (l >= kAvx512Vp) return popcount_columns_avx512vp(terms, n_terms, n, p);
  if (l >= kAvx512) return popcount_columns_avx512bw(terms, n_terms, n, p);
  if (l >= kAvx2) return popcount_columns_avx2(terms, n_terms, n, p);
#endif
  popcount_columns_portable(terms, n_terms, n, p);
}

}  // namespace kvcim::cmodel::cim::detail
