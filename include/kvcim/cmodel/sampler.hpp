// llama2.c's sampler: greedy argmax (lowest index wins ties) at temperature 0, otherwise softmax
// of logits/temperature sampled whole or from the top-p nucleus, with run.c's xorshift64* RNG so
// that a seed gives the same tokens as run.c.
#pragma once
#include <cstdint>

#include "kvcim/cmodel/weights.hpp"

namespace kvcim::cmodel {

int argmax(const float* x, int n);

class Sampler {
 public:
  Sampler(float temperature, float top_p, uint64_t seed);
  int sample(const Vector& logits);
  uint64_t seed() const { return seed_; }

 private:
  uint32_t random_u32();
  float random_f32();
  float temperature_, top_p_;
  uint64_t seed_, state_;
};

}  // namespace kvcim::cmodel
