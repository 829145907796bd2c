// What the CimAttention window tests share: the small model shape (2 layers, 2 query heads over one
// KV head, a GQA group of 2, head_dim 8: the tile's) and the check that a windowed CimAttention
// answers every head's random query exactly as a fresh one holding the kept tokens only.
#pragma once
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kvcim/cmodel/config.hpp"
#include "kvcim/runtime/cim_attention.hpp"

namespace kvcim::test {

inline cmodel::Config small_attention_config() {
  cmodel::Config c;
  c.dim = 16, c.hidden_dim = 32, c.n_layers = 2, c.n_heads = 2, c.n_kv_heads = 1;
  c.vocab_size = 32, c.seq_len = 256;
  return c;
}

// Every layer and head: a random query, the same answer bit for bit (a fatal failure otherwise).
inline void expect_same_attention(runtime::CimAttention& windowed, runtime::CimAttention& fresh, const cmodel::Config& c,
                                  std::mt19937_64& g, int pos, runtime::AttentionEvents& ev) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> q(static_cast<size_t>(c.head_dim())), a(q.size()), b(q.size());
  for (int l = 0; l < c.n_layers; ++l)
    for (int h = 0; h < c.n_heads; ++h) {
      for (auto& x : q) x = d(g);
      windowed.attend(l, h, q.data(), a.data(), ev);
      fresh.attend(l, h, q.data(), b.data(), ev);
      ASSERT_EQ(a, b) << "position " << pos << " layer " << l << " head " << h;
    }
}

}  // namespace kvcim::test
