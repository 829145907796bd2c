// The vector kernels of the analog macro's fast path (macro_kernels.hpp). Each has a portable
// version and an AVX2 version selected once at run time; tests hold them equal.
#include "macro_kernels.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>

#include "kvcim/cmodel/cim/macro.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
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

void analog_columns_portable(const PopTerm* terms, const int* step_begin, int T, int G,
                             const int* sign, const int* offset, AdcRule adc, int col0, int n,
                             int64_t* acc) {
  for (int col = col0; col < n; ++col) {
    int64_t a = 0;
    for (int k = 0; k < T; ++k) {
      uint32_t pk = 0;
      for (int g = 0; g < G; ++g) {
        uint32_t p = 0;
        for (int t = step_begin[k * G + g]; t < step_begin[k * G + g + 1]; ++t)
          p += static_cast<uint32_t>(std::popcount(terms[t].xm & terms[t].plane[col])) << terms[t].shift;
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

__attribute__((target("avx2"))) inline __m256i mix32_avx2(__m256i x) {
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb352d));
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(static_cast<int>(0x846ca68bu)));
  return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

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
__attribute__((target("avx2"))) inline __m256i popcnt64(__m256i v) {
  const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                       0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_and_si256(v, low);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
  const __m256i bytes = _mm256_add_epi8(_mm256_shuffle_epi8(lut, lo), _mm256_shuffle_epi8(lut, hi));
  return _mm256_sad_epu8(bytes, _mm256_setzero_si256());
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


__attribute__((target("avx2"))) void analog_columns_avx2(const PopTerm* terms, const int* step_begin,
                                                         int T, int G, const int* sign,
                                                         const int* offset, AdcRule adc, int n,
                                                         int64_t* acc) {
  // 16 columns per block in two halves h of 8. Within a half, 32-bit lane 2i holds column i and
  // lane 2i+1 column 4+i (the low halves of two popcount vectors, interleaved): the ADC works
  // lane by lane, and the 64-bit view splits the lanes back into columns 0-3 and 4-7.
  const __m256i half = _mm256_set1_epi32(static_cast<int>(adc.half));
  const __m256i top = _mm256_set1_epi32(static_cast<int>(adc.top));
  const __m256i low32 = _mm256_set1_epi64x(0xffffffffll);
  const __m128i adc_shift = _mm_cvtsi32_si128(adc.shift);
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
          const __m256i* pl = reinterpret_cast<const __m256i*>(terms[t].plane + col);
          for (int i = 0; i < 4; ++i)
            c[i] = _mm256_add_epi64(c[i], _mm256_sll_epi64(popcnt64(_mm256_and_si256(xm, _mm256_loadu_si256(pl + i))), sh));
        }
        const __m256i p0 = _mm256_or_si256(c[0], _mm256_slli_epi64(c[1], 32));
        const __m256i p1 = _mm256_or_si256(c[2], _mm256_slli_epi64(c[3], 32));
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
  analog_columns_portable(terms, step_begin, T, G, sign, offset, adc, col, n, acc);
}
#endif

std::atomic<bool> g_portable{false};

bool have_avx2() {
#ifdef KVCIM_MACRO_X86
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes && !g_portable.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

bool have_avx2_fma() {
#ifdef KVCIM_MACRO_X86
  static const bool yes = __builtin_cpu_supports("fma");
  return yes && have_avx2();
#else
  return false;
#endif
}

}  // namespace

void analog_columns(const PopTerm* terms, const int* step_begin, int T, int G, const int* sign,
                    const int* offset, AdcRule adc, int n, int64_t* acc) {
#ifdef KVCIM_MACRO_X86
  if (have_avx2()) return analog_columns_avx2(terms, step_begin, T, G, sign, offset, adc, n, acc);
#endif
  analog_columns_portable(terms, step_begin, T, G, sign, offset, adc, 0, n, acc);
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
    for (; i + 16 <= n; i += 16) normal_block_avx2(key, (first + static_cast<uint64_t>(i)) >> 4, out + i);
    for (; i < n; ++i) out[i] = normal_draw(key, first + static_cast<uint64_t>(i));
    return;
  }
#endif
  normal_draws_portable(key, first, n, out);
}

void adc_noisy(const uint32_t* p, const double* pn, const double* rn, int n, double scale,
               double top, int shift, uint32_t* pk) {
#ifdef KVCIM_MACRO_X86
  if (have_avx2()) return adc_noisy_avx2(p, pn, rn, n, scale, top, shift, pk);
#endif
  adc_noisy_portable(p, pn, rn, 0, n, scale, top, shift, pk);
}

void force_portable_kernels(bool on) { g_portable.store(on, std::memory_order_relaxed); }

void popcount_columns(const PopTerm* terms, int n_terms, int n, uint32_t* p) {
#ifdef KVCIM_MACRO_X86
  if (have_avx2()) return popcount_columns_avx2(terms, n_terms, n, p);
#endif
  popcount_columns_portable(terms, n_terms, n, p);
}

}  // namespace kvcim::cmodel::cim::detail
