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
  if (dim % n_heads != 0)
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
  const Wide d = dim, h = hidden_dim, L = n_layers, V = vocab_size, hd = head_dim(),
             kv = kv_dim(), S = seq_len;
  const Wide floats = V * d * (shared_classifier ? 1 : 2) +
                      L * (2 * d + 2 * d * d + 2 * kv * d + 3 * h * d) + d + S * hd;
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
  const int64_t kv = kv_dim();
  int64_t n = V * d;                         // token embedding
  n += L * d;                                // rms_att
  n += L * d * d;                            // wq
  n += 2 * L * kv * d;                       // wk, wv
  n += L * d * d;                            // wo
  n += L * d;                                // rms_ffn
  n += 3 * L * h * d;                        // w1, w2, w3
  n += d;                                    // rms_final
  n += int64_t(seq_len) * hd;                // legacy freq_cis_real + freq_cis_imag
  if (!shared_classifier) n += V * d;        // wcls
  return n;
}

int64_t Config::parameter_count() const {
  int64_t n = checkpoint_floats() - int64_t(seq_len) * head_dim();
  return n;
}

}  // namespace kvcim::cmodel
