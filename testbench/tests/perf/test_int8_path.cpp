// The int8 path of docs/performance.md: every GEMV kernel the CPU runs equals a plain scalar
// integer product (int64, unpadded, written here) bit for bit, on shapes that hit every vector
// tail and row tail and on the extreme codes; the quantised linear layer equals runtime::CimLinear
// on digital macros float for float; the Int8Backend's whole forward pass equals the session's
// CIM-linear backend logit for logit; and it stays close to the float reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/int8_backend.hpp"
#include "kvcim/cmodel/quant/int8_gemv.hpp"
#include "kvcim/error.hpp"
#include "kvcim/runtime/cim_linear.hpp"
#include "kvcim/runtime/session_backend.hpp"
#include "test_paths.hpp"
#include "random_matrix.hpp"

using namespace kvcim::cmodel;
using namespace kvcim::cmodel::quant;

using kvcim::test::random_matrix;

namespace {

// The definition: y[o] = sum_c W[o][c] x[c] over the unpadded codes, in int64 so that it cannot
// overflow whatever the kernels do.
std::vector<int64_t> scalar_gemv(const QuantizedMatrix& w, const std::vector<int8_t>& x) {
  std::vector<int64_t> y(w.rows, 0);
  for (int o = 0; o < w.rows; ++o)
    for (int c = 0; c < w.cols; ++c) y[o] += int64_t{w.q[static_cast<size_t>(o) * w.cols + c]} * x[c];
  return y;
}

QuantizedMatrix random_codes(int rows, int cols, std::mt19937& g, int lo = -128, int hi = 127) {
  std::uniform_int_distribution<int> d(lo, hi);
  QuantizedMatrix q;
  q.rows = rows;
  q.cols = cols;
  q.q.resize(static_cast<size_t>(rows) * cols);
  for (auto& v : q.q) v = static_cast<int8_t>(d(g));
  q.scale.assign(rows, 1.0f);
  return q;
}

std::vector<int8_t> random_vector(int n, std::mt19937& g, int lo = -128, int hi = 127) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> x(n);
  for (auto& v : x) v = static_cast<int8_t>(d(g));
  return x;
}

void expect_kernels_equal_scalar(const QuantizedMatrix& q, const std::vector<int8_t>& x,
                                 const std::string& what) {
  const Int8Matrix m(q);
  const std::vector<int64_t> want = scalar_gemv(q, x);
  for (GemvKernel k : available_kernels()) {
    std::vector<int32_t> got(q.rows, 0x5a5a5a5a);
    gemv(m, x.data(), got.data(), k);
    for (int o = 0; o < q.rows; ++o)
      ASSERT_EQ(int64_t{got[o]}, want[o]) << what << " kernel " << name(k) << " row " << o;
  }
}

}  // namespace

TEST(Int8Gemv, PortableIsAlwaysAvailableAndBestIsAvailable) {
  const auto ks = available_kernels();
  ASSERT_FALSE(ks.empty());
  EXPECT_EQ(ks.front(), GemvKernel::portable);
  EXPECT_TRUE(kernel_available(best_kernel()));
  EXPECT_EQ(best_kernel(), ks.back());
  // Say which kernels ran, so that a log shows what the equality tests covered.
  std::string names;
  for (GemvKernel k : ks) names += std::string(name(k)) + " ";
  RecordProperty("kernels", names);
  std::printf("int8 GEMV kernels on this CPU: %s\n", names.c_str());
}

// Shapes around the 64-code vector, the 16-code AVX2 step and the four-row pass.
TEST(Int8Gemv, EveryKernelEqualsScalarOnAllTails) {
  std::mt19937 g(7);
  for (int rows : {1, 2, 3, 4, 5, 7, 8, 9, 13})
    for (int cols : {1, 15, 16, 17, 63, 64, 65, 127, 128, 200, 768}) {
      const QuantizedMatrix q = random_codes(rows, cols, g);
      expect_kernels_equal_scalar(q, random_vector(cols, g),
                                  std::to_string(rows) + "x" + std::to_string(cols));
    }
}

