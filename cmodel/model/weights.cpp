#include "kvcim/cmodel/weights.hpp"

namespace kvcim::cmodel {

const char* name(MatrixKind kind) {
  switch (kind) {
    case MatrixKind::wq: return "wq";
    case MatrixKind::wk: return "wk";
    case MatrixKind::wv: return "wv";
    case MatrixKind::wo: return "wo";
    case MatrixKind::w1: return "w1";
    case MatrixKind::w2: return "w2";
    case MatrixKind::w3: return "w3";
    case MatrixKind::classifier: return "classifier";
  }
  return "?";
}

const Matrix& Weights::matrix(int layer, MatrixKind kind) const {
  if (kind == MatrixKind::classifier) return classifier();
  const LayerWeights& w = layers.at(layer);
  switch (kind) {
    case MatrixKind::wq: return w.wq;
    case MatrixKind::wk: return w.wk;
    case MatrixKind::wv: return w.wv;
    case MatrixKind::wo: return w.wo;
    case MatrixKind::w1: return w.w1;
    case MatrixKind::w2: return w.w2;
    case MatrixKind::w3: return w.w3;
    default: return classifier();
  }
}

}  // namespace kvcim::cmodel
