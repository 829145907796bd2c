// A model configuration by its dimensions, for tests that need a small model of a given shape.
#pragma once
#include "kvcim/cmodel/config.hpp"

namespace kvcim::test {

inline cmodel::Config config_of(int dim, int hidden, int layers, int heads, int kv_heads, int vocab, int context,
                                bool shared_classifier = true) {
  cmodel::Config c;
  c.dim = dim;
  c.hidden_dim = hidden;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.vocab_size = vocab;
  c.seq_len = context;
  c.shared_classifier = shared_classifier;
  return c;
}

}  // namespace kvcim::test
