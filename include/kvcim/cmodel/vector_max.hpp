// Largest element and largest magnitude of a float vector expression, by a plain loop. Eigen's
// maxCoeff() on dynamic float vectors, compiled for AVX-512 (-march=native on the CI machines),
// makes GCC 12 warn -Wmaybe-uninitialized inside its vectorised reduction; these give the same
// values without it.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

namespace kvcim::cmodel {

template <class E>
float max_of(const Eigen::MatrixBase<E>& e) {
  float m = -std::numeric_limits<float>::infinity();
  for (Eigen::Index i = 0; i < e.size(); ++i) m = std::max(m, static_cast<float>(e(i)));
  return m;
}

template <class E>
float max_abs(const Eigen::MatrixBase<E>& e) {
  float m = 0.0f;
  for (Eigen::Index i = 0; i < e.size(); ++i) m = std::max(m, std::abs(static_cast<float>(e(i))));
  return m;
}

}  // namespace kvcim::cmodel
