// The integer matrix-vector product of the quantised (CIM) path, computed fast on the CPU: the
// exact function a digital CIM macro array computes, y[o] = sum_c W[o][c] * x[c] over int8 codes
// with int32 accumulation, then the dequantisation y = acc * x_scale * w_scale[o].
//
// Kernels (chosen at run time; each is compiled with its own target attribute, so one binary
// carries all of them and the tests can hold every kernel the CPU runs to the portable one):
//   portable     plain C++ loops (the compiler may vectorise them for the build's -march)
//   avx2         int8 -> int16 sign extension, vpmaddwd pair sums into int32 lanes
//   avx512_vnni  vpdpbusd: x is offset to unsigned (x + 128), the offset removed exactly with
//                the row's code sum: sum (x+128) w = sum x w + 128 sum w
// All kernels are exact for every int8 code (including -128) as long as cols <= kMaxGemvCols,
// because no partial or final sum can leave the int32 range there.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kvcim/cmodel/quant/quant.hpp"

namespace kvcim::cmodel::quant {

// avx512bw: AVX-512 without VNNI (int8 sign-extended to int16, vpmaddwd on 32 codes at a time),
// the kernel of AVX-512 machines that lack vpdpbusd.
enum class GemvKernel { portable, avx2, avx512bw, avx512_vnni };
const char* name(GemvKernel kernel);
// Whether this build carries the kernel and this CPU can run it (portable: always).
bool kernel_available(GemvKernel kernel);
// Every available kernel, portable first.
std::vector<GemvKernel> available_kernels();
// The fastest available kernel.
GemvKernel best_kernel();

// The widest row whose int32 accumulation cannot overflow for any int8 codes:
// 65536 * 255 * 128 < 2^31 (the VNNI kernel's unsigned-offset sums are the largest).
inline constexpr int kMaxGemvCols = 65536;

// Weight codes in the kernels' layout: each row padded with zero codes to a multiple of 64
// columns (one 512-bit vector), so the inner loops have no tails, plus each row's code sum.
class Int8Matrix {
 public:
  Int8Matrix() = default;
  // Copies the codes and scales of `q`. Throws kvcim::Error if q.cols > kMaxGemvCols or the
  // sizes of q.q / q.scale disagree with rows x cols.
  explicit Int8Matrix(const QuantizedMatrix& q);
  // The same, taking q's storage where no padding is needed (cols a multiple of 64): no copy.
  explicit Int8Matrix(QuantizedMatrix&& q);
  // quantize_weights(w, bits) written straight into `storage`, which must hold
  // w.rows() * padded_stride(w.cols()) codes and is shared, not copied (Int8Backend puts every
  // matrix of a model in one huge-page block: no per-matrix zero fill, copy or 4 KB page faults).
  Int8Matrix(MatrixRef w, int bits, std::shared_ptr<int8_t> storage);
  static int padded_stride(int cols);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int stride() const { return stride_; }  // codes per stored row (cols rounded up to 64)
  int bits() const { return bits_; }
  int8_t code(int r, int c) const { return codes_.get()[static_cast<size_t>(r) * stride_ + c]; }
  const int8_t* row(int r) const { return codes_.get() + static_cast<size_t>(r) * stride_; }
  const std::vector<float>& scale() const { return scale_; }  // [rows], per output channel
  const std::vector<int32_t>& row_sums() const { return row_sums_; }
  // Bytes the codes and scales occupy (what one GEMV streams from memory).
  int64_t bytes() const;

 private:
  int rows_ = 0, cols_ = 0, stride_ = 0, bits_ = 8;
  void set_row_sums();
  // [rows, stride], never changed once built: copies of the matrix share it
  std::shared_ptr<const int8_t> codes_;
  std::vector<float> scale_;
  std::vector<int32_t> row_sums_;
};

// acc[o] = sum_{c < cols} W[o][c] * x[c], exact. x: w.cols() codes. Throws kvcim::Error if the
// kernel is not available on this CPU.
void gemv(const Int8Matrix& w, const int8_t* x, int32_t* acc, GemvKernel kernel);
inline void gemv(const Int8Matrix& w, const int8_t* x, int32_t* acc) {
  gemv(w, x, acc, best_kernel());
}

// A float matrix as the quantised path holds it: per-output-channel codes of weight_bits; each
// apply() quantises x per token (input_bits, quant::quantize_activation), runs the GEMV and
// dequantises in CimLinear's order, y[o] = (float(acc[o]) * x_scale) * w_scale[o], so that the
// result equals a digital CIM macro array's bit for bit.
class Int8Linear {
 public:
  Int8Linear(MatrixRef w, int weight_bits, int input_bits, GemvKernel kernel = best_kernel());
  // The codes in `storage` (Int8Matrix's constructor of the same arguments).
  Int8Linear(MatrixRef w, int weight_bits, int input_bits, GemvKernel kernel, std::shared_ptr<int8_t> storage);
  void apply(const float* x, float* y);
  // x already quantised (its bits are not checked against input_bits()).
  void apply(const QuantizedVector& x, float* y);
  const Int8Matrix& matrix() const { return matrix_; }
  int input_bits() const { return input_bits_; }
  GemvKernel kernel() const { return kernel_; }

 private:
  void check_and_size();  // the widths and kernel checked, the accumulators sized: every constructor
  Int8Matrix matrix_;
  int input_bits_;
  GemvKernel kernel_;
  std::vector<int32_t> acc_;
};

}  // namespace kvcim::cmodel::quant
