// The vector kernels of the analog macro's fast path (macro_kernels.hpp). Each has a portable
// version and an AVX2 version selected once at run time; tests hold them equal.
#include "macro_kernels.hpp"

#include <atomic>
#include <bit>

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

#ifdef KVCIM_MACRO_X86
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

}  // namespace

void analog_columns(const PopTerm* terms, const int* step_begin, int T, int G, const int* sign,
                    const int* offset, AdcRule adc, int n, int64_t* acc) {
#ifdef KVCIM_MACRO_X86
  if (have_avx2()) return analog_columns_avx2(terms, step_begin, T, G, sign, offset, adc, n, acc);
#endif
  analog_columns_portable(terms, step_begin, T, G, sign, offset, adc, 0, n, acc);
}

void force_portable_kernels(bool on) { g_portable.store(on, std::memory_order_relaxed); }

void popcount_columns(const PopTerm* terms, int n_terms, int n, uint32_t* p) {
#ifdef KVCIM_MACRO_X86
  if (have_avx2()) return popcount_columns_avx2(terms, n_terms, n, p);
#endif
  popcount_columns_portable(terms, n_terms, n, p);
}

}  // namespace kvcim::cmodel::cim::detail
