#include "kvcim/mapper/shape.hpp"

#include <map>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/error.hpp"
#include "kvcim/text.hpp"

namespace kvcim::mapper {

using cmodel::Config;

Config config_of(int dim, int hidden, int layers, int heads, int kv_heads, int vocab, int context,
                 bool shared_classifier) {
  Config c;
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

namespace {

// Public configurations per their Hugging Face config.json (hidden_size, intermediate_size,
// num_hidden_layers, num_attention_heads, num_key_value_heads, vocab_size,
// max_position_embeddings; untied classifiers; energy-numbers.md K1, K2 for Llama-2-7B and
// Llama-3-8B): meta-llama/Llama-2-{7b,13b,70b}-hf, meta-llama/Meta-Llama-3-{8B,70B},
// mistralai/Mistral-7B-v0.1 (sliding_window 4096), TinyLlama/TinyLlama-1.1B-Chat-v1.0. The
// TinyStories models of llama2.c (stories15M/110M per its README, stories260K = the embedded
// model's header; tied classifiers).
const std::map<std::string, Config>& presets() {
  static const std::map<std::string, Config> p = {
      {"llama2-7b", config_of(4096, 11008, 32, 32, 32, 32000, 4096, false)},
      {"llama2-13b", config_of(5120, 13824, 40, 40, 40, 32000, 4096, false)},
      {"llama2-70b", config_of(8192, 28672, 80, 64, 8, 32000, 4096, false)},
      {"llama3-8b", config_of(4096, 14336, 32, 32, 8, 128256, 8192, false)},
      {"llama3-70b", config_of(8192, 28672, 80, 64, 8, 128256, 8192, false)},
      {"mistral-7b", config_of(4096, 14336, 32, 32, 8, 32000, 32768, false)},
      {"tinyllama-1.1b", config_of(2048, 5632, 22, 32, 4, 32000, 2048, false)},
      {"stories15m", config_of(288, 768, 6, 6, 6, 32000, 256, true)},
      {"stories110m", config_of(768, 2048, 12, 12, 12, 32000, 1024, true)},
      {"stories260k", config_of(64, 172, 5, 8, 4, 512, 512, true)},
  };
  return p;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& [n, c] : presets()) names.push_back(n);
  return names;
}

ModelShape shape_preset(const std::string& name) {
  auto it = presets().find(name);
  if (it == presets().end())
    fail("shape", "preset", "'" + name + "'",
         "unknown model; " + cmodel::energy::suggestion(name, preset_names()));
  ModelShape shape{name, it->second};
  if (name == "mistral-7b") shape.sliding_window = 4096;  // config.json sliding_window
  return shape;
}

ModelShape parse_shape(const std::string& text) {
  const std::vector<std::string> known = {"dim",   "hidden",  "layers",  "heads",            "kv_heads",
                                          "vocab", "context", "head_dim", "shared_classifier"};
  std::map<std::string, std::string> kv;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      fail("shape", "item", "'" + item + "'", "expected key=value (e.g. dim=4096)");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (std::find(known.begin(), known.end(), key) == known.end())
      fail("shape", key, "'" + value + "'",
           "unknown key; " + cmodel::energy::suggestion(key, known));
    if (kv.count(key)) fail("shape", key, "'" + value + "'", "given twice");
    kv[key] = value;
  }
  auto number = [&](const std::string& key, bool required, int fallback) {
    auto it = kv.find(key);
    if (it == kv.end()) {
      if (required) fail("shape", key, "(missing)", "required (e.g. " + key + "=64)");
      return fallback;
    }
    const std::optional<int64_t> v = parse_integer(it->second);
    if (!v || *v <= 0 || *v > (1L << 24))
      fail("shape", key, "'" + it->second + "'", "expected a positive integer");
    return static_cast<int>(*v);
  };
  Config c;
  c.dim = number("dim", true, 0);
  c.hidden_dim = number("hidden", true, 0);
  c.n_layers = number("layers", true, 0);
  c.n_heads = number("heads", true, 0);
  c.n_kv_heads = number("kv_heads", false, c.n_heads);
  c.vocab_size = number("vocab", true, 0);
  c.seq_len = number("context", true, 0);
  c.head_size = number("head_dim", false, 0);  // default: dim / heads
  if (auto it = kv.find("shared_classifier"); it != kv.end()) {
    if (it->second == "true" || it->second == "1") c.shared_classifier = true;
    else if (it->second == "false" || it->second == "0") c.shared_classifier = false;
    else fail("shape", "shared_classifier", "'" + it->second + "'", "expected true or false");
  }
  c.validate("shape");
  check_mappable(c, "shape");
  return {"custom", c};
}

void check_mappable(const Config& c, const std::string& where) {
  const double d = c.dim, h = c.hidden_dim, L = c.n_layers, kv = c.kv_dim(), q = c.q_dim();
  const double weights = L * (2 * d * q + 2 * d * kv + 3 * d * h) + double(c.vocab_size) * d;
  if (weights > 1e14)
    fail(where, "shape", to_string(c), "more than 1e14 weights: too large to map");
  if (L * c.n_heads > double(1 << 24))
    fail(where, "shape", to_string(c), "layers x heads above 2^24 KV streams: too large to map");
}

ModelShape shape_from_checkpoint(const std::string& path) {
  const Config c = cmodel::load_checkpoint_config(path);
  return {path, c, c.sliding_window};
}

std::string to_string(const Config& c) {
  return "dim=" + std::to_string(c.dim) + ",hidden=" + std::to_string(c.hidden_dim) +
         ",layers=" + std::to_string(c.n_layers) + ",heads=" + std::to_string(c.n_heads) +
         ",kv_heads=" + std::to_string(c.n_kv_heads) + ",vocab=" + std::to_string(c.vocab_size) +
         ",context=" + std::to_string(c.seq_len) +
         (c.head_size > 0 ? ",head_dim=" + std::to_string(c.head_size) : std::string()) +
         ",shared_classifier=" + (c.shared_classifier ? "true" : "false");
}

}  // namespace kvcim::mapper
