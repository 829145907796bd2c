#include "kvcim/cmodel/transformer.hpp"

#include <algorithm>
#include <cmath>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/cmodel/int8_backend.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel {

// ---- building blocks -----------------------------------------------------------------------

void rmsnorm(float* out, const float* x, const float* weight, int size, float eps) {
  float ss = 0.0f;
  for (int j = 0; j < size; ++j) ss += x[j] * x[j];
  ss = 1.0f / std::sqrt(ss / size + eps);
  for (int j = 0; j < size; ++j) out[j] = weight[j] * (ss * x[j]);
}

// Rotates adjacent pairs (x[i], x[i+1]) of each head by pos * Config::rope_inv_freq(i mod head)
// (theta^(-(i mod head)/head), unless rope_scaling rewrites it).
void rope(float* q, float* k, int pos, const Config& c) {
  const int hd = c.head_dim(), kv_dim = c.kv_dim();
  for (int i = 0; i < c.q_dim(); i += 2) {
    const int head_i = i % hd;
    const float freq = c.rope_inv_freq(head_i);
    const float angle = pos * freq;
    const float fcr = std::cos(angle), fci = std::sin(angle);
    const int rotations = i < kv_dim ? 2 : 1;  // q always, k only within kv_dim
    for (int r = 0; r < rotations; ++r) {
      float* vec = r == 0 ? q : k;
      const float v0 = vec[i], v1 = vec[i + 1];
      vec[i] = v0 * fcr - v1 * fci;
      vec[i + 1] = v0 * fci + v1 * fcr;
    }
  }
}

void softmax(float* x, int size) {
  float max_val = x[0];
  for (int i = 1; i < size; ++i) max_val = std::max(max_val, x[i]);
  float sum = 0.0f;
  for (int i = 0; i < size; ++i) sum += (x[i] = std::exp(x[i] - max_val));
  for (int i = 0; i < size; ++i) x[i] /= sum;
}

RunState::RunState(const Config& c)
    : x(c.dim), xb(c.dim), xb2(c.dim), xa(c.q_dim()), hb(c.hidden_dim), hb2(c.hidden_dim), q(c.q_dim()),
      k(c.kv_dim()), v(c.kv_dim()), logits(c.vocab_size) {}

namespace {

// y += b where the family has the bias (b empty otherwise).
void add_bias(Vector& y, const Vector& b) {
  if (b.size()) y += b;
}

// Qwen3's q_norm / k_norm: RMSNorm over each head's head_dim values, in place.
void norm_heads(float* x, const Vector& weight, int heads, int hd, float eps) {
  if (!weight.size()) return;
  for (int h = 0; h < heads; ++h) rmsnorm(x + h * hd, x + h * hd, weight.data(), hd, eps);
}

}  // namespace

// ---- the forward pass ----------------------------------------------------------------------

const Vector& forward(const Config& c, const Weights& w, RunState& s, Backend& be, int token,
                      int pos) {
  if (token < 0 || token >= c.vocab_size)
    throw Error("forward: token = " + std::to_string(token) + ": outside the vocabulary of " +
                std::to_string(c.vocab_size));
  if (pos < 0 || pos >= c.seq_len)
    throw Error("forward: position = " + std::to_string(pos) + ": outside the context of " +
                std::to_string(c.seq_len) + " tokens");
  const int dim = c.dim, hd = c.head_dim();

  // the token's embedding enters the residual stream
  s.x = w.token_embedding.row(token);

  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    // attention RMSNorm
    rmsnorm(s.xb.data(), s.x.data(), lw.rms_att.data(), dim, c.rms_norm_eps);
    // q, k, v projections
    be.linear(l, MatrixKind::wq, s.xb.data(), s.q.data());
    be.linear(l, MatrixKind::wk, s.xb.data(), s.k.data());
    be.linear(l, MatrixKind::wv, s.xb.data(), s.v.data());
    // biases and per-head norms of the families that have them, after whichever backend ran the
    // products, so that every backend gets them
    add_bias(s.q, lw.bq);
    add_bias(s.k, lw.bk);
    add_bias(s.v, lw.bv);
    norm_heads(s.q.data(), lw.q_norm, c.n_heads, hd, c.rms_norm_eps);
    norm_heads(s.k.data(), lw.k_norm, c.n_kv_heads, hd, c.rms_norm_eps);
    // rotary position embedding of q and k
    rope(s.q.data(), s.k.data(), pos, c);
    // this position's K and V enter the cache, once
    be.write_kv(l, pos, s.k.data(), s.v.data());
    // each query head attends over positions 0..pos of its KV head
    for (int h = 0; h < c.n_heads; ++h) be.attend(l, h, pos, s.q.data() + h * hd, s.xa.data() + h * hd);
    // output projection and residual
    be.linear(l, MatrixKind::wo, s.xa.data(), s.xb2.data());
    add_bias(s.xb2, lw.bo);
    s.x += s.xb2;
    // FFN RMSNorm
    rmsnorm(s.xb.data(), s.x.data(), lw.rms_ffn.data(), dim, c.rms_norm_eps);
    // SwiGLU: w2(silu(w1 x) * w3 x)
    be.linear(l, MatrixKind::w1, s.xb.data(), s.hb.data());
    be.linear(l, MatrixKind::w3, s.xb.data(), s.hb2.data());
    for (int i = 0; i < c.hidden_dim; ++i) {
      const float g = s.hb[i];
      s.hb[i] = g * (1.0f / (1.0f + std::exp(-g))) * s.hb2[i];
    }
    be.linear(l, MatrixKind::w2, s.hb.data(), s.xb.data());
    s.x += s.xb;
  }
  // final RMSNorm and classifier
  rmsnorm(s.x.data(), s.x.data(), w.rms_final.data(), dim, c.rms_norm_eps);
  be.linear(0, MatrixKind::classifier, s.x.data(), s.logits.data());
  return s.logits;
}

