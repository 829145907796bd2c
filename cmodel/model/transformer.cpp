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

void Backend::linear_batch(int layer, MatrixKind kind, int n, const float* x, int in, float* y, int out) {
  for (int t = 0; t < n; ++t)
    linear(layer, kind, x + static_cast<size_t>(t) * in, y + static_cast<size_t>(t) * out);
}

namespace {

// n rows through the decoder at once: row t is token ids[t] at position pos[t] of the sequence
// whose cache and attention are attn[t]'s; every matrix one linear_batch of `lin` over the rows.
// Row by row the operations of forward(), in its order, so the floats are forward()'s. `out`: the
// logits, or (classify false) the classifier's inputs, [row][dim].
void forward_rows(const Config& c, const Weights& w, Backend& lin, Backend* const* attn, const int* ids,
                  const int* pos, int n, std::vector<float>& out, bool classify = true) {
  for (int t = 0; t < n; ++t) {
    if (ids[t] < 0 || ids[t] >= c.vocab_size)
      throw Error("forward: token = " + std::to_string(ids[t]) + ": outside the vocabulary of " +
                  std::to_string(c.vocab_size));
    if (pos[t] < 0 || pos[t] >= c.seq_len)
      throw Error("forward: position = " + std::to_string(pos[t]) + ": outside the context of " +
                  std::to_string(c.seq_len) + " tokens");
  }
  const int dim = c.dim, hd = c.head_dim(), qd = c.q_dim(), kvd = c.kv_dim(), hid = c.hidden_dim;
  const auto N = static_cast<size_t>(n);
  // every row's activations side by side, [row][...]: forward()'s RunState per row
  std::vector<float> x(N * dim), xb(N * dim), xb2(N * dim), xa(N * qd), q(N * qd), k(N * kvd), v(N * kvd),
      hb(N * hid), hb2(N * hid);
  auto row = [](std::vector<float>& m, int t, int width) { return m.data() + static_cast<size_t>(t) * width; };
  auto add_bias_rows = [&](std::vector<float>& m, int width, const Vector& b) {
    if (!b.size()) return;
    for (int t = 0; t < n; ++t) Eigen::Map<Vector>(row(m, t, width), width) += b;
  };
  for (int t = 0; t < n; ++t) Eigen::Map<Vector>(row(x, t, dim), dim) = w.token_embedding.row(ids[t]);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    for (int t = 0; t < n; ++t) rmsnorm(row(xb, t, dim), row(x, t, dim), lw.rms_att.data(), dim, c.rms_norm_eps);
    lin.linear_batch(l, MatrixKind::wq, n, xb.data(), dim, q.data(), qd);
    lin.linear_batch(l, MatrixKind::wk, n, xb.data(), dim, k.data(), kvd);
    lin.linear_batch(l, MatrixKind::wv, n, xb.data(), dim, v.data(), kvd);
    add_bias_rows(q, qd, lw.bq);
    add_bias_rows(k, kvd, lw.bk);
    add_bias_rows(v, kvd, lw.bv);
    for (int t = 0; t < n; ++t) {
      norm_heads(row(q, t, qd), lw.q_norm, c.n_heads, hd, c.rms_norm_eps);
      norm_heads(row(k, t, kvd), lw.k_norm, c.n_kv_heads, hd, c.rms_norm_eps);
      rope(row(q, t, qd), row(k, t, kvd), pos[t], c);
    }
    // causal: a row's K and V are written before its queries, after those of the rows before it
    for (int t = 0; t < n; ++t) {
      attn[t]->write_kv(l, pos[t], row(k, t, kvd), row(v, t, kvd));
      for (int h = 0; h < c.n_heads; ++h) attn[t]->attend(l, h, pos[t], row(q, t, qd) + h * hd, row(xa, t, qd) + h * hd);
    }
    lin.linear_batch(l, MatrixKind::wo, n, xa.data(), qd, xb2.data(), dim);
    add_bias_rows(xb2, dim, lw.bo);
    for (size_t i = 0; i < N * dim; ++i) x[i] += xb2[i];
    for (int t = 0; t < n; ++t) rmsnorm(row(xb, t, dim), row(x, t, dim), lw.rms_ffn.data(), dim, c.rms_norm_eps);
    lin.linear_batch(l, MatrixKind::w1, n, xb.data(), dim, hb.data(), hid);
    lin.linear_batch(l, MatrixKind::w3, n, xb.data(), dim, hb2.data(), hid);
    for (size_t i = 0; i < N * hid; ++i) {
      const float g = hb[i];
      hb[i] = g * (1.0f / (1.0f + std::exp(-g))) * hb2[i];
    }
    lin.linear_batch(l, MatrixKind::w2, n, hb.data(), hid, xb.data(), dim);
    for (size_t i = 0; i < N * dim; ++i) x[i] += xb[i];
  }
  for (int t = 0; t < n; ++t) rmsnorm(row(x, t, dim), row(x, t, dim), w.rms_final.data(), dim, c.rms_norm_eps);
  if (!classify) return out.swap(x);
  out.resize(N * c.vocab_size);
  lin.linear_batch(0, MatrixKind::classifier, n, x.data(), dim, out.data(), c.vocab_size);
}

}  // namespace

