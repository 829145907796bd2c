#include "kvcim/cmodel/config.hpp"

#include <cmath>

#include "kvcim/error.hpp"

namespace kvcim::cmodel {

namespace {
// Largest size any one header field may take: beyond it products could overflow int64 and the
// file could not exist anyway.
constexpr int kMaxField = 1 << 24;
// Whole-model limits, checked in 128-bit arithmetic before any product is formed in int64:
// no checkpoint has more than 2^40 float32 values (4 TiB), and the KV cache, allocated in full
// when a model is built, may not exceed 2^33 values (32 GiB; Llama-2-70B at 4k context needs
// 2^29.3).
constexpr int64_t kMaxCheckpointFloats = int64_t(1) << 40;
constexpr int64_t kMaxKvCacheFloats = int64_t(1) << 33;
using Wide = unsigned __int128;

std::string decimal(Wide v) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v);
  return s;
}

void check_range(const std::string& where, const char* field, int value) {
  if (value <= 0) fail(where, field, std::to_string(value), "expected a positive size");
  if (value > kMaxField)
    fail(where, field, std::to_string(value),
         "expected at most " + std::to_string(kMaxField));
}
}  // namespace

void Config::validate(const std::string& where) const {
  check_range(where, "dim", dim);
  check_range(where, "hidden_dim", hidden_dim);
  check_range(where, "n_layers", n_layers);
  check_range(where, "n_heads", n_heads);
  check_range(where, "n_kv_heads", n_kv_heads);
  check_range(where, "vocab_size", vocab_size);
  check_range(where, "seq_len", seq_len);
  if (head_size != 0) check_range(where, "head_dim", head_size);
  if (head_size == 0 && dim % n_heads != 0)
    fail(where, "n_heads", std::to_string(n_heads),
         "must divide dim = " + std::to_string(dim));
  if (n_heads % n_kv_heads != 0)
    fail(where, "n_kv_heads", std::to_string(n_kv_heads),
         "must divide n_heads = " + std::to_string(n_heads));
  if (head_dim() % 2 != 0)
    fail(where, "head_dim", std::to_string(head_dim()), "RoPE needs an even head size");
  if (!(rope_theta > 1.0f) || !std::isfinite(rope_theta))
    fail(where, "rope_theta", std::to_string(rope_theta), "expected a finite number above 1");
  if (!(rms_norm_eps > 0.0f) || !(rms_norm_eps < 1.0f))
    fail(where, "rms_norm_eps", std::to_string(rms_norm_eps), "expected a number in (0, 1)");
  if (sliding_window < 0)
    fail(where, "sliding_window", std::to_string(sliding_window), "expected a positive number, or 0 for none");
  if (rope_scaling.enabled()) {
    const RopeScaling& r = rope_scaling;
    if (!(r.factor >= 1.0) || !std::isfinite(r.factor))
      fail(where, "rope_scaling.factor", std::to_string(r.factor), "expected a finite number of at least 1");
    if (!(r.low_freq_factor > 0.0) || !std::isfinite(r.high_freq_factor) || !(r.high_freq_factor > r.low_freq_factor))
      fail(where, "rope_scaling.high_freq_factor", std::to_string(r.high_freq_factor),
           "expected a finite number above low_freq_factor = " + std::to_string(r.low_freq_factor) + " (> 0)");
    if (r.original_max_position_embeddings <= 0)
      fail(where, "rope_scaling.original_max_position_embeddings",
           std::to_string(r.original_max_position_embeddings), "expected a positive size");
  }
  const Wide d = dim, h = hidden_dim, L = n_layers, V = vocab_size, hd = head_dim(),
             kv = kv_dim(), q = q_dim(), S = seq_len;
  const Wide floats = V * d * (shared_classifier ? 1 : 2) +
                      L * (2 * d + 2 * q * d + 2 * kv * d + 3 * h * d) + d + S * hd;
  if (floats > Wide(kMaxCheckpointFloats))
    fail(where, "tensor sizes", decimal(floats) + " float32 values",
         "at most 2^40: the header's sizes are corrupt (or the model is beyond any memory)");
  const Wide kv_floats = 2 * L * kv * S;
  if (kv_floats > Wide(kMaxKvCacheFloats))
    fail(where, "seq_len", std::to_string(seq_len),
         "its KV cache (2 x n_layers x kv_dim x seq_len) would be " + decimal(kv_floats) +
             " float32 values; at most 2^33 (32 GiB)");
}

