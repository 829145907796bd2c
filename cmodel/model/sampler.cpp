#include "kvcim/cmodel/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel {

int argmax(const float* x, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;  // strict: the lowest index wins ties
  return best;
}

Sampler::Sampler(float temperature, float top_p, uint64_t seed)
    : temperature_(temperature), top_p_(top_p), seed_(seed), state_(seed) {
  if (!(temperature >= 0.0f) || !std::isfinite(temperature))
    fail("sampler", "temperature", std::to_string(temperature), "expected a number >= 0");
  if (!(top_p >= 0.0f && top_p <= 1.0f))
    fail("sampler", "top_p", std::to_string(top_p), "expected a number in [0, 1]");
  if (state_ == 0) state_ = 0x9E3779B97F4A7C15ull;  // xorshift must not start at 0
}

// run.c's xorshift64*
uint32_t Sampler::random_u32() {
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  return static_cast<uint32_t>((state_ * 0x2545F4914F6CDD1Dull) >> 32);
}

float Sampler::random_f32() { return (random_u32() >> 8) / 16777216.0f; }

int Sampler::sample(const Vector& logits) {
  const int n = static_cast<int>(logits.size());
  // Non-finite logits mean the activations overflowed float32: no token is meaningful, and
  // NaN probabilities would leave the top-p candidate list empty.
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(logits[i]))
      fail("sampler", "logits", std::to_string(logits[i]) + " at token " + std::to_string(i),
           "finite logits (the model's activations overflowed float32)");
  if (temperature_ == 0.0f) return argmax(logits.data(), n);
  std::vector<float> probs(logits.data(), logits.data() + n);
  for (float& p : probs) p /= temperature_;
  softmax(probs.data(), n);
  // A tiny temperature can push finite logits past float32 (inf - inf = NaN in the softmax):
  // that is the greedy limit.
  for (float p : probs)
    if (!std::isfinite(p)) return argmax(logits.data(), n);
  const float coin = random_f32();
  if (top_p_ <= 0.0f || top_p_ >= 1.0f) {
    // sample from the whole distribution
    float cdf = 0.0f;
    for (int i = 0; i < n; ++i) {
      cdf += probs[i];
      if (coin < cdf) return i;
    }
    return n - 1;
  }
  // top-p: the smallest set of most likely tokens whose probability exceeds top_p
  const float cutoff = (1.0f - top_p_) / (n - 1);
  std::vector<int> idx;
  for (int i = 0; i < n; ++i)
    if (probs[i] >= cutoff) idx.push_back(i);
  if (idx.empty()) return argmax(probs.data(), n);  // n == 1: the cutoff (1 - top_p) / 0 is inf
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return probs[a] > probs[b]; });
  float cumulative = 0.0f;
  size_t last = idx.size() - 1;
  for (size_t i = 0; i < idx.size(); ++i) {
    cumulative += probs[idx[i]];
    if (cumulative > top_p_) {
      last = i;
      break;
    }
  }
  const float r = coin * cumulative;
  float cdf = 0.0f;
  for (size_t i = 0; i <= last; ++i) {
    cdf += probs[idx[i]];
    if (r < cdf) return idx[i];
  }
  return idx[last];
}

}  // namespace kvcim::cmodel
