// The small model shape the CimAttention window tests share: 2 layers, 2 query heads over one KV
// head (a GQA group of 2), head_dim 8 (the tile's).
#pragma once
#include "kvcim/cmodel/config.hpp"

namespace kvcim::test {

inline cmodel::Config small_attention_config() {
  cmodel::Config c;
  c.dim = 16, c.hidden_dim = 32, c.n_layers = 2, c.n_heads = 2, c.n_kv_heads = 1;
  c.vocab_size = 32, c.seq_len = 256;
  return c;
}

}  // namespace kvcim::test
