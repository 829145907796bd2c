// The trained parameters of a decoder, one plain struct per level, as in llama2.c.
// Matrices are row-major [out, in]: y = W x reads one contiguous row per output.
#pragma once
#include <Eigen/Dense>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kvcim/cmodel/config.hpp"

namespace kvcim::cmodel {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXf;
// A read-only view of any row-major float matrix (a Matrix or a WeightMatrix), without a copy.
using MatrixRef = Eigen::Ref<const Matrix>;

// One block of floats that matrices view (WeightMatrix::view): either a private copy-on-write
// mapping of a file's floats (a loaded checkpoint: no copy, and the pages come from the page
// cache instead of being zeroed and filled, which on the VMs of docs/performance.md cost ~1 s for
// 440 MB), or fresh memory, 2 MB-aligned and advised for transparent huge pages before the first
// touch (one page fault per 2 MB instead of one per 4 KB).
class FloatArena {
 public:
  explicit FloatArena(size_t count);
  // count floats of file `path` from byte `offset` on; nullptr where the file cannot be mapped.
  // Writable by default (private: a change stays in this process). read_only maps it PROT_READ:
  // a write faults, so its pages always hold the file's floats and release() may give them back.
  static std::shared_ptr<FloatArena> map_file(const std::string& path, size_t offset, size_t count,
                                              bool read_only = false);
  ~FloatArena();
  FloatArena(const FloatArena&) = delete;
  FloatArena& operator=(const FloatArena&) = delete;
  float* data() const { return data_; }
  size_t size() const { return count_; }
  // Gives back the resident memory of floats [offset, offset + count) (the whole pages inside
  // them) where no value can change by it: a read-only file mapping, whose pages are read again
  // from the page cache when next touched. Elsewhere (writable or anonymous memory) a no-op.
  void release(size_t offset, size_t count) const;
  // Maps the pages of floats [offset, offset + count) of a read-only file mapping (whose pages
  // the load left unmapped, or release() gave back) in one system call (MADV_POPULATE_READ),
  // before a pass that reads them all: one kernel entry instead of one page fault per 64 KB,
  // which is what start-up costs on the VMs we measure. A hint: a kernel without it leaves the
  // faults to the reads; elsewhere a no-op.
  void populate(size_t offset, size_t count) const;

 private:
  FloatArena() = default;
  // madvise(advice) on the pages of floats [offset, offset + count) of a read-only mapping: the
  // whole pages inside the range (inward) or every page it touches. The one gate and page
  // arithmetic of release() and populate().
  void advise(size_t offset, size_t count, int advice, bool inward) const;
  void* base_ = nullptr;  // what was mapped (data_ rounded down, with slack)
  size_t mapped_ = 0;
  bool heap_ = false;     // base_ came from operator new (no mmap on this system)
  bool read_only_ = false;  // a PROT_READ file mapping (map_file's read_only)
  float* data_ = nullptr;
  size_t count_ = 0;
};

// A weight matrix: to every reader an Eigen row-major float matrix (it is an Eigen::Map), whose
// floats are either its own (resize, assignment from any matrix expression) or a view of a shared
// FloatArena (a loaded checkpoint: WeightMatrix::view). Copies are deep, so a copy of a Weights
// can be changed without changing the original; moves keep the storage.
class WeightMatrix : public Eigen::Map<Matrix> {
 public:
  using Base = Eigen::Map<Matrix>;
  WeightMatrix() : Base(nullptr, 0, 0) {}
  WeightMatrix(const WeightMatrix& other) : Base(nullptr, 0, 0) { assign(other); }
  WeightMatrix(WeightMatrix&& other) noexcept : Base(nullptr, 0, 0) { take(std::move(other)); }
  template <class D>
  WeightMatrix(const Eigen::MatrixBase<D>& m) : Base(nullptr, 0, 0) {  // NOLINT: converts like Matrix
    assign(m);
  }
  WeightMatrix& operator=(const WeightMatrix& other) {
    if (this != &other) assign(other);
    return *this;
  }
  WeightMatrix& operator=(WeightMatrix&& other) noexcept {
    if (this != &other) take(std::move(other));
    return *this;
  }
  template <class D>
  WeightMatrix& operator=(const Eigen::MatrixBase<D>& m) {
    assign(m);
    return *this;
  }
  // Own storage of rows x cols floats (contents unspecified), as Matrix::resize.
  void resize(Eigen::Index rows, Eigen::Index cols);
  // rows x cols floats of `arena` from float `offset` on, shared, not copied.
  static WeightMatrix view(std::shared_ptr<const FloatArena> arena, size_t offset, Eigen::Index rows,
                           Eigen::Index cols);
  bool is_view() const { return arena_ != nullptr; }
  // A view of a read-only file mapping gives its pages back (FloatArena::release): for a reader
  // done with the floats for now (Int8Backend, once a matrix is quantised). Otherwise a no-op.
  void release_pages() const { release_pages(0, rows()); }
  // FloatArena::populate of a view's floats (a read-only mapping's); otherwise a no-op.
  void populate_pages() const { populate_pages(0, rows()); }
  // The same for rows [row0, row0 + count) only (a pass that reads a block of rows at a time).
  void release_pages(Eigen::Index row0, Eigen::Index count) const;
  void populate_pages(Eigen::Index row0, Eigen::Index count) const;

