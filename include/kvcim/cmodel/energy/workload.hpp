// The work of generating one token, as plain counts that both engines share: which matrices a
// token multiplies, and the digital work (softmax, norms, RoPE, SwiGLU, residuals, buffer
// traffic) that a CIM chip and a conventional engine do alike. The CIM analytic count (mapper),
// the conventional baseline and the runtime all charge these through the same functions, so
// they cannot drift apart.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "kvcim/cmodel/config.hpp"
#include "kvcim/cmodel/energy/ledger.hpp"

namespace kvcim::cmodel::energy {

// Accumulator width written back by a matrix-vector product or a score.
inline constexpr int kAccumulatorBits = 32;

struct MatrixShape {
  Op op;
  int layer;      // kModelLevel for the classifier
  int64_t n_in;   // input features (CIM rows)
  int64_t n_out;  // output features (CIM column groups)
};

// The seven matrices of one layer, in placement order q, k, v, o, w1, w2, w3.
std::array<MatrixShape, 7> layer_matrices(const Config& c, int layer);
// Every matrix of a token in placement order: layer 0..n-1, then the classifier.
std::vector<MatrixShape> token_matrices(const Config& c);
// Weights of one token's matrices (the classifier counted once).
int64_t weight_elements(const Config& c);

// Per score: one exponent, two fp32 adds (running max, sum), one fp32 multiply (normalise).
void charge_softmax(Ledger& l, int layer, int64_t query_heads, int64_t tokens);
// Per layer: two RMSNorms (3 mul + 1 add per element), RoPE on q and k (per pair 4 mul + 2 add),
// SwiGLU (per hidden unit 1 exp + 1 add + 2 mul), two residual adds per element.
void charge_layer_elementwise(Ledger& l, int layer, const Config& c);
// Once per token: the final RMSNorm.
void charge_model_elementwise(Ledger& l, const Config& c);
// A matrix-vector product reads its input from the buffer once (n_in x in_bits) and writes its
// accumulators (n_out x kAccumulatorBits).
void charge_matvec_buffer(Ledger& l, int layer, Op op, int64_t n_in, int64_t n_out, int in_bits);
// Attention of `query_heads` heads over `tokens` tokens: per head, q read (head_dim x q_bits)
// and scores written (tokens x 32) for the scores; probabilities read (tokens x prob_bits) and
// the output written (head_dim x 32) for the weighted sum.
void charge_attention_buffer(Ledger& l, int layer, int64_t query_heads, int64_t head_dim,
                             int64_t tokens, int q_bits, int prob_bits);

// Conventional (digital engine) pieces, also used by the CIM chip for what it computes
// off-macro (weights that did not fit, spilled KV pages):
// a matrix-vector product whose weights are fetched (n_in x n_out x bits, `from_sram` bits of
// them from on-chip SRAM, the rest with `offchip`) and multiplied with `mac` MACs.
void charge_conventional_matvec(Ledger& l, int layer, Op op, int64_t n_in, int64_t n_out,
                                int bits, EventKind mac, int64_t from_sram_bits,
                                EventKind offchip);
// Scores and weighted sum over `tokens` tokens of `kv_heads` KV heads for `query_heads` query
// heads: K and V of each token are fetched once per KV head (GQA reuse in registers),
// `sram_tokens` of them from SRAM and the rest with `offchip`; 2 x query_heads x tokens x
// head_dim MACs, half to scores and half to the weighted sum.
void charge_conventional_attention(Ledger& l, int layer, int64_t query_heads, int64_t kv_heads,
                                   int64_t head_dim, int64_t tokens, int64_t sram_tokens,
                                   int bits, EventKind mac, EventKind offchip);

}  // namespace kvcim::cmodel::energy