// The largest magnitudes at the widest allowed row: every product +-2^14 (or the VNNI kernel's
// unsigned offset at its extreme, 255 * -128) summed over 65536 columns must not wrap.
TEST(Int8Gemv, ExtremeCodesAtTheWidestRowDoNotOverflow) {
  const int cols = kMaxGemvCols;
  std::mt19937 g(11);
  struct Case { int w, x; };
  for (Case c : {Case{-128, -128}, Case{-128, 127}, Case{127, -128}, Case{127, 127}, Case{-128, 0}}) {
    QuantizedMatrix q = random_codes(5, cols, g);
    std::fill(q.q.begin(), q.q.begin() + 4 * static_cast<size_t>(cols), static_cast<int8_t>(c.w));
    std::vector<int8_t> x(cols, static_cast<int8_t>(c.x));
    expect_kernels_equal_scalar(q, x, "w=" + std::to_string(c.w) + " x=" + std::to_string(c.x));
  }
}

TEST(Int8Gemv, MatrixLayoutPadsRowsAndKeepsCodesAndSums) {
  std::mt19937 g(3);
  const QuantizedMatrix q = random_codes(3, 70, g);
  const Int8Matrix m(q);
  EXPECT_EQ(m.stride(), 128);
  EXPECT_EQ(m.bytes(), 3 * 128 + 3 * 4);
  for (int r = 0; r < 3; ++r) {
    int32_t sum = 0;
    for (int c = 0; c < 70; ++c) {
      EXPECT_EQ(m.code(r, c), q.q[r * 70 + c]);
      sum += q.q[r * 70 + c];
    }
    for (int c = 70; c < 128; ++c) EXPECT_EQ(m.code(r, c), 0) << "padding must be zero codes";
    EXPECT_EQ(m.row_sums()[r], sum);
  }
}

// Built from a temporary, a matrix whose rows need no padding takes the codes without a copy;
// either way it holds what the copying constructor holds. Bad sizes are errors on both paths.
TEST(Int8Gemv, MatrixFromATemporaryEqualsTheCopy) {
  std::mt19937 g(5);
  for (int cols : {64, 70, 128, 192}) {
    const QuantizedMatrix q = random_codes(4, cols, g);
    const Int8Matrix copied(q);
    QuantizedMatrix t = q;
    const int8_t* storage = t.q.data();
    const Int8Matrix moved(std::move(t));
    ASSERT_EQ(moved.stride(), copied.stride()) << cols;
    EXPECT_EQ(moved.row(0) == storage, cols % 64 == 0) << cols;
    EXPECT_EQ(moved.row_sums(), copied.row_sums()) << cols;
    EXPECT_EQ(moved.scale(), copied.scale()) << cols;
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < moved.stride(); ++c) ASSERT_EQ(moved.code(r, c), copied.code(r, c)) << cols;
  }
  QuantizedMatrix bad = random_codes(2, 64, g);
  bad.scale.pop_back();
  EXPECT_THROW(Int8Matrix{std::move(bad)}, kvcim::Error);
}

// Quantised straight into caller storage (Int8Backend's one block per model): the codes, scales
// and sums of quantize_weights, the padding zeroed whatever the storage held, the storage shared.
TEST(Int8Gemv, MatrixQuantisedIntoStorageEqualsQuantizeWeights) {
  std::mt19937 g(9);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (int cols : {64, 70, 130}) {
    Matrix w(5, cols);
    for (int64_t i = 0; i < w.size(); ++i) w.data()[i] = d(g);
    const Int8Matrix ref(quantize_weights(w, 8));
    std::shared_ptr<int8_t[]> block(new int8_t[5 * Int8Matrix::padded_stride(cols) + 3]);
    std::fill(block.get(), block.get() + 5 * Int8Matrix::padded_stride(cols) + 3, int8_t{0x55});
    const Int8Matrix m(w, 8, std::shared_ptr<int8_t>(block, block.get() + 3));
    EXPECT_EQ(m.row(0), block.get() + 3);
    ASSERT_EQ(m.stride(), ref.stride());
    EXPECT_EQ(m.scale(), ref.scale());
    EXPECT_EQ(m.row_sums(), ref.row_sums());
    for (int r = 0; r < 5; ++r)
      for (int c = 0; c < m.stride(); ++c) ASSERT_EQ(m.code(r, c), ref.code(r, c)) << cols << " " << r << " " << c;
  }
}

