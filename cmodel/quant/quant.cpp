// The one place where kvcim's integer formats round and saturate (see quant.hpp for the rules).
#include "kvcim/cmodel/quant/quant.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "kvcim/error.hpp"

namespace kvcim::cmodel::quant {
namespace {

// The single rounding rule: saturate to [-qm, qm], then round half away from zero, as std::lround
// of the saturated value. Written without lround so that a loop over a row vectorises: the value
// truncated toward zero, then the fraction, exact in T because |v| <= qm <= 127, decides the step.
// Saturating first also keeps the conversion to int32 in range.
template <class T>
int32_t round_saturate(T v, int qm) {
  const T top = static_cast<T>(qm);
  v = std::min(std::max(v, -top), top);
  const int32_t t = static_cast<int32_t>(v);
  const T frac = v - static_cast<T>(t);
  return t + (frac >= T(0.5)) - (frac <= T(-0.5));
}

void check_finite(float x, const char* where, long index) {
  if (!std::isfinite(x))
    fail(where, "x[" + std::to_string(index) + "]", std::to_string(x), "a finite number");
}

// The largest |x[i]| of a vector of n finite values; kvcim::Error naming `where` and the element
// otherwise (n < 0, no values, a NaN or an infinity).
float checked_max_abs(const float* x, int n, const char* where) {
  if (n < 0) fail(where, "n", std::to_string(n), "n >= 0");
  if (n > 0 && x == nullptr) fail(where, "x", "null", "n readable values");
  float m = 0.0f;
  for (int i = 0; i < n; ++i) {
    check_finite(x[i], where, i);
    m = std::max(m, std::fabs(x[i]));
  }
  return m;
}

}  // namespace

int qmax(int bits) {
  if (bits < kMinBits || bits > kMaxBits)
    fail("quant", "bits", std::to_string(bits),
         "an integer in [" + std::to_string(kMinBits) + ", " + std::to_string(kMaxBits) + "]");
  return (1 << (bits - 1)) - 1;
}

int32_t quantize_value(float x, float scale, int bits) {
  const int qm = qmax(bits);
  if (!(scale > 0.0f) || !std::isfinite(scale))
    fail("quant::quantize_value", "scale", std::to_string(scale), "a positive finite number");
  if (std::isnan(x)) fail("quant::quantize_value", "x", "nan", "a number");
  // The quotient is formed in float, as the header states (x / scale), then rounded once.
  return round_saturate(x / scale, qm);
}

QuantizedMatrix quantize_weights(MatrixRef w, int bits) {
  QuantizedMatrix out;
  out.rows = static_cast<int>(w.rows());
  out.cols = static_cast<int>(w.cols());
  out.bits = bits;
  qmax(bits);  // the width is checked before anything is allocated
  out.q.resize(static_cast<size_t>(out.rows) * out.cols);
  out.scale.resize(out.rows);
  quantize_weights_into(w, bits, out.q.data(), static_cast<size_t>(out.cols), out.scale.data());
  return out;
}

void quantize_weights_into(MatrixRef w, int bits, int8_t* codes, size_t stride, float* scale) {
  const int qm = qmax(bits);
  const int rows = static_cast<int>(w.rows()), cols = static_cast<int>(w.cols());
  for (int r = 0; r < rows; ++r) {
    const float* row = w.data() + static_cast<int64_t>(r) * w.outerStride();  // row-major
    // max |row[c]| over the bits: for non-negative floats the order of the bit patterns is the
    // order of the values, and an integer max is a reduction the compiler vectorises (a float
    // max is not, without -ffast-math). |x| >= 0x7f800000 is infinite or NaN.
    uint32_t m_bits = 0, nonfinite = 0;
    for (int c = 0; c < cols; ++c) {
      uint32_t b;
      std::memcpy(&b, row + c, 4);
      b &= 0x7fffffffu;
      nonfinite |= b >= 0x7f800000u ? 1u : 0u;
      m_bits = std::max(m_bits, b);
    }
    const float m = std::bit_cast<float>(m_bits);
    if (nonfinite)
      for (int c = 0; c < cols; ++c)
        check_finite(row[c], "quant::quantize_weights", static_cast<long>(r) * cols + c);
    // An all-zero row keeps scale 1 so that no consumer ever divides by zero; its codes are 0.
    const float s = m > 0.0f ? m / static_cast<float>(qm) : 1.0f;
    scale[r] = s;
    // quantize_value(row[c], s, bits) without its per-call checks (s > 0 and every value finite
    // are known here): the same quotient and rounding.
    int8_t* q = codes + static_cast<size_t>(r) * stride;
    for (int c = 0; c < cols; ++c) q[c] = static_cast<int8_t>(round_saturate(row[c] / s, qm));
  }
}

namespace {
// A vector's dynamic scale: its largest |x| over qm (every x checked finite); a zero vector keeps
// scale 1, its codes 0.
float activation_scale(const float* x, int n, int qm) {
  const float m = checked_max_abs(x, n, "quant::quantize_activation");
  return m > 0.0f ? m / static_cast<float>(qm) : 1.0f;
}
}  // namespace

float quantize_activation_into(const float* x, int n, int bits, int32_t* out) {
  const int qm = qmax(bits);
  const float s = activation_scale(x, n, qm);
  // quantize_value(x[i], s, bits) without its per-call checks (s > 0 and every value finite are
  // known here): the same quotient and rounding, in a loop that vectorises.
  for (int i = 0; i < n; ++i) out[i] = round_saturate(x[i] / s, qm);
  return s;
}

QuantizedVector quantize_activation(const float* x, int n, int bits) {
  QuantizedVector out;
  out.scale = activation_scale(x, n, qmax(bits));  // first: it refuses a bad n or x
  out.bits = bits;
  out.q.resize(n);
  for (int i = 0; i < n; ++i) out.q[i] = static_cast<int8_t>(quantize_value(x[i], out.scale, bits));
  return out;
}

int pow2_exponent(float max_abs, int bits) {
  const int qm = qmax(bits);
  if (!(max_abs >= 0.0f) || !std::isfinite(max_abs))
    fail("quant::pow2_exponent", "max_abs", std::to_string(max_abs), "a finite number >= 0");
  if (max_abs == 0.0f) return kPow2ZeroExponent;
  // Start from the floating-point estimate, then settle exactly: qm * 2^e is exact in double.
  int e = static_cast<int>(std::ceil(std::log2(static_cast<double>(max_abs) / qm)));
  const double m = max_abs;
  while (std::ldexp(static_cast<double>(qm), e) < m) ++e;
  while (std::ldexp(static_cast<double>(qm), e - 1) >= m) --e;
  return e;
}

Pow2Vector quantize_pow2(const float* x, int n, int bits) {
  const int qm = qmax(bits);
  const float m = checked_max_abs(x, n, "quant::quantize_pow2");
  Pow2Vector out;
  out.bits = bits;
  out.q.resize(n);
  out.exponent = pow2_exponent(m, bits);
  // x * 2^-e is exact (a power-of-two scaling) unless it underflows, so the same rounding rule
  // applies to the exact quotient; |x| <= qm * 2^e means no value ever saturates.
  for (int i = 0; i < n; ++i)
    out.q[i] = static_cast<int8_t>(
        round_saturate(std::ldexp(static_cast<double>(x[i]), -out.exponent), qm));
  return out;
}

int64_t shift_round(int64_t x, int shift) {
  if (shift < 0 || shift > 62)
    fail("quant::shift_round", "shift", std::to_string(shift), "an integer in [0, 62]");
  if (shift == 0) return x;
  // floor((x + 2^(shift-1)) / 2^shift) without forming x + 2^(shift-1), which could overflow:
  // the quotient's floor plus the bit just below the cut (1 exactly when the remainder >= half).
  return (x >> shift) + ((x >> (shift - 1)) & 1);
}

}  // namespace kvcim::cmodel::quant
