// The reference GEMV: close to a double-precision dot product for every shape (tails of 1-15
// columns included), and the same floats, bit for bit, on one thread and on two. The int8 GEMV
// and the int8 backend's quantisation share the two threads (parallel_rows): the same integers
// and codes on one thread and on two, every kernel, and an error in a job reaches the caller.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/cmodel/int8_backend.hpp"
#include "kvcim/cmodel/quant/int8_gemv.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/error.hpp"

using namespace kvcim::cmodel;

namespace {

struct Case {
  std::vector<float> w, x;
  int rows, cols;
};

Case make(int rows, int cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Case c{std::vector<float>(size_t(rows) * cols), std::vector<float>(cols), rows, cols};
  for (float& v : c.w) v = u(rng);
  for (float& v : c.x) v = u(rng);
  return c;
}

// Restores the thread settings whatever a test does.
struct ThreadSettings {
  int threads = gemv_threads();
  int64_t min = gemv_parallel_min();
  ~ThreadSettings() {
    set_gemv_threads(threads);
    set_gemv_parallel_min(min);
  }
};

// A small model shape with grouped KV heads and a hidden size that is not a multiple of 8.
Config small_config(int n_layers) {
  Config c;
  c.dim = 64, c.hidden_dim = 172, c.n_layers = n_layers, c.n_heads = 8, c.n_kv_heads = 4;
  c.vocab_size = 300, c.seq_len = 16;
  return c;
}

}  // namespace

TEST(Gemv, MatchesDoublePrecisionForEveryTail) {
  for (int cols : {1, 7, 8, 9, 15, 16, 17, 31, 64, 172, 288, 301}) {
    const Case c = make(37, cols, 7 + cols);
    std::vector<float> y(c.rows);
    gemv_f32_serial(c.w.data(), cols, c.x.data(), y.data(), c.rows, cols);
    for (int r = 0; r < c.rows; ++r) {
      double ref = 0.0, mag = 0.0;
      for (int j = 0; j < cols; ++j) {
        ref += double(c.w[size_t(r) * cols + j]) * c.x[j];
        mag += std::abs(double(c.w[size_t(r) * cols + j]) * c.x[j]);
      }
      // float32 summation of `cols` terms: a few ulps of the sum of magnitudes
      EXPECT_NEAR(y[r], ref, 1e-6 * mag + 1e-7) << "cols " << cols << " row " << r;
    }
  }
}

TEST(Gemv, TwoThreadsGiveTheSameFloatsAsOne) {
  ThreadSettings restore;
  set_gemv_parallel_min(0);  // split even small matrices
  for (auto [rows, cols] : {std::pair{32, 64}, {33, 172}, {768, 288}, {1000, 301}, {4099, 96}}) {
    const Case c = make(rows, cols, 99 + rows);
    std::vector<float> one(rows), two(rows, -1.0f);
    set_gemv_threads(1);
    gemv_f32(c.w.data(), cols, c.x.data(), one.data(), rows, cols);
    set_gemv_threads(2);
    for (int rep = 0; rep < 20; ++rep) {  // many jobs in a row: the helper's hand-over
      gemv_f32(c.w.data(), cols, c.x.data(), two.data(), rows, cols);
      ASSERT_EQ(std::memcmp(one.data(), two.data(), sizeof(float) * rows), 0)
          << rows << "x" << cols << " repetition " << rep;
    }
  }
}

TEST(Gemv, ManyInputsGiveEachInputsFloatsBitForBit) {
  // gemv_f32_inputs (two rows by two inputs at a time, the odd row and input alone) against
  // gemv_f32_serial one input at a time: every tail of columns, odd and even counts of rows and
  // inputs, strided inputs and outputs.
  for (int cols : {1, 7, 8, 9, 15, 16, 17, 24, 31, 288, 301})
    for (int rows : {1, 2, 5, 36})
      for (int n : {1, 2, 3, 6}) {
        const Case c = make(rows, cols, 11 + cols * 7 + rows * 3 + n);
        const int xs = cols + 3, ys = rows + 2;  // strides wider than a row: the gaps never read
        std::vector<float> X(size_t(n) * xs, std::nanf("")), want(size_t(n) * ys, -7.0f), got(want);
        std::mt19937_64 rng(cols + rows + n);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (int t = 0; t < n; ++t)
          for (int j = 0; j < cols; ++j) X[size_t(t) * xs + j] = u(rng);
        for (int t = 0; t < n; ++t)
          gemv_f32_serial(c.w.data(), cols, X.data() + size_t(t) * xs, want.data() + size_t(t) * ys, rows, cols);
        gemv_f32_inputs(c.w.data(), cols, X.data(), xs, n, got.data(), ys, rows, cols);
        ASSERT_EQ(std::memcmp(want.data(), got.data(), sizeof(float) * want.size()), 0)
            << rows << "x" << cols << ", " << n << " inputs";
      }
}

