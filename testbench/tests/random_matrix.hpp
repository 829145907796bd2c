// A matrix of standard normal values, for the tests of the quantised kernels and formats.
#pragma once
#include <random>

#include "kvcim/cmodel/weights.hpp"

namespace kvcim::test {

inline cmodel::Matrix random_matrix(int rows, int cols, std::mt19937& g) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  cmodel::Matrix w(rows, cols);
  for (int64_t i = 0; i < w.size(); ++i) w.data()[i] = d(g);
  return w;
}

}  // namespace kvcim::test
