#include "kvcim/cmodel/config.hpp"

#include "kvcim/error.hpp"

namespace kvcim::cmodel {

namespace {
// Largest size any one header field may take: beyond it products could overflow int64 and the
// file could not exist anyway.
constexpr int kMaxField = 1 << 24;

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
