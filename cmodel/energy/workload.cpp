#include "kvcim/cmodel/energy/workload.hpp"

#include "kvcim/error.hpp"

namespace kvcim::cmodel::energy {

std::array<MatrixShape, 7> layer_matrices(const Config& c, int layer) {
  const int64_t d = c.dim, h = c.hidden_dim, kv = c.kv_dim(), q = c.q_dim();
  return {{{Op::q_proj, layer, d, q},
           {Op::k_proj, layer, d, kv},
           {Op::v_proj, layer, d, kv},
           {Op::o_proj, layer, q, d},
           {Op::ffn_w1, layer, d, h},
           {Op::ffn_w2, layer, h, d},
           {Op::ffn_w3, layer, d, h}}};
}

std::vector<MatrixShape> token_matrices(const Config& c) {
  std::vector<MatrixShape> out;
  out.reserve(7 * c.n_layers + 1);
  for (int l = 0; l < c.n_layers; ++l)
    for (const auto& m : layer_matrices(c, l)) out.push_back(m);
  out.push_back({Op::classifier, kModelLevel, c.dim, c.vocab_size});
  return out;
}

int64_t weight_elements(const Config& c) {
  int64_t n = 0;
  for (const auto& m : token_matrices(c)) n += m.n_in * m.n_out;
  return n;
}

void charge_softmax(Ledger& l, int layer, int64_t query_heads, int64_t tokens) {
  const int64_t scores = query_heads * tokens;
  l.add(layer, Op::softmax, EventKind::exp_op, scores);
  l.add(layer, Op::softmax, EventKind::fp32_add, 2 * scores);
  l.add(layer, Op::softmax, EventKind::fp32_mul, scores);
}

void charge_layer_elementwise(Ledger& l, int layer, const Config& c) {
  const int64_t d = c.dim, h = c.hidden_dim, kv = c.kv_dim(), q = c.q_dim();
  // two RMSNorms
  l.add(layer, Op::other, EventKind::fp32_mul, 2 * 3 * d);
  l.add(layer, Op::other, EventKind::fp32_add, 2 * d);
  // RoPE on q and k: (q + kv) / 2 pairs
  l.add(layer, Op::other, EventKind::fp32_mul, 2 * (q + kv));
  l.add(layer, Op::other, EventKind::fp32_add, q + kv);
  // the families' biases and per-head q/k RMSNorms
  if (c.qkv_bias) l.add(layer, Op::other, EventKind::fp32_add, q + 2 * kv);
  if (c.o_bias) l.add(layer, Op::other, EventKind::fp32_add, d);
  if (c.qk_norm) {
    l.add(layer, Op::other, EventKind::fp32_mul, 3 * (q + kv));
    l.add(layer, Op::other, EventKind::fp32_add, q + kv);
  }
  // SwiGLU
  l.add(layer, Op::other, EventKind::exp_op, h);
  l.add(layer, Op::other, EventKind::fp32_add, h);
  l.add(layer, Op::other, EventKind::fp32_mul, 2 * h);
  // residuals
  l.add(layer, Op::other, EventKind::fp32_add, 2 * d);
}

void charge_model_elementwise(Ledger& l, const Config& c) {
  l.add(kModelLevel, Op::other, EventKind::fp32_mul, 3 * int64_t(c.dim));
  l.add(kModelLevel, Op::other, EventKind::fp32_add, int64_t(c.dim));
}

void charge_matvec_buffer(Ledger& l, int layer, Op op, int64_t n_in, int64_t n_out, int in_bits) {
  l.add(layer, op, EventKind::buffer_bit, n_in * in_bits + n_out * kAccumulatorBits);
}

void charge_attention_buffer(Ledger& l, int layer, int64_t query_heads, int64_t head_dim,
                             int64_t tokens, int q_bits, int prob_bits) {
  l.add(layer, Op::attn_scores, EventKind::buffer_bit,
        query_heads * (head_dim * q_bits + tokens * kAccumulatorBits));
  l.add(layer, Op::attn_weighted_sum, EventKind::buffer_bit,
        query_heads * (tokens * prob_bits + head_dim * kAccumulatorBits));
}

void charge_conventional_matvec(Ledger& l, int layer, Op op, int64_t n_in, int64_t n_out,
                                int bits, EventKind mac, int64_t from_sram_bits,
                                EventKind offchip) {
  const int64_t total = n_in * n_out * bits;
  if (from_sram_bits < 0 || from_sram_bits > total)
    fail("charge_conventional_matvec", "from_sram_bits", std::to_string(from_sram_bits),
         "expected 0.." + std::to_string(total));
  l.add(layer, op, mac, n_in * n_out);
  l.add(layer, op, EventKind::sram_bit, from_sram_bits);
  l.add(layer, op, offchip, total - from_sram_bits);
}

void charge_conventional_attention(Ledger& l, int layer, int64_t query_heads, int64_t kv_heads,
                                   int64_t head_dim, int64_t tokens, int64_t sram_tokens,
                                   int bits, EventKind mac, EventKind offchip) {
  if (sram_tokens < 0 || sram_tokens > tokens)
    fail("charge_conventional_attention", "sram_tokens", std::to_string(sram_tokens),
         "expected 0.." + std::to_string(tokens));
  const int64_t per_token = kv_heads * head_dim * bits;  // K (or V) bits of one token
  for (Op op : {Op::attn_scores, Op::attn_weighted_sum}) {
    l.add(layer, op, mac, query_heads * tokens * head_dim);
    l.add(layer, op, EventKind::sram_bit, sram_tokens * per_token);
    l.add(layer, op, offchip, (tokens - sram_tokens) * per_token);
  }
}

}  // namespace kvcim::cmodel::energy
