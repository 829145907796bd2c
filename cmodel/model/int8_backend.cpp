#include "kvcim/cmodel/int8_backend.hpp"

#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel {

namespace {
constexpr int kLayerKinds = 7;  // wq, wk, wv, wo, w1, w2, w3 (kAllMatrixKinds without the classifier)

// Matrix i of n in the backend's order: layer by layer, kinds in kAllMatrixKinds order, the
// classifier last.
const WeightMatrix& matrix_of(const Weights& w, int i, int n) {
  return i == n - 1 ? w.classifier() : w.matrix(i / kLayerKinds, kAllMatrixKinds[i % kLayerKinds]);
}
// Its name as the checkpoint names it ("wq of layer 3", "token_embedding (the classifier)").
std::string matrix_name(const Weights& w, int i, int n) {
  if (i == n - 1) return w.wcls.size() ? "wcls" : "token_embedding (the classifier)";
  return std::string(name(kAllMatrixKinds[i % kLayerKinds])) + " of layer " + std::to_string(i / kLayerKinds);
}
}  // namespace

Int8Backend::Int8Backend(const Config& config, const Weights& weights, int weight_bits,
                         int input_bits, quant::GemvKernel kernel)
    : config_(config), reference_(config, weights), input_bits_(input_bits) {
  if (static_cast<int>(weights.layers.size()) != config.n_layers)
    fail("Int8Backend", "layers", std::to_string(weights.layers.size()),
         std::to_string(config.n_layers) + " (the config's n_layers)");
  // Every matrix quantised on its own (the classifier last), shared between the two cores
  // (parallel_rows): the codes of a matrix depend on nothing but the matrix, so the split cannot
  // change them. An error in either thread is kept and rethrown here, in matrix order.
  const int n = config.n_layers * kLayerKinds + 1;
  // Every matrix's codes in one block, 2 MB-aligned and advised for huge pages (FloatArena): one
  // page fault per 2 MB instead of one per 4 KB, and no zero fill or copy per matrix (the 110M
  // shape's 110 MB of codes took ~0.4 s of page faults; docs/performance.md section 8).
  std::vector<size_t> offset(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    const WeightMatrix& m = matrix_of(weights, i, n);
    offset[i + 1] = offset[i] + static_cast<size_t>(m.rows()) *
                                    static_cast<size_t>(quant::Int8Matrix::padded_stride(static_cast<int>(m.cols())));
  }
  const auto arena = std::make_shared<FloatArena>((offset[n] + sizeof(float) - 1) / sizeof(float));
  struct Job {
    const Weights& weights;
    int weight_bits, input_bits;
    quant::GemvKernel kernel;
    std::shared_ptr<int8_t> block;
    const std::vector<size_t>& offset;
    std::vector<std::optional<quant::Int8Linear>> built;
    std::vector<std::exception_ptr> errors;
  } job{weights, weight_bits, input_bits, kernel,
        std::shared_ptr<int8_t>(arena, reinterpret_cast<int8_t*>(arena->data())), offset,
        std::vector<std::optional<quant::Int8Linear>>(n), std::vector<std::exception_ptr>(n)};
  int64_t elements = 0;
  for (int i = 0; i < n; ++i) elements += matrix_of(weights, i, n).size();
  parallel_rows(n, elements, [](void* c, int r0, int r1) {
    Job& j = *static_cast<Job*>(c);
    const int count = static_cast<int>(j.built.size());
    for (int k = r0; k < r1; ++k) {
      // the classifier (the largest matrix, last in the order) is taken first, so that the
      // other thread's share of the work runs beside it
      const int i = (k + count - 1) % count;
      try {
        const WeightMatrix& w = matrix_of(j.weights, i, count);
        w.populate_pages();  // one system call where the reads would fault page by page
        j.built[i].emplace(w, j.weight_bits, j.input_bits, j.kernel,
                           std::shared_ptr<int8_t>(j.block, j.block.get() + j.offset[i]));
        w.release_pages();  // read once: a read-only mapping's pages go back (Residency::on_demand)
      } catch (const Error& e) {  // a non-finite weight: name the matrix (the Model names the file)
        j.errors[i] = std::make_exception_ptr(Error(matrix_name(j.weights, i, count) + ": " + e.what()));
      } catch (...) {
        j.errors[i] = std::current_exception();
      }
    }
  }, &job);
  for (const std::exception_ptr& e : job.errors)
    if (e) std::rethrow_exception(e);
  per_layer_.reserve(n - 1);
  for (int i = 0; i < n - 1; ++i) per_layer_.push_back(std::move(*job.built[i]));
  classifier_.push_back(std::move(*job.built[n - 1]));
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
