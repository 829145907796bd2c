// Model shapes without weights: mapping studies of large models need only the dimensions.
// A shape comes from a checkpoint header, from a string
//   "dim=4096,hidden=11008,layers=32,heads=32,kv_heads=32,vocab=32000,context=4096"
// or from a named preset of a public model.
#pragma once
#include <string>
#include <vector>

#include "kvcim/cmodel/config.hpp"

namespace kvcim::mapper {

// A model configuration by its dimensions alone (the presets; tests that need a model of a shape).
cmodel::Config config_of(int dim, int hidden, int layers, int heads, int kv_heads, int vocab, int context,
                         bool shared_classifier = true);

struct ModelShape {
  std::string name;       // preset name, checkpoint path or "custom"
  cmodel::Config config;  // validated
  // Sliding-window attention (Mistral): a token attends to the last `sliding_window` tokens only,
  // so the KV cache keeps at most that many per stream. 0 = full attention.
  int64_t sliding_window = 0;
  // Tokens a stream keeps at `context` (the whole context, or the window).
  int64_t kv_context(int64_t context) const {
    return sliding_window > 0 && context > sliding_window ? sliding_window : context;
  }
};

// Keys: dim, hidden, layers, heads, kv_heads (default: heads), vocab, context (required except
// kv_heads), head_dim (default: dim / heads; Qwen3's heads are wider) and shared_classifier
// (true|false, default true). Throws kvcim::Error naming the key
// and value; an unknown key suggests the closest known one.
ModelShape parse_shape(const std::string& text);

// llama2-7b/13b/70b, llama3-8b/70b, mistral-7b, tinyllama-1.1b, stories15m/110m/260k. Throws kvcim::Error (with the list
// and the closest name) for anything else.
ModelShape shape_preset(const std::string& name);
std::vector<std::string> preset_names();

// The shape in a llama2.c checkpoint header or a folder's config.json (the file length is
// checked, weights not read), with the folder's sliding window.
ModelShape shape_from_checkpoint(const std::string& path);

// Throws kvcim::Error naming `where` when a shape is too large for the mapper's int64 arithmetic
// (more than 1e14 weights or 2^24 KV streams): a typo, not a model.
void check_mappable(const cmodel::Config& c, const std::string& where);

// "dim=...,hidden=...,..." that parse_shape() reads back to the same Config.
std::string to_string(const cmodel::Config& c);

}  // namespace kvcim::mapper
