// The trained parameters of a decoder, one plain struct per level, as in llama2.c.
// Matrices are row-major [out, in]: y = W x reads one contiguous row per output.
#pragma once
#include <Eigen/Dense>
#include <string>
#include <vector>

#include "kvcim/cmodel/config.hpp"

namespace kvcim::cmodel {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXf;

// The weight matrices that a backend may place on CIM macros.
enum class MatrixKind { wq, wk, wv, wo, w1, w2, w3, classifier };
inline constexpr MatrixKind kAllMatrixKinds[] = {MatrixKind::wq, MatrixKind::wk, MatrixKind::wv,
                                                 MatrixKind::wo, MatrixKind::w1, MatrixKind::w2,
                                                 MatrixKind::w3, MatrixKind::classifier};
const char* name(MatrixKind kind);

struct LayerWeights {
  Vector rms_att;  // [dim]
  Matrix wq;       // [n_heads*head_dim, dim]
  Matrix wk;       // [kv_dim, dim]
  Matrix wv;       // [kv_dim, dim]
  Matrix wo;       // [dim, n_heads*head_dim]
  Vector rms_ffn;  // [dim]
  Matrix w1;       // [hidden, dim]  gate
  Matrix w2;       // [dim, hidden]  down
  Matrix w3;       // [hidden, dim]  up
};

struct Weights {
  Matrix token_embedding;  // [vocab, dim]
  std::vector<LayerWeights> layers;
  Vector rms_final;        // [dim]
  Matrix wcls;             // [vocab, dim]; empty when the classifier is shared with the embedding

  // The classifier matrix, whichever way it is stored.
  const Matrix& classifier() const { return wcls.size() ? wcls : token_embedding; }
  // Matrix `kind` of layer `layer` (layer ignored for the classifier).
  const Matrix& matrix(int layer, MatrixKind kind) const;
};

}  // namespace kvcim::cmodel
