// The int8 GEMV kernels and the quantised linear layer (see int8_gemv.hpp for the contract).
#include "kvcim/cmodel/quant/int8_gemv.hpp"

#include <algorithm>
#include <string>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/error.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define KVCIM_GEMV_X86 1
#endif

namespace kvcim::cmodel::quant {
namespace {

constexpr int kVector = 64;  // stored rows are padded to this many codes
// Software prefetch distance (bytes ahead of each row's current position). A single core's
// hardware prefetchers keep too few lines in flight for a matrix streamed from DRAM; asking for
// the line 4 KiB ahead raised the int8 GEMV from ~8 to ~10-11 GB/s on the reference machine
// (docs/performance.md). Prefetches never fault, so running past the matrix's end is harmless.
constexpr int kPrefetchAhead = 4096;

// Scratch copies of x in a kernel's operand format, per thread (gemv is const on the matrix).
std::vector<uint8_t>& x_unsigned_scratch() {
  thread_local std::vector<uint8_t> v;
  return v;
}
std::vector<int16_t>& x_int16_scratch() {
  thread_local std::vector<int16_t> v;
  return v;
}

void gemv_portable(const Int8Matrix& w, const int8_t* x, int32_t* acc, int r0, int r1) {
  const int cols = w.cols();
  for (int o = r0; o < r1; ++o) {
    const int8_t* row = w.row(o);
    int32_t s = 0;
    for (int c = 0; c < cols; ++c) s += int32_t{row[c]} * int32_t{x[c]};
    acc[o] = s;
  }
}

#ifdef KVCIM_GEMV_X86

__attribute__((target("avx2"))) inline int32_t hsum256(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// 16 weight codes sign-extended to int16.
__attribute__((target("avx2"))) inline __m256i load_w(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// a + the pair sums of 16 weight codes times 16 int16 inputs.
__attribute__((target("avx2"))) inline __m256i madd(__m256i a, const int8_t* p, __m256i xv) {
  return _mm256_add_epi32(a, _mm256_madd_epi16(load_w(p), xv));
}

// x16: stride int16 values (zero beyond cols). Every vpmaddwd pair sum is at most 2 * 128 * 128.
// Rows one after the other: measured faster than four interleaved rows sharing each load of x on
// AMD EPYC (AVX2, 110M shape: 1.25x less CPU per decode).
__attribute__((target("avx2"))) void gemv_avx2(const Int8Matrix& w, const int16_t* x16,
                                                int32_t* acc, int r0, int r1) {
  for (int o = r0; o < r1; ++o) {
    const int8_t* w0 = w.row(o);
    __m256i a0 = _mm256_setzero_si256();
    for (int s = 0; s < w.stride(); s += 16) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x16 + s));
      a0 = madd(a0, w0 + s, xv);
    }
    acc[o] = hsum256(a0);
  }
}

// Sum of the 16 int32 lanes. The zero-masked forms are used because GCC 12's unmasked ones
// (and _mm512_reduce_add_epi32) start from an "undefined" vector and trip -Wmaybe-uninitialized.
__attribute__((target("avx512f"))) inline int32_t hsum512(__m512i v) {
  v = _mm512_add_epi32(v, _mm512_maskz_shuffle_i64x2(0xFF, v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_epi32(v, _mm512_maskz_shuffle_i64x2(0xFF, v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  __m128i s = _mm512_maskz_extracti32x4_epi32(0xF, v, 0);
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

__attribute__((target("avx512f"))) inline __m512i load(const void* p) {
  return _mm512_loadu_si512(p);
}

// The AVX2 kernel's arithmetic on 512-bit registers, for AVX-512 CPUs without VNNI: 32 weight
// codes sign-extended to int16, vpmaddwd against x16 (pair sums at most 2 * 128 * 128), int32
// sums. Rows one after the other, as the AVX2 kernel; two accumulators per row so that the adds of
// consecutive steps do not wait on each other.
__attribute__((target("avx512f,avx512bw"))) void gemv_avx512bw(const Int8Matrix& w, const int16_t* x16,
                                                              int32_t* acc, int r0, int r1) {
  const int steps = w.stride() / kVector;
  for (int o = r0; o < r1; ++o) {
    const int8_t* w0 = w.row(o);
    __m512i a0 = _mm512_setzero_si512(), a1 = a0;
    for (int s = 0; s < steps; ++s) {
      const int off = s * kVector;
      _mm_prefetch(reinterpret_cast<const char*>(w0 + off + kPrefetchAhead), _MM_HINT_T0);
      const __m512i lo = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w0 + off)));
      const __m512i hi = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w0 + off + 32)));
      a0 = _mm512_add_epi32(a0, _mm512_madd_epi16(lo, load(x16 + off)));
      a1 = _mm512_add_epi32(a1, _mm512_madd_epi16(hi, load(x16 + off + 32)));
    }
    acc[o] = hsum512(_mm512_add_epi32(a0, a1));
  }
}

