// The quantised path of the forward pass, computed exactly and fast on the CPU: every
// matrix-vector product is the integer computation a digital CIM macro array does (per-output-
// channel weight codes, per-token activation codes from cmodel/quant, int32 accumulation,
// dequantisation; quant::Int8Linear), attention stays float as in the reference. It is the
// "int8-weight path" of docs/performance.md and gives, for every matrix, the same floats as
// runtime::CimLinear on digital macros.
#pragma once
#include <vector>

#include "kvcim/cmodel/quant/int8_gemv.hpp"
#include "kvcim/cmodel/transformer.hpp"

namespace kvcim::cmodel {

class Int8Backend : public Backend {
 public:
  // Quantises every matrix of `weights` (which must outlive the backend: attention reads the
  // float KV cache of a ReferenceBackend over them). Throws kvcim::Error for bits outside
  // [2, 8] or a kernel the CPU cannot run.
  Int8Backend(const Config& config, const Weights& weights, int weight_bits = 8,
              int input_bits = 8, quant::GemvKernel kernel = quant::best_kernel());

  void linear(int layer, MatrixKind kind, const float* x, float* y) override;
  void write_kv(int layer, int pos, const float* k, const float* v) override;
  void attend(int layer, int head, int pos, const float* q, float* out) override;

  void reset() { reference_.cache().reset(); }  // a new sequence
  const quant::Int8Linear& matrix(int layer, MatrixKind kind) const;
  // Bytes of weight codes and scales one token streams (every matrix once).
  int64_t weight_bytes() const;

 private:
  const Config& config_;
  ReferenceBackend reference_;                // float attention over the float KV cache
  std::vector<quant::Int8Linear> per_layer_;  // [layer * 7 + kind], kinds wq..w3
  std::vector<quant::Int8Linear> classifier_;  // one
  // The last quantised input: wq/wk/wv (and w1/w3) read the same vector, quantised once.
  std::vector<float> last_x_;
  quant::QuantizedVector last_xq_;
  int input_bits_;

  quant::Int8Linear& find(int layer, MatrixKind kind);
};

}  // namespace kvcim::cmodel