TEST(Gemv, ModelLogitsDoNotDependOnThreads) {
  ThreadSettings restore;
  set_gemv_parallel_min(0);
  const Config c = small_config(2);
  const std::vector<int> tokens{1, 5, 77, 299, 3, 42};
  auto logits = [&](int threads) {
    set_gemv_threads(threads);
    Model m(Checkpoint{c, random_weights(c, 5), "random"});
    return m.logits(tokens);
  };
  const Matrix a = logits(1), b = logits(2);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(float) * a.size()), 0);
}

// The vectorised attention (polynomial exp, 8-lane sums) against the scalar reference (std::exp,
// sequential sums): weights and outputs within 1e-5 relative, for head sizes with and without a
// fast path and lengths with every tail; weights sum to 1.
TEST(Attention, VectorisedMatchesScalarReference) {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (int hd : {4, 8, 16, 24, 48, 64, 72, 128}) {
    for (int n : {1, 2, 7, 8, 9, 31, 200}) {
      std::vector<float> q(hd), k(size_t(n) * hd), v(size_t(n) * hd);
      for (float& x : q) x = 3.0f * g(rng);  // large scores: a peaked softmax too
      for (float& x : k) x = g(rng);
      for (float& x : v) x = g(rng);
      const float scale = 1.0f / std::sqrt(float(hd));
      std::vector<float> a1(n), a2(n), o1(hd), o2(hd);
      attend_f32(q.data(), k.data(), v.data(), n, hd, scale, a1.data(), o1.data());
      attend_f32_scalar(q.data(), k.data(), v.data(), n, hd, scale, a2.data(), o2.data());
      double total = 0.0;
      for (int t = 0; t < n; ++t) {
        EXPECT_NEAR(a1[t], a2[t], 1e-5f * a2[t] + 1e-7f) << "hd " << hd << " n " << n << " t " << t;
        total += a1[t];
      }
      EXPECT_NEAR(total, 1.0, 1e-5);
      float mag = 0.0f;
      for (float x : o2) mag = std::max(mag, std::abs(x));
      for (int i = 0; i < hd; ++i)
        EXPECT_NEAR(o1[i], o2[i], 1e-5f * (mag + 1.0f)) << "hd " << hd << " n " << n << " i " << i;
    }
  }
}

TEST(Int8Gemv, TwoThreadsGiveTheSameSumsAsOneForEveryKernel) {
  ThreadSettings restore;
  set_gemv_parallel_min(0);
  for (quant::GemvKernel kernel : quant::available_kernels()) {
    for (auto [rows, cols] : {std::pair{32, 64}, {33, 172}, {768, 288}, {1001, 301}}) {
      const Case c = make(rows, cols, 7 * rows + cols);
      Matrix W(rows, cols);
      std::memcpy(W.data(), c.w.data(), sizeof(float) * c.w.size());  // row-major Matrix
      const quant::Int8Matrix m(quant::quantize_weights(W, 8));
      std::vector<int8_t> x(cols);
      for (int j = 0; j < cols; ++j) x[j] = static_cast<int8_t>(int(c.x[j] * 127.0f));
      std::vector<int32_t> one(rows), two(rows, -1);
      set_gemv_threads(1);
      quant::gemv(m, x.data(), one.data(), kernel);
      // the definition, row by row
      for (int r = 0; r < rows; ++r) {
        int64_t ref = 0;
        for (int j = 0; j < cols; ++j) ref += int64_t{m.code(r, j)} * x[j];
        ASSERT_EQ(one[r], ref) << quant::name(kernel) << " row " << r;
      }
      set_gemv_threads(2);
      for (int rep = 0; rep < 10; ++rep) {
        quant::gemv(m, x.data(), two.data(), kernel);
        ASSERT_EQ(one, two) << quant::name(kernel) << " " << rows << "x" << cols << " rep " << rep;
      }
    }
  }
}

TEST(Int8Backend, QuantisedOnTwoThreadsLikeOnOne) {
  ThreadSettings restore;
  set_gemv_parallel_min(0);
  const Config c = small_config(5);
  const Weights w = random_weights(c, 11);
  set_gemv_threads(1);
  const Int8Backend one(c, w);
  set_gemv_threads(2);
  const Int8Backend two(c, w);  // 36 matrices: split between the threads
  for (int l = 0; l < c.n_layers; ++l)
    for (MatrixKind k : {MatrixKind::wq, MatrixKind::wk, MatrixKind::wv, MatrixKind::wo,
                         MatrixKind::w1, MatrixKind::w2, MatrixKind::w3, MatrixKind::classifier}) {
      const quant::Int8Matrix &a = one.matrix(l, k).matrix(), &b = two.matrix(l, k).matrix();
      ASSERT_EQ(a.rows(), b.rows());
      ASSERT_EQ(a.scale(), b.scale());
      for (int r = 0; r < a.rows(); ++r)
        ASSERT_EQ(std::memcmp(a.row(r), b.row(r), a.stride()), 0) << "layer " << l << " row " << r;
    }
  // An error while quantising on either thread reaches the caller, and the threads still work.
  EXPECT_THROW(Int8Backend(c, w, 8, 0), kvcim::Error);
  const Int8Backend again(c, w);
  EXPECT_EQ(again.matrix(4, MatrixKind::w2).matrix().scale(), one.matrix(4, MatrixKind::w2).matrix().scale());
}