// xu: stride bytes x + 128 (128, i.e. x = 0, beyond cols; the padded codes are 0 anyway).
// vpdpbusd multiplies unsigned by signed bytes, four products per int32 lane; the offset is
// removed with the row's code sum: sum (x+128) w - 128 sum w = sum x w, all within int32.
// Rows one after the other with two accumulators, as gemv_avx512bw: decoding the 110M shape
// then takes 0.93 - 1.10x gemv_avx512bw's time, against 1.14x with four interleaved rows
// (docs/performance.md section 2).
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void gemv_avx512_vnni(
    const Int8Matrix& w, const uint8_t* xu, int32_t* acc, int r0, int r1) {
  const int steps = w.stride() / kVector;
  const int32_t* sums = w.row_sums().data();
  for (int o = r0; o < r1; ++o) {
    const int8_t* w0 = w.row(o);
    __m512i a0 = _mm512_setzero_si512(), a1 = a0;
    int s = 0;
    for (; s + 2 <= steps; s += 2) {
      _mm_prefetch(reinterpret_cast<const char*>(w0 + s * kVector + kPrefetchAhead), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(w0 + s * kVector + kVector + kPrefetchAhead), _MM_HINT_T0);
      a0 = _mm512_dpbusd_epi32(a0, load(xu + s * kVector), load(w0 + s * kVector));
      a1 = _mm512_dpbusd_epi32(a1, load(xu + s * kVector + kVector), load(w0 + s * kVector + kVector));
    }
    if (s < steps) a0 = _mm512_dpbusd_epi32(a0, load(xu + s * kVector), load(w0 + s * kVector));
    acc[o] = hsum512(_mm512_add_epi32(a0, a1)) - 128 * sums[o];
  }
}

#endif  // KVCIM_GEMV_X86

}  // namespace

const char* name(GemvKernel kernel) {
  switch (kernel) {
    case GemvKernel::portable: return "portable";
    case GemvKernel::avx2: return "avx2";
    case GemvKernel::avx512bw: return "avx512bw";
    case GemvKernel::avx512_vnni: return "avx512_vnni";
  }
  return "?";
}

bool kernel_available(GemvKernel kernel) {
  switch (kernel) {
    case GemvKernel::portable: return true;
#ifdef KVCIM_GEMV_X86
    case GemvKernel::avx2: return __builtin_cpu_supports("avx2");
    case GemvKernel::avx512bw: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    case GemvKernel::avx512_vnni:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vnni");
#endif
    default: return false;
  }
}

std::vector<GemvKernel> available_kernels() {
  std::vector<GemvKernel> out;
  for (GemvKernel k : {GemvKernel::portable, GemvKernel::avx2, GemvKernel::avx512bw, GemvKernel::avx512_vnni})
    if (kernel_available(k)) out.push_back(k);
  return out;
}

GemvKernel best_kernel() {
  static const GemvKernel best = available_kernels().back();
  return best;
}