TEST(Int8Gemv, RejectsTooWideRowsAndInconsistentSizes) {
  QuantizedMatrix q;
  q.rows = 1;
  q.cols = kMaxGemvCols + 1;
  q.q.assign(q.cols, 0);
  q.scale.assign(1, 1.0f);
  try {
    Int8Matrix m(q);
    FAIL() << "a row wider than kMaxGemvCols was accepted";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cols = 65537"), std::string::npos) << e.what();
  }
  q.cols = 4;  // 65537 codes for 1 x 4
  EXPECT_THROW(Int8Matrix{q}, kvcim::Error);
}

// Int8Linear = CimLinear on digital macros, float for float: the same codes, the same exact
// integer sums (here through the macros' own fast path, blocks of 64 rows and a few outputs),
// the same dequantisation order. Also with off-chip blocks and with narrower codes.
TEST(Int8Linear, EqualsCimLinearOnDigitalMacros) {
  std::mt19937 g(5);
  struct Case { int rows, cols, bits; bool offchip; };
  for (Case c : {Case{37, 100, 8, false}, Case{64, 288, 8, true}, Case{130, 65, 4, false},
                 Case{9, 768, 6, true}}) {
    const Matrix w = random_matrix(c.rows, c.cols, g);
    cim::MacroSpec spec;
    spec.kind = cim::MacroKind::digital;
    spec.rows = 64;
    spec.cols = 64;
    spec.weight_bits = c.bits;
    spec.input_bits = c.bits;
    std::vector<kvcim::runtime::Block> blocks = kvcim::runtime::tile_blocks(c.cols, c.rows, spec);
    if (c.offchip)
      for (size_t b = 0; b < blocks.size(); b += 2) blocks[b].onchip = false;
    kvcim::runtime::CimLinear cim(w, spec, blocks);
    for (GemvKernel k : available_kernels()) {
      Int8Linear lin(w, c.bits, c.bits, k);
      for (int trial = 0; trial < 3; ++trial) {
        std::normal_distribution<float> d(0.0f, trial == 2 ? 100.0f : 1.0f);
        std::vector<float> x(c.cols);
        for (auto& v : x) v = d(g);
        std::vector<float> want(c.rows), got(c.rows);
        kvcim::runtime::LinearEvents ev;
        cim.apply(x.data(), want.data(), ev);
        lin.apply(x.data(), got.data());
        for (int o = 0; o < c.rows; ++o)
          ASSERT_EQ(got[o], want[o]) << c.rows << "x" << c.cols << " bits " << c.bits << " kernel "
                                     << name(k) << " output " << o;
      }
    }
  }
}

TEST(Int8Linear, RejectsBadWidthsAndSizes) {
  std::mt19937 g(1);
  const Matrix w = random_matrix(4, 8, g);
  EXPECT_THROW(Int8Linear(w, 9, 8), kvcim::Error);
  EXPECT_THROW(Int8Linear(w, 8, 1), kvcim::Error);
  Int8Linear lin(w, 8, 8);
  QuantizedVector x;
  x.q.assign(7, 1);
  std::vector<float> y(4);
  EXPECT_THROW(lin.apply(x, y.data()), kvcim::Error);
}

namespace {

// Logits of `positions` decode steps of a backend over a checkpoint.
std::vector<Vector> decode(const Checkpoint& ck, Backend& be, int positions) {
  RunState s(ck.config);
  std::vector<Vector> out;
  for (int pos = 0; pos < positions; ++pos) {
    const int token = (pos * 37 + 1) % ck.config.vocab_size;
    out.push_back(forward(ck.config, ck.weights, s, be, token, pos));
  }
  return out;
}

}  // namespace

