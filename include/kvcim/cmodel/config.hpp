// Shape of a Llama-family decoder, as stored in a llama2.c checkpoint header or a Hugging Face
// config.json.
#pragma once
#include <cstdint>
#include <string>

namespace kvcim::cmodel {

struct Config {
  int dim = 0;         // transformer width
  int hidden_dim = 0;  // FFN width
  int n_layers = 0;
  int n_heads = 0;     // query heads
  int n_kv_heads = 0;  // key/value heads (GQA when fewer than n_heads)
  int vocab_size = 0;
  int seq_len = 0;     // maximum context
  bool shared_classifier = true;  // classifier = token embedding (llama2.c: vocab_size > 0)
  // Not stored by llama2.c checkpoints (which keep these values); a Hugging Face config.json
  // states them (rope_theta, rms_norm_eps).
  float rope_theta = 10000.0f;
  float rms_norm_eps = 1e-5f;

  int head_dim() const { return dim / n_heads; }
  int kv_dim() const { return head_dim() * n_kv_heads; }
  int kv_group() const { return n_heads / n_kv_heads; }  // query heads per KV head

  // Throws kvcim::Error naming `where` and the first field that is out of range.
  void validate(const std::string& where) const;
  // Number of float32 parameters a checkpoint of this shape stores (legacy freq_cis included).
  int64_t checkpoint_floats() const;
  // Parameters that take part in the forward pass (the classifier counted once).
  int64_t parameter_count() const;
};

}  // namespace kvcim::cmodel