int Int8Matrix::padded_stride(int cols) { return (cols + kVector - 1) / kVector * kVector; }

void Int8Matrix::set_row_sums() {
  row_sums_.assign(rows_, 0);
  for (int r = 0; r < rows_; ++r) {
    const int8_t* src = row(r);
    int32_t s = 0;
    for (int c = 0; c < cols_; ++c) s += src[c];
    row_sums_[r] = s;
  }
}

namespace {
void check_sizes(const QuantizedMatrix& q) {
  if (q.rows < 0 || q.cols < 0 || q.q.size() != static_cast<size_t>(q.rows) * q.cols ||
      q.scale.size() != static_cast<size_t>(q.rows))
    fail("Int8Matrix", "sizes",
         std::to_string(q.q.size()) + " codes, " + std::to_string(q.scale.size()) + " scales",
         std::to_string(q.rows) + " x " + std::to_string(q.cols) + " codes and one scale per row");
}
void check_cols(int64_t cols) {
  if (cols > kMaxGemvCols)
    fail("Int8Matrix", "cols", std::to_string(cols),
         "at most " + std::to_string(kMaxGemvCols) + " (int32 accumulation must not overflow)");
}
}  // namespace

Int8Matrix::Int8Matrix(QuantizedMatrix&& q) : rows_(q.rows), cols_(q.cols), bits_(q.bits) {
  if (q.cols % kVector != 0) {
    *this = Int8Matrix(static_cast<const QuantizedMatrix&>(q));  // rows need padding: copied
    return;
  }
  check_sizes(q);
  check_cols(q.cols);
  stride_ = cols_;
  auto codes = std::make_shared<std::vector<int8_t>>(std::move(q.q));
  codes_ = std::shared_ptr<const int8_t>(codes, codes->data());
  scale_ = std::move(q.scale);
  set_row_sums();
}

Int8Matrix::Int8Matrix(const QuantizedMatrix& q) : rows_(q.rows), cols_(q.cols), bits_(q.bits) {
  check_sizes(q);
  check_cols(q.cols);
  stride_ = padded_stride(cols_);
  std::shared_ptr<int8_t[]> codes(new int8_t[static_cast<size_t>(rows_) * stride_]());
  for (int r = 0; r < rows_; ++r)
    std::copy(q.q.data() + static_cast<size_t>(r) * cols_, q.q.data() + static_cast<size_t>(r + 1) * cols_,
              codes.get() + static_cast<size_t>(r) * stride_);
  codes_ = std::shared_ptr<const int8_t>(codes, codes.get());
  scale_ = q.scale;
  set_row_sums();
}

Int8Matrix::Int8Matrix(MatrixRef w, int bits, std::shared_ptr<int8_t> storage)
    : rows_(static_cast<int>(w.rows())), cols_(static_cast<int>(w.cols())), bits_(bits) {
  check_cols(w.cols());
  stride_ = padded_stride(cols_);
  scale_.resize(rows_);
  int8_t* codes = storage.get();
  quantize_weights_into(w, bits, codes, static_cast<size_t>(stride_), scale_.data());
  for (int r = 0; r < rows_; ++r)
    std::fill(codes + static_cast<size_t>(r) * stride_ + cols_, codes + static_cast<size_t>(r + 1) * stride_, int8_t{0});
  codes_ = std::move(storage);
  set_row_sums();
}

int64_t Int8Matrix::bytes() const {
  return static_cast<int64_t>(rows_) * stride_ + static_cast<int64_t>(scale_.size()) * 4;
}