// ---- the float reference backend -----------------------------------------------------------

ReferenceBackend::ReferenceBackend(const Config& config, const Weights& weights)
    : config_(config), weights_(weights), cache_(config) {}

void ReferenceBackend::linear(int layer, MatrixKind kind, const float* x, float* y) {
  const WeightMatrix& W = weights_.matrix(layer, kind);
  gemv_f32(W.data(), W.cols(), x, y, static_cast<int>(W.rows()), static_cast<int>(W.cols()));
}

void ReferenceBackend::write_kv(int layer, int pos, const float* k, const float* v) {
  cache_.write(layer, pos, k, v);
}

void ReferenceBackend::attend(int layer, int head, int pos, const float* q, float* out) {
  const int hd = config_.head_dim();
  const int kv_head = head / config_.kv_group();  // query heads of a group share one KV head
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  // a sliding window (Mistral) leaves out the positions before the last sliding_window ones
  // (transformers' mask: query i sees key j when i - j < sliding_window); their weights are 0
  const int first = config_.sliding_window > 0 ? std::max(0, pos + 1 - config_.sliding_window) : 0;
  attention_.assign(pos + 1, 0.0f);
  // K and V rows of one KV head are contiguous: position t at key(layer, kv_head, 0) + t * hd
  attend_f32(q, cache_.key(layer, kv_head, first), cache_.value(layer, kv_head, first), pos + 1 - first, hd,
             scale, attention_.data() + first, out);
}

// ---- the golden model ----------------------------------------------------------------------

const char* name(WeightFormat format) {
  return format == WeightFormat::int8 ? "int8" : "float";
}

WeightFormat parse_weight_format(const std::string& option, const std::string& text) {
  if (text == "float" || text == "f32" || text == "float32") return WeightFormat::float32;
  if (text == "int8") return WeightFormat::int8;
  fail(option, "weights", "'" + text + "'", "float or int8");
}

std::shared_ptr<Model> Model::load(const std::string& path, WeightFormat format) {
  // int8: the floats are read once, to quantise them, so their pages are given back as they go
  // (110M shape: peak memory 558.7 -> 131.3 MB, bench_memory); the embedding rows and any float
  // use read them again from the page cache.
  return std::make_shared<Model>(
      load_checkpoint(path, format == WeightFormat::int8 ? Residency::on_demand : Residency::resident), format);
}

Model::Model(Checkpoint checkpoint, WeightFormat format)
    : checkpoint_(std::move(checkpoint)),
      backend_(checkpoint_.config, checkpoint_.weights),
      state_(checkpoint_.config) {
  if (format != WeightFormat::int8) return;
  try {
    int8_ = std::make_unique<Int8Backend>(checkpoint_.config, checkpoint_.weights);
  } catch (const Error& e) {  // e.g. a non-finite weight of a Residency::on_demand load
    if (checkpoint_.path.empty()) throw;
    throw Error(checkpoint_.path + ": " + e.what());
  }
}

Model::~Model() = default;

const Vector& Model::forward(int token, int pos) {
  if (int8_) {
    if (pos == 0) int8_->reset();
    return cmodel::forward(config(), weights(), state_, *int8_, token, pos);
  }
  if (pos == 0) backend_.cache().reset();
  return cmodel::forward(config(), weights(), state_, backend_, token, pos);
}

Matrix Model::logits(const std::vector<int>& tokens) {
  if (tokens.empty()) throw Error("logits: tokens: empty: expected at least one token");
  if (static_cast<int>(tokens.size()) > config().seq_len)
    throw Error("logits: tokens: " + std::to_string(tokens.size()) +
                " tokens: longer than the model's context of " + std::to_string(config().seq_len));
  Matrix out(tokens.size(), config().vocab_size);
  for (size_t i = 0; i < tokens.size(); ++i) out.row(i) = forward(tokens[i], static_cast<int>(i));
  return out;
}

}  // namespace kvcim::cmodel
