// The cached forward pass against a second, deliberately naive implementation written from the
// math (plain loops, no KV cache: every position's K and V recomputed from scratch), on random
// checkpoints of several shapes: MHA and GQA, shared and separate classifiers, odd sizes. This
// catches what the golden model cannot (it has a shared classifier and one GQA ratio).
#include <gtest/gtest.h>

#include <cmath>

#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/error.hpp"

using namespace kvcim::cmodel;

namespace {

using Vec = std::vector<float>;

Vec matvec(MatrixRef W, const Vec& x) {
  Vec y(W.rows(), 0.0f);
  for (int r = 0; r < W.rows(); ++r) {
    double acc = 0;
    for (int c = 0; c < W.cols(); ++c) acc += double(W(r, c)) * x[c];
    y[r] = float(acc);
  }
  return y;
}

Vec norm(const Vec& x, const Vector& w) {
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double inv = 1.0 / std::sqrt(ss / x.size() + 1e-5);
  Vec o(x.size());
  for (size_t i = 0; i < x.size(); ++i) o[i] = float(w[i] * x[i] * inv);
  return o;
}

// rotate each head's pairs (2j, 2j+1) by angle pos * 10000^(-2j/head_dim)
void rotate(Vec& v, int pos, int head_dim) {
  for (size_t i = 0; i < v.size(); i += 2) {
    const int j = static_cast<int>(i % head_dim) / 2;
    const double angle = pos * std::pow(10000.0, -2.0 * j / head_dim);
    const double a = v[i], b = v[i + 1];
    v[i] = float(a * std::cos(angle) - b * std::sin(angle));
    v[i + 1] = float(a * std::sin(angle) + b * std::cos(angle));
  }
}

// Logits at the last of `tokens`, recomputing everything from position 0.
Vec naive_logits(const Config& c, const Weights& w, const std::vector<int>& tokens) {
  const int n = tokens.size(), hd = c.dim / c.n_heads;
  std::vector<Vec> x(n);
  for (int p = 0; p < n; ++p) x[p] = Vec(w.token_embedding.row(tokens[p]).data(),
                                         w.token_embedding.row(tokens[p]).data() + c.dim);
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    std::vector<Vec> q(n), k(n), v(n);
    for (int p = 0; p < n; ++p) {
      Vec h = norm(x[p], lw.rms_att);
      q[p] = matvec(lw.wq, h), k[p] = matvec(lw.wk, h), v[p] = matvec(lw.wv, h);
      rotate(q[p], p, hd);
      rotate(k[p], p, hd);
    }
    for (int p = 0; p < n; ++p) {
      Vec att_out(c.dim, 0.0f);
      for (int h = 0; h < c.n_heads; ++h) {
        const int g = h * c.n_kv_heads / c.n_heads;  // the KV head this query head reads
        std::vector<double> s(p + 1);
        double mx = -1e300;
        for (int t = 0; t <= p; ++t) {
          double d = 0;
          for (int i = 0; i < hd; ++i) d += double(q[p][h * hd + i]) * k[t][g * hd + i];
          s[t] = d / std::sqrt(double(hd));
          mx = std::max(mx, s[t]);
        }
        double z = 0;
        for (double& e : s) z += (e = std::exp(e - mx));
        for (int t = 0; t <= p; ++t)
          for (int i = 0; i < hd; ++i) att_out[h * hd + i] += float(s[t] / z * v[t][g * hd + i]);
      }
      Vec o = matvec(lw.wo, att_out);
      for (int i = 0; i < c.dim; ++i) x[p][i] += o[i];
      Vec h2 = norm(x[p], lw.rms_ffn);
      Vec a = matvec(lw.w1, h2), b = matvec(lw.w3, h2);
      for (size_t i = 0; i < a.size(); ++i) a[i] = float(a[i] / (1.0 + std::exp(-double(a[i]))) * b[i]);
      Vec d = matvec(lw.w2, a);
      for (int i = 0; i < c.dim; ++i) x[p][i] += d[i];
    }
  }
  const WeightMatrix& cls = c.shared_classifier ? w.token_embedding : w.wcls;
  return matvec(cls, norm(x[n - 1], w.rms_final));
}

struct Shape {
  int dim, hidden, layers, heads, kv, vocab;
  bool shared;
};

}  // namespace

TEST(IndependentForward, AgreesOnRandomShapes) {
  const Shape shapes[] = {
      {16, 40, 2, 4, 4, 300, true},    // MHA, shared classifier
      {24, 61, 2, 6, 2, 289, false},   // GQA 3:1, separate classifier, odd sizes
      {32, 48, 3, 8, 1, 260, false},   // multi-query
      {12, 30, 1, 2, 1, 259, true},
  };
  uint64_t seed = 11;
  for (const Shape& s : shapes) {
    Config c;
    c.dim = s.dim, c.hidden_dim = s.hidden, c.n_layers = s.layers, c.n_heads = s.heads;
    c.n_kv_heads = s.kv, c.vocab_size = s.vocab, c.seq_len = 12, c.shared_classifier = s.shared;
    Weights w = random_weights(c, seed++);
    Model model(Checkpoint{c, w, "random"});
    std::vector<int> tokens;
    for (int p = 0; p < 9; ++p) tokens.push_back((p * 37 + 5) % s.vocab);
    Matrix logits = model.logits(tokens);
    for (int p : {0, 4, 8}) {
      std::vector<int> prefix(tokens.begin(), tokens.begin() + p + 1);
      Vec expected = naive_logits(c, w, prefix);
      float worst = 0, scale = 0;
      for (int v = 0; v < s.vocab; ++v) {
        worst = std::max(worst, std::abs(expected[v] - logits(p, v)));
        scale = std::max(scale, std::abs(expected[v]));
      }
      EXPECT_LE(worst, 1e-4f * scale + 1e-5f)
          << "shape dim=" << s.dim << " heads=" << s.heads << " kv=" << s.kv << " pos " << p;
    }
  }
}

TEST(KvCache, PositionsAreWrittenOnceInOrder) {
  Config c;
  c.dim = 8, c.hidden_dim = 8, c.n_layers = 1, c.n_heads = 2, c.n_kv_heads = 1, c.vocab_size = 300,
  c.seq_len = 4;
  KvCache cache(c);
  std::vector<float> k(c.kv_dim(), 1.0f), v(c.kv_dim(), 2.0f);
  cache.write(0, 0, k.data(), v.data());
  EXPECT_THROW(cache.write(0, 0, k.data(), v.data()), kvcim::Error);  // rewriting position 0
  EXPECT_THROW(cache.write(0, 2, k.data(), v.data()), kvcim::Error);  // skipping position 1
  cache.write(0, 1, k.data(), v.data());
  EXPECT_EQ(cache.length(0), 2);
  EXPECT_EQ(cache.value(0, 0, 1)[3], 2.0f);
  EXPECT_EQ(KvCache::bytes_per_token(c, 2), 2LL * 1 * 4 * 2);
}