void forward_sequence(const Config& c, const Weights& w, Backend& be, const int* ids, int pos0, int n,
                      std::vector<float>& logits, bool classify) {
  if (n < 0 || pos0 < 0 || pos0 + n > c.seq_len)
    throw Error("forward_sequence: positions " + std::to_string(pos0) + " .. " + std::to_string(pos0 + n - 1) +
                ": outside the context of " + std::to_string(c.seq_len) + " tokens");
  std::vector<int> pos(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) pos[t] = pos0 + t;
  const std::vector<Backend*> attn(static_cast<size_t>(n), &be);
  forward_rows(c, w, be, attn.data(), ids, pos.data(), n, logits, classify);
}

void forward_streams(const Config& c, const Weights& w, const std::vector<Backend*>& streams, const int* ids,
                     int pos, std::vector<float>& logits) {
  if (streams.empty()) return logits.clear();
  const std::vector<int> at(streams.size(), pos);
  forward_streams(c, w, streams, ids, at.data(), logits);
}

void forward_streams(const Config& c, const Weights& w, const std::vector<Backend*>& streams, const int* ids,
                     const int* pos, std::vector<float>& logits) {
  if (streams.empty()) return logits.clear();
  forward_rows(c, w, *streams[0], streams.data(), ids, pos, static_cast<int>(streams.size()), logits);
}

// ---- the float reference backend -----------------------------------------------------------

ReferenceBackend::ReferenceBackend(const Config& config, const Weights& weights)
    : config_(config), weights_(weights), cache_(config) {}

void ReferenceBackend::linear(int layer, MatrixKind kind, const float* x, float* y) {
  const WeightMatrix& W = weights_.matrix(layer, kind);
  gemv_f32(W.data(), W.cols(), x, y, static_cast<int>(W.rows()), static_cast<int>(W.cols()));
}

namespace {
struct BatchGemv {
  const WeightMatrix* W;
  int n, in, out, rows_per_block;
  bool streamed;
  const float* x;
  float* y;
};
}  // namespace

void ReferenceBackend::linear_batch(int layer, MatrixKind kind, int n, const float* x, int in, float* y, int out) {
  const WeightMatrix& W = weights_.matrix(layer, kind);
  const int rows = static_cast<int>(W.rows()), cols = static_cast<int>(W.cols());
  // Blocks of rows of about 64 KiB, each run over every input while it is in cache; a row's dot
  // product is gemv_f32's whichever rows surround it, so the floats are linear()'s. Streamed,
  // each block's pages are mapped before its pass and given back after it: the floats held are
  // the blocks in flight on the two threads, not the matrix (a classifier is 37 MB of the 15M
  // shape's 61 MB).
  const int per_block = std::max(1, (64 << 10) / (cols * 4));
  BatchGemv job{&W, n, in, out, per_block, streamed_, x, y};
  const int blocks = (rows + per_block - 1) / per_block;
  parallel_rows(blocks, int64_t{rows} * cols * n, [](void* ctx, int b0, int b1) {
    const auto& j = *static_cast<const BatchGemv*>(ctx);
    const int64_t cols = j.W->cols();
    for (int b = b0; b < b1; ++b) {
      const int r0 = b * j.rows_per_block;
      const int r1 = std::min(r0 + j.rows_per_block, j.out);
      if (j.streamed) j.W->populate_pages(r0, r1 - r0);
      gemv_f32_inputs(j.W->data() + static_cast<size_t>(r0) * cols, cols, j.x, j.in, j.n, j.y + r0, j.out, r1 - r0,
                      static_cast<int>(cols));
      if (j.streamed) j.W->release_pages(r0, r1 - r0);
    }
  }, &job);
  if (streamed_) W.release_pages();  // the pages a block shared with its neighbour, now both are done
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