 private:
  template <class D>
  void assign(const Eigen::MatrixBase<D>& m) {
    own(Matrix(m));  // evaluated first: m may read this matrix
  }
  void own(Matrix&& m);
  void take(WeightMatrix&& other) noexcept;
  void reseat(float* p, Eigen::Index rows, Eigen::Index cols) noexcept {
    new (static_cast<Base*>(this)) Base(p, rows, cols);
  }
  Matrix owned_;
  std::shared_ptr<const FloatArena> arena_;
};

// The weight matrices that a backend may place on CIM macros.
enum class MatrixKind { wq, wk, wv, wo, w1, w2, w3, classifier };
inline constexpr MatrixKind kAllMatrixKinds[] = {MatrixKind::wq, MatrixKind::wk, MatrixKind::wv,
                                                 MatrixKind::wo, MatrixKind::w1, MatrixKind::w2,
                                                 MatrixKind::w3, MatrixKind::classifier};
const char* name(MatrixKind kind);

struct LayerWeights {
  Vector rms_att;        // [dim]
  WeightMatrix wq;       // [n_heads*head_dim, dim]
  WeightMatrix wk;       // [kv_dim, dim]
  WeightMatrix wv;       // [kv_dim, dim]
  WeightMatrix wo;       // [dim, n_heads*head_dim]
  Vector rms_ffn;        // [dim]
  WeightMatrix w1;       // [hidden, dim]  gate
  WeightMatrix w2;       // [dim, hidden]  down
  WeightMatrix w3;       // [hidden, dim]  up
  // Hugging Face families only, empty otherwise (Config says which): biases added to the
  // projections' outputs, and the per-head RMSNorm weights of q and k. bq, bk, q_norm and k_norm
  // are in the adjacent-pair RoPE layout of wq and wk's rows (hf_checkpoint.hpp).
  Vector bq, bk, bv;     // [n_heads*head_dim], [kv_dim], [kv_dim]  (Config::qkv_bias)
  Vector bo;             // [dim]                                   (Config::o_bias)
  Vector q_norm, k_norm; // [head_dim] each                         (Config::qk_norm)
};

struct Weights {
  WeightMatrix token_embedding;  // [vocab, dim]
  std::vector<LayerWeights> layers;
  Vector rms_final;              // [dim]
  WeightMatrix wcls;             // [vocab, dim]; empty when the classifier is shared with the embedding

  // The classifier matrix, whichever way it is stored.
  const WeightMatrix& classifier() const { return wcls.size() ? wcls : token_embedding; }
  // Matrix `kind` of layer `layer` (layer ignored for the classifier).
  const WeightMatrix& matrix(int layer, MatrixKind kind) const;
  // WeightMatrix::release_pages of every matrix and the embedding: a read-only mapping's floats
  // leave the resident set until read again (a streamed pass); otherwise a no-op.
  void release_pages() const;
};

}  // namespace kvcim::cmodel