void gemv(const Int8Matrix& w, const int8_t* x, int32_t* acc, GemvKernel kernel) {
  if (!kernel_available(kernel))
    fail("quant::gemv", "kernel", name(kernel), "a kernel this CPU runs (see available_kernels())");
  if (w.rows() == 0) return;
  // The rows are shared with the float GEMV's helper thread when the matrix is large
  // (parallel_rows): every row's sum is an exact integer, so the split cannot change a bit.
  struct Job {
    const Int8Matrix& w;
    const void* x;  // the kernel's form of the input: int8, int16 or offset uint8 codes
    int32_t* acc;
  };
  const int64_t elements = static_cast<int64_t>(w.rows()) * w.stride();
  switch (kernel) {
#ifdef KVCIM_GEMV_X86
    case GemvKernel::avx2:
    case GemvKernel::avx512bw: {
      std::vector<int16_t>& x16 = x_int16_scratch();
      x16.assign(w.stride(), 0);
      std::copy(x, x + w.cols(), x16.begin());
      // the same int16 operands for both kernels, which differ in register width only
      struct Job16 {
        const Int8Matrix& w;
        const int16_t* x;
        int32_t* acc;
        void (*rows)(const Int8Matrix&, const int16_t*, int32_t*, int, int);
      } job{w, x16.data(), acc, kernel == GemvKernel::avx2 ? gemv_avx2 : gemv_avx512bw};
      parallel_rows(w.rows(), elements, [](void* c, int r0, int r1) {
        const Job16& j = *static_cast<const Job16*>(c);
        j.rows(j.w, j.x, j.acc, r0, r1);
      }, &job);
      return;
    }
    case GemvKernel::avx512_vnni: {
      std::vector<uint8_t>& xu = x_unsigned_scratch();
      xu.assign(w.stride(), 128);
      for (int c = 0; c < w.cols(); ++c) xu[c] = static_cast<uint8_t>(x[c] + 128);
      Job job{w, xu.data(), acc};
      parallel_rows(w.rows(), elements, [](void* c, int r0, int r1) {
        const Job& j = *static_cast<const Job*>(c);
        gemv_avx512_vnni(j.w, static_cast<const uint8_t*>(j.x), j.acc, r0, r1);
      }, &job);
      return;
    }
#endif
    default: {
      Job job{w, x, acc};
      parallel_rows(w.rows(), elements, [](void* c, int r0, int r1) {
        const Job& j = *static_cast<const Job*>(c);
        gemv_portable(j.w, static_cast<const int8_t*>(j.x), j.acc, r0, r1);
      }, &job);
    }
  }
}

Int8Linear::Int8Linear(MatrixRef w, int weight_bits, int input_bits, GemvKernel kernel)
    : matrix_(quantize_weights(w, weight_bits)), input_bits_(input_bits), kernel_(kernel) {
  check_and_size();
}

Int8Linear::Int8Linear(MatrixRef w, int weight_bits, int input_bits, GemvKernel kernel,
                       std::shared_ptr<int8_t> storage)
    : matrix_(w, weight_bits, std::move(storage)), input_bits_(input_bits), kernel_(kernel) {
  check_and_size();
}

void Int8Linear::check_and_size() {
  qmax(input_bits_);  // validates the width now rather than at the first apply()
  if (!kernel_available(kernel_))
    fail("Int8Linear", "kernel", name(kernel_), "a kernel this CPU runs (see available_kernels())");
  acc_.resize(matrix_.rows());
}

void Int8Linear::apply(const float* x, float* y) {
  apply(quantize_activation(x, matrix_.cols(), input_bits_), y);
}

void Int8Linear::apply(const QuantizedVector& x, float* y) {
  if (static_cast<int>(x.q.size()) != matrix_.cols())
    fail("Int8Linear::apply", "x size", std::to_string(x.q.size()),
         std::to_string(matrix_.cols()) + " codes (the matrix's columns)");
  gemv(matrix_, x.q.data(), acc_.data(), kernel_);
  const float* ws = matrix_.scale().data();
  // CimLinear's order: (acc * x_scale) * w_scale, rounded after each multiply
  for (int o = 0; o < matrix_.rows(); ++o) y[o] = static_cast<float>(acc_[o]) * x.scale * ws[o];
}

}  // namespace kvcim::cmodel::quant