// The whole forward pass: Int8Backend = the runtime's backend with every matrix on digital CIM
// macros and attention on the float reference, logit for logit, on the embedded model and on a
// random GQA model with a separate classifier.
TEST(Int8Backend, ForwardEqualsSessionBackendWithDigitalCimLinears) {
  Checkpoint embedded = read_checkpoint(kvcim::test::model_path());
  Checkpoint gqa;
  gqa.config = Config{96, 160, 2, 6, 2, 300, 32, false};
  gqa.weights = random_weights(gqa.config, 99);
  for (const Checkpoint* ck : {&embedded, &gqa}) {
    cim::MacroSpec spec;
    spec.kind = cim::MacroKind::digital;
    spec.rows = 64;
    spec.cols = 128;
    auto blocks = [&](int layer, MatrixKind kind) {
      const WeightMatrix& m = ck->weights.matrix(layer, kind);
      return kvcim::runtime::tile_blocks(static_cast<int>(m.cols()), static_cast<int>(m.rows()), spec);
    };
    kvcim::runtime::SessionBackend session(
        ck->config, ck->weights,
        {kvcim::runtime::BackendKind::cim, kvcim::runtime::BackendKind::reference}, spec, blocks,
        nullptr);
    Int8Backend fast(ck->config, ck->weights);
    const int positions = std::min(12, ck->config.seq_len);
    const auto want = decode(*ck, session, positions);
    const auto got = decode(*ck, fast, positions);
    for (int p = 0; p < positions; ++p)
      for (int i = 0; i < ck->config.vocab_size; ++i)
        ASSERT_EQ(got[p][i], want[p][i]) << "position " << p << " logit " << i;
  }
}

// Not a bit-for-bit property but a sanity bound: 8-bit weights and activations keep the logits
// of the embedded model near the float reference's and pick the same next token nearly always.
TEST(Int8Backend, StaysCloseToTheFloatReference) {
  Checkpoint ck = read_checkpoint(kvcim::test::model_path());
  ReferenceBackend ref(ck.config, ck.weights);
  Int8Backend fast(ck.config, ck.weights);
  const int positions = 24;
  const auto want = decode(ck, ref, positions);
  const auto got = decode(ck, fast, positions);
  int same_top = 0;
  for (int p = 0; p < positions; ++p) {
    const float rel = (got[p] - want[p]).norm() / want[p].norm();
    EXPECT_LT(rel, 0.1f) << "position " << p;
    EXPECT_GT(rel, 0.0f) << "position " << p << ": int8 logits identical to float (quantisation skipped?)";
    Eigen::Index a, b;
    got[p].maxCoeff(&a);
    want[p].maxCoeff(&b);
    same_top += a == b;
  }
  EXPECT_GE(same_top, positions * 3 / 4);
}

TEST(Int8Backend, ResetStartsANewSequence) {
  Checkpoint ck = read_checkpoint(kvcim::test::model_path());
  Int8Backend fast(ck.config, ck.weights);
  const auto first = decode(ck, fast, 5);
  fast.reset();
  const auto again = decode(ck, fast, 5);
  for (int p = 0; p < 5; ++p) EXPECT_EQ(first[p], again[p]) << "position " << p;
  // one int8 code per weight, rows padded to 64 codes, one float scale per output row
  const Config& c = ck.config;
  auto bytes = [](int64_t rows, int64_t cols) { return rows * ((cols + 63) / 64 * 64) + rows * 4; };
  const int64_t per_layer = bytes(c.dim, c.dim) + 2 * bytes(c.kv_dim(), c.dim) + bytes(c.dim, c.dim) +
                            2 * bytes(c.hidden_dim, c.dim) + bytes(c.dim, c.hidden_dim);
  EXPECT_EQ(fast.weight_bytes(), c.n_layers * per_layer + bytes(c.vocab_size, c.dim));
}
