// llama2.c checkpoint format: 7 int32 header (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len; a negative vocab_size means the classifier is stored separately), then
// float32 tensors in a fixed order, with the legacy freq_cis tables before the classifier.
#pragma once
#include <cstdint>
#include <string>

#include "kvcim/cmodel/weights.hpp"

namespace kvcim::cmodel {

struct Checkpoint {
  Config config;
  Weights weights;
  std::string path;
};

// Reads only the header, validated against the file length. Throws kvcim::Error.
Config read_checkpoint_config(const std::string& path);
// Reads and validates the whole checkpoint. Throws kvcim::Error.
Checkpoint read_checkpoint(const std::string& path);

// Random weights of any shape from a seed (uniform, scaled by 1/sqrt(fan-in); norms near 1), so
// tests and benchmarks can cover GQA and MHA, shared and separate classifiers and odd sizes.
Weights random_weights(const Config& config, uint64_t seed);
// Writes a checkpoint in llama2.c's format (atomically: temporary file, then rename).
void write_checkpoint(const std::string& path, const Config& config, const Weights& weights);

// The embedded default model and tokenizer shipped in models/.
std::string default_model_path();
std::string default_tokenizer_path();

}  // namespace kvcim::cmodel
