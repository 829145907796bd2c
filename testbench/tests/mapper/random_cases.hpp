// Seeded random model shapes and macro specs for the mapper's invariant tests.
#pragma once
#include <random>

#include "kvcim/cmodel/config.hpp"
#include "kvcim/mapper/hardware.hpp"

namespace kvcim::mapper::random_cases {
namespace cim = kvcim::cmodel::cim;

inline cmodel::Config random_shape(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  cmodel::Config c;
  const int head_dim = 2 * pick(1, 8);
  c.n_kv_heads = pick(1, 3);
  c.n_heads = c.n_kv_heads * pick(1, 3);
  c.dim = c.n_heads * head_dim;
  c.hidden_dim = pick(1, 300);
  c.n_layers = pick(1, 4);
  c.vocab_size = pick(2, 700);
  c.seq_len = pick(8, 256);
  c.shared_classifier = rng() % 2;
  return c;
}

inline cim::MacroSpec random_macro(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  cim::MacroSpec s;
  s.kind = rng() % 2 ? cim::MacroKind::digital : cim::MacroKind::analog;
  s.rows = pick(4, 200);
  s.cell_bits = pick(1, 4);
  s.weight_bits = pick(2, 8);
  s.input_bits = pick(2, 8);
  s.encoding = static_cast<cim::WeightEncoding>(pick(0, 2));
  s.cols = s.slices_per_weight() * pick(1, 24) + pick(0, 3);
  s.rows_per_cycle = pick(1, s.rows);
  s.adc_share = pick(1, std::min(8, s.cols));
  return s;
}

}  // namespace kvcim::mapper::random_cases