int64_t Config::checkpoint_floats() const {
  const int64_t d = dim, h = hidden_dim, L = n_layers, V = vocab_size, hd = head_dim();
  const int64_t kv = kv_dim(), q = q_dim();
  int64_t n = V * d;                         // token embedding
  n += L * d;                                // rms_att
  n += L * q * d;                            // wq
  n += 2 * L * kv * d;                       // wk, wv
  n += L * d * q;                            // wo
  n += L * d;                                // rms_ffn
  n += 3 * L * h * d;                        // w1, w2, w3
  n += d;                                    // rms_final
  n += int64_t(seq_len) * hd;                // legacy freq_cis_real + freq_cis_imag
  if (!shared_classifier) n += V * d;        // wcls
  return n;
}

int64_t Config::parameter_count() const {
  int64_t n = checkpoint_floats() - int64_t(seq_len) * head_dim();
  const int64_t L = n_layers;
  if (qkv_bias) n += L * (q_dim() + 2 * int64_t(kv_dim()));
  if (o_bias) n += L * dim;
  if (qk_norm) n += L * 2 * int64_t(head_dim());
  return n;
}

const char* architecture_name(Architecture a) {
  switch (a) {
    case Architecture::llama: return "LlamaForCausalLM";
    case Architecture::mistral: return "MistralForCausalLM";
    case Architecture::qwen2: return "Qwen2ForCausalLM";
    case Architecture::qwen3: return "Qwen3ForCausalLM";
  }
  return "LlamaForCausalLM";
}

const char* model_type(Architecture a) {
  switch (a) {
    case Architecture::llama: return "llama";
    case Architecture::mistral: return "mistral";
    case Architecture::qwen2: return "qwen2";
    case Architecture::qwen3: return "qwen3";
  }
  return "llama";
}

float Config::rope_inv_freq(int i) const {
  const float inv = 1.0f / std::pow(rope_theta, i / static_cast<float>(head_dim()));
  if (!rope_scaling.enabled()) return inv;
  // transformers' _compute_llama3_parameters: wavelengths shorter than
  // original_max_position_embeddings / high_freq_factor are kept, longer than
  // original_max_position_embeddings / low_freq_factor divided by factor, and those between
  // interpolated smoothly between the two.
  const RopeScaling& r = rope_scaling;
  const double old_context = r.original_max_position_embeddings;
  constexpr double kPi = 3.14159265358979323846;
  const double wavelen = 2.0 * kPi / inv;
  if (wavelen < old_context / r.high_freq_factor) return inv;
  if (wavelen > old_context / r.low_freq_factor) return static_cast<float>(inv / r.factor);
  const double smooth = (old_context / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
  return static_cast<float>((1.0 - smooth) * inv / r.factor + smooth * inv);
}

std::string Config::llama2c_unsupported() const {
  if (head_size != 0 && head_size * n_heads != dim)
    return "head_dim = " + std::to_string(head_size) + " (llama2.c's heads are dim / n_heads = " +
           std::to_string(dim / n_heads) + " wide)";
  if (qkv_bias || o_bias) return "attention biases (llama2.c's projections have none)";
  if (qk_norm) return "q/k norms (Qwen3's per-head RMSNorm of q and k)";
  if (rope_scaling.enabled()) return "rope_scaling (llama2.c's RoPE is unscaled)";
  if (sliding_window > 0 && sliding_window < seq_len)
    return "sliding_window = " + std::to_string(sliding_window) + " (llama2.c attends over the whole context of " +
           std::to_string(seq_len) + ")";
  return "";
}

}  // namespace kvcim::cmodel
