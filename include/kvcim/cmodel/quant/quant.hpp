// The integer formats of the quantised (CIM) path and their rounding rules, defined once.
// Every C model uses these functions; none re-types a rounding or clipping rule.
//
// Rounding rule: round half away from zero (std::lround), then saturate symmetrically to
// [-qmax, qmax] with qmax = 2^(bits-1) - 1 (the code -2^(bits-1) is never produced, so negation
// never overflows and a zero point is never needed). The quotient x / scale is formed in float.
// Scales: an all-zero row or vector gets scale 1 (codes all 0), so no consumer divides by zero.
// Errors: bits outside [2, 8], a non-finite input value or a non-positive / non-finite scale
// throw kvcim::Error naming the function, the field and the value.
#pragma once
#include <cstdint>
#include <vector>

#include "kvcim/cmodel/weights.hpp"

namespace kvcim::cmodel::quant {

inline constexpr int kMinBits = 2;
inline constexpr int kMaxBits = 8;

// 2^(bits-1) - 1. Throws kvcim::Error for bits outside [kMinBits, kMaxBits].
int qmax(int bits);
// round half away from zero, then saturate to [-qmax(bits), qmax(bits)]
int32_t quantize_value(float x, float scale, int bits);

// Weights: per-output-channel (per-row) symmetric scales, scale[r] = max|W[r,:]| / qmax.
struct QuantizedMatrix {
  int rows = 0, cols = 0, bits = 8;
  std::vector<int8_t> q;     // [rows, cols] row-major
  std::vector<float> scale;  // [rows]; W[r][c] ~= q[r*cols+c] * scale[r]
};
QuantizedMatrix quantize_weights(MatrixRef w, int bits);
// The same codes and scales written to caller storage: row r's codes at codes + r * stride
// (stride >= w.cols(); the codes beyond cols are left as they are), its scale at scale[r].
void quantize_weights_into(MatrixRef w, int bits, int8_t* codes, size_t stride, float* scale);

// Activations: one dynamic scale per token (per vector), scale = max|x| / qmax.
struct QuantizedVector {
  int bits = 8;
  std::vector<int8_t> q;
  float scale = 1.0f;  // x[i] ~= q[i] * scale
};
QuantizedVector quantize_activation(const float* x, int n, int bits);
// The same codes as int32 into out[0, n), the scale returned: nothing allocated (the CIM
// linear layers quantise every token of a batch into one buffer).
float quantize_activation_into(const float* x, int n, int bits, int32_t* out);

// K and V as written to the cache: per token and KV head, a power-of-two scale 2^exponent (a
// shared exponent, as in block floating point / MX formats) so that the attention tile aligns
// tokens with shifts instead of multipliers. exponent = smallest e with max|x| <= qmax * 2^e.
struct Pow2Vector {
  int bits = 8;
  std::vector<int8_t> q;
  int exponent = 0;  // x[i] ~= q[i] * 2^exponent
};
// A zero vector gets exponent kPow2ZeroExponent (and all codes 0). Because max|x| <= qmax * 2^e,
// quantize_pow2 never saturates; its only loss is the rounding of x * 2^-e (exact power-of-two
// scaling) half away from zero.
inline constexpr int kPow2ZeroExponent = 0;
Pow2Vector quantize_pow2(const float* x, int n, int bits);
// The exponent rule of quantize_pow2 alone: smallest e with max_abs <= qmax(bits) * 2^e.
int pow2_exponent(float max_abs, int bits);

// Integer helpers shared by the C models and mirrored by the RTL:
// arithmetic right shift by `shift` >= 0 with rounding half up: (x + 2^(shift-1)) >> shift,
// i.e. floor(x / 2^shift + 1/2) (ties go towards +infinity, also for negative x); never overflows.
// shift = 0 returns x; shift outside [0, 62] throws kvcim::Error.
int64_t shift_round(int64_t x, int shift);

}  // namespace kvcim::cmodel::quant
