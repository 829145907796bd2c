// Shape of a Llama-family decoder, as stored in a llama2.c checkpoint header or a Hugging Face
// config.json, and the variations of the families a Hugging Face folder may hold (Mistral's
// sliding window, Qwen2's q/k/v biases, Qwen3's per-head q/k RMSNorm, Llama-3's RoPE scaling, a
// head size stated apart from dim / n_heads).
#pragma once
#include <cstdint>
#include <string>

namespace kvcim::cmodel {

// The decoder families read from Hugging Face folders (config.json's `architectures`); a llama2.c
// checkpoint is a Llama.
enum class Architecture { llama, mistral, qwen2, qwen3 };
// "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM".
const char* architecture_name(Architecture a);
// config.json's model_type: "llama", "mistral", "qwen2", "qwen3".
const char* model_type(Architecture a);

// Llama-3's rope_scaling (rope_type "llama3"): the inverse frequencies of RoPE rewritten as
// transformers' _compute_llama3_parameters does. factor 0 = no scaling.
struct RopeScaling {
  double factor = 0.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int original_max_position_embeddings = 8192;
  bool enabled() const { return factor > 0.0; }
};

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
  // What only a Hugging Face folder can hold (a llama2.c checkpoint has the defaults).
  Architecture architecture = Architecture::llama;
  int head_size = 0;        // config.json's head_dim when stated; 0 = dim / n_heads
  bool qkv_bias = false;    // q, k, v projections add a bias (Qwen2; attention_bias)
  bool o_bias = false;      // the output projection adds a bias (Llama/Qwen3 attention_bias)
  bool qk_norm = false;     // RMSNorm over each head of q and k before RoPE (Qwen3)
  int sliding_window = 0;   // a position attends to the last sliding_window positions; 0 = all
  RopeScaling rope_scaling{};

  int head_dim() const { return head_size > 0 ? head_size : dim / n_heads; }
  int q_dim() const { return head_dim() * n_heads; }  // rows of wq, columns of wo
  int kv_dim() const { return head_dim() * n_kv_heads; }
  int kv_group() const { return n_heads / n_kv_heads; }  // query heads per KV head
  // RoPE's inverse frequency of the pair at even index `i` of a head (0 <= i < head_dim):
  // theta^(-i/head_dim), rewritten by rope_scaling when it is set.
  float rope_inv_freq(int i) const;
  // The first thing of this config that a llama2.c checkpoint cannot hold ("" when it holds
  // everything; rope_theta and rms_norm_eps are not counted: they are kept at llama2.c's values).
  std::string llama2c_unsupported() const;

  // Throws kvcim::Error naming `where` and the first field that is out of range.
  void validate(const std::string& where) const;
  // Number of float32 parameters a checkpoint of this shape stores (legacy freq_cis included).
  int64_t checkpoint_floats() const;
  // Parameters that take part in the forward pass (the classifier counted once).
  int64_t parameter_count() const;
};

}  // namespace kvcim::cmodel
