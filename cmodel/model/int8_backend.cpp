#include "kvcim/cmodel/int8_backend.hpp"

#include <cstring>
#include <string>

#include "kvcim/error.hpp"

namespace kvcim::cmodel {

namespace {
constexpr int kLayerKinds = 7;  // wq, wk, wv, wo, w1, w2, w3 (kAllMatrixKinds without the classifier)
}

Int8Backend::Int8Backend(const Config& config, const Weights& weights, int weight_bits,
                         int input_bits, quant::GemvKernel kernel)
    : config_(config), reference_(config, weights), input_bits_(input_bits) {
  if (static_cast<int>(weights.layers.size()) != config.n_layers)
    fail("Int8Backend", "layers", std::to_string(weights.layers.size()),
         std::to_string(config.n_layers) + " (the config's n_layers)");
  per_layer_.reserve(static_cast<size_t>(config.n_layers) * kLayerKinds);
  for (int l = 0; l < config.n_layers; ++l)
    for (int k = 0; k < kLayerKinds; ++k)
      per_layer_.emplace_back(weights.matrix(l, kAllMatrixKinds[k]), weight_bits, input_bits, kernel);
  classifier_.emplace_back(weights.classifier(), weight_bits, input_bits, kernel);
}

quant::Int8Linear& Int8Backend::find(int layer, MatrixKind kind) {
  if (kind == MatrixKind::classifier) return classifier_.front();
  if (layer < 0 || layer >= config_.n_layers)
    fail("Int8Backend", "layer", std::to_string(layer),
         "in [0, " + std::to_string(config_.n_layers) + ")");
  return per_layer_[static_cast<size_t>(layer) * kLayerKinds + static_cast<int>(kind)];
}

const quant::Int8Linear& Int8Backend::matrix(int layer, MatrixKind kind) const {
  return const_cast<Int8Backend*>(this)->find(layer, kind);
}

void Int8Backend::linear(int layer, MatrixKind kind, const float* x, float* y) {
  quant::Int8Linear& m = find(layer, kind);
  const int n = m.matrix().cols();
  // Quantisation is a pure function of x, so an input equal to the previous one (q, k and v;
  // gate and up) reuses its codes: same result, a third of the quantisation work.
  const bool same = static_cast<int>(last_x_.size()) == n &&
                    std::memcmp(last_x_.data(), x, sizeof(float) * n) == 0;
  if (!same) {
    last_xq_ = quant::quantize_activation(x, n, input_bits_);
    last_x_.assign(x, x + n);
  }
  m.apply(last_xq_, y);
}

void Int8Backend::write_kv(int layer, int pos, const float* k, const float* v) {
  reference_.write_kv(layer, pos, k, v);
}

void Int8Backend::attend(int layer, int head, int pos, const float* q, float* out) {
  reference_.attend(layer, head, pos, q, out);
}

int64_t Int8Backend::weight_bytes() const {
  int64_t b = 0;
  for (const auto& m : per_layer_) b += m.matrix().bytes();
  return b + classifier_.front().matrix().bytes();
}

}  // namespace kvcim::cmodel
