// Batched teacher-forced evaluation: a macro running many tokens at once (weights stationary)
// gives each token the bits it gets alone, keyed read noise included, in any order and against
// the bit-level reference; the forward pass over a chunk of positions gives the floats of one
// position at a time, on the float reference and on CIM macros with and without noise (fixed and
// exact noise models), whatever other sequences ran on the same macros before.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/runtime/session_backend.hpp"
#include "main_job.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;

namespace {

struct NamedSpec {
  std::string name;
  cim::MacroSpec spec;
};

std::vector<NamedSpec> macro_specs() {
  cim::MacroSpec base;
  base.rows = 96, base.cols = 64, base.rows_per_cycle = 32, base.input_bits = 8;
  std::vector<NamedSpec> out;
  out.push_back({"digital", base});
  base.kind = cim::MacroKind::analog;
  base.adc_bits = 5;  // step > 1 level: Gaussian read noise on the grid / in double
  out.push_back({"analog noise-free", base});
  for (cim::NoiseModel nm : {cim::NoiseModel::fixed, cim::NoiseModel::exact}) {
    const std::string tag = nm == cim::NoiseModel::fixed ? " fixed" : " exact";
    cim::MacroSpec s = base;
    s.noise_model = nm;
    s.read_noise_sigma = 0.4;
    out.push_back({"read noise" + tag, s});
    s.cell_noise_sigma = 0.3;
    out.push_back({"cell + read noise" + tag, s});
    s.read_noise_sigma = 0;
    out.push_back({"cell noise" + tag, s});
    s.cell_bits = 2, s.input_bits_per_cycle = 2, s.read_noise_sigma = 0.2, s.adc_bits = 8;
    out.push_back({"2-bit cells and DAC" + tag, s});
  }
  cim::MacroSpec r = base;  // read noise alone at a step of one level: the rounded draws
  r.rows_per_cycle = 16, r.input_bits_per_cycle = 2, r.adc_bits = 8, r.read_noise_sigma = 0.3;
  out.push_back({"rounded read noise", r});
  return out;
}

std::vector<Vector> per_position(const Config& c, const Weights& w, Backend& be, const std::vector<int>& ids) {
  RunState s(c);
  std::vector<Vector> rows;
  for (size_t p = 0; p < ids.size(); ++p) rows.push_back(forward(c, w, s, be, ids[p], static_cast<int>(p)));
  return rows;
}

// forward_sequence over `ids` in chunks of `chunk` positions
std::vector<float> in_chunks(const Config& c, const Weights& w, Backend& be, const std::vector<int>& ids, int chunk) {
  std::vector<float> all, part;
  for (int p0 = 0; p0 < static_cast<int>(ids.size()); p0 += chunk) {
    const int n = std::min(chunk, static_cast<int>(ids.size()) - p0);
    forward_sequence(c, w, be, ids.data() + p0, p0, n, part);
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

void expect_same_floats(const std::vector<Vector>& rows, const std::vector<float>& flat, const std::string& what) {
  const size_t V = static_cast<size_t>(rows.at(0).size());
  ASSERT_EQ(flat.size(), rows.size() * V) << what;
  size_t differ = 0;
  for (size_t p = 0; p < rows.size(); ++p)
    differ += std::memcmp(rows[p].data(), flat.data() + p * V, V * sizeof(float)) != 0;
  EXPECT_EQ(differ, 0u) << what << ": positions whose logits differ bit for bit";
}

std::vector<int> some_ids(const Config& c, int n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<int> ids{1};
  for (int i = 1; i < n; ++i) ids.push_back(static_cast<int>(g() % static_cast<uint64_t>(c.vocab_size)));
  return ids;
}

}  // namespace

TEST(BatchedMacro, BatchEqualsKeyedTokensInAnyOrderAndTheReference) {
  std::mt19937_64 g(3);
  for (const NamedSpec& ns : macro_specs()) {
    SCOPED_TRACE(ns.name);
    const cim::MacroSpec& s = ns.spec;
    const int rows = 80, outs = s.weights_per_row() - 1, n = 5;
    std::vector<int8_t> w(static_cast<size_t>(rows) * outs);
    std::uniform_int_distribution<int> wd(s.weight_min(), s.weight_max()), xd(s.input_min(), s.input_max());
    for (auto& v : w) v = static_cast<int8_t>(wd(g));
    std::vector<int32_t> x(static_cast<size_t>(n) * rows);
    for (auto& v : x) v = xd(g);
    std::copy_n(x.begin(), rows, x.begin() + 4 * rows);  // token 4 is token 0 again, with its key
    const std::vector<uint64_t> keys{7, 3, (uint64_t{1} << 36) + 5, 0, 7};  // a key twice: the same draws
    cim::Macro m(s), fresh(s);
    m.write_block(w.data(), rows, outs);
    fresh.write_block(w.data(), rows, outs);
    m.reset_events();
    std::vector<int64_t> y(static_cast<size_t>(n) * outs);
    m.compute_batch(x.data(), n, rows, y.data(), outs, keys.data());
    cim::MacroEvents want;
    for (int t = 0; t < n; ++t) want += cim::compute_events(s, rows, outs);
    EXPECT_EQ(m.events(), want);
    EXPECT_TRUE(std::equal(y.begin(), y.begin() + outs, y.begin() + 4 * outs)) << "one key, one set of draws";
    for (int t = n - 1; t >= 0; --t) {  // one at a time, in reverse, on the fast path and the bit-level one
      std::vector<int64_t> one(outs), ref(outs);
      m.compute_keyed(x.data() + static_cast<size_t>(t) * rows, rows, one.data(), outs, keys[t]);
      m.compute_reference_keyed(x.data() + static_cast<size_t>(t) * rows, rows, ref.data(), outs, keys[t]);
      EXPECT_TRUE(std::equal(one.begin(), one.end(), y.begin() + static_cast<std::ptrdiff_t>(t) * outs)) << t;
      EXPECT_EQ(ref, one) << t;
    }
    // keyed computes leave the generator where it was: the unkeyed draws are a fresh macro's
    std::vector<int64_t> a(outs), b(outs);
    m.compute(x.data(), rows, a.data(), outs);
    fresh.compute(x.data(), rows, b.data(), outs);
    EXPECT_EQ(a, b);
    {  // each token's rows read in place from a wider input (a matrix's block, CimLinear)
      const int stride = rows + 13, skip = 6;
      std::vector<int32_t> wide(static_cast<size_t>(n) * stride, s.input_max());  // outside: never read
      for (int t = 0; t < n; ++t)
        std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(t) * rows, rows,
                    wide.begin() + static_cast<std::ptrdiff_t>(t) * stride + skip);
      std::vector<int64_t> strided(static_cast<size_t>(n) * outs);
      m.compute_batch(wide.data() + skip, n, rows, strided.data(), outs, keys.data(), stride);
      EXPECT_EQ(strided, y) << "a strided batch differs from the packed one";
      EXPECT_THROW(m.compute_batch(wide.data(), n, rows, strided.data(), outs, keys.data(), rows - 1), Error);
    }
    {  // the input's bit-planes formed once for a wider input and read from the block's first word
      // (CimLinear: every macro of a row range shares them); the rows around the block hold the
      // largest input, so a block reading past its own rows shows
      const int before = 64, stride = before + rows + 57;
      std::vector<int32_t> wide(static_cast<size_t>(n) * stride, s.input_max());
      for (int t = 0; t < n; ++t)
        std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(t) * rows, rows,
                    wide.begin() + static_cast<std::ptrdiff_t>(t) * stride + before);
      std::vector<uint64_t> words;
      cim::Macro::form_input_planes(wide.data(), n, stride, stride, s.input_bits, words);
      const size_t nw = static_cast<size_t>(stride + 63) / 64;
      ASSERT_EQ(words.size(), static_cast<size_t>(n) * s.input_bits * nw);
      const cim::Macro::InputPlanes planes{words.data() + before / 64, nw * s.input_bits, nw, s.input_bits, 0};
      std::vector<int64_t> shared(static_cast<size_t>(n) * outs);
      m.compute_batch(wide.data() + before, n, rows, shared.data(), outs, keys.data(), stride, &planes);
      EXPECT_EQ(shared, y) << "a batch reading shared bit-planes differs from one forming its own";
      // Planes with an id: each token's popcount terms listed by the first call and read by the next
      // ones on these rows (CimLinear: the macros of a row range); a call on fewer rows lists anew.
      static uint64_t next_id = uint64_t{1} << 60;  // far from CimLinear's formations
      cim::Macro::InputPlanes named = planes;
      named.id = ++next_id;
      for (int pass = 0; pass < 2; ++pass) {
        std::vector<int64_t> listed(static_cast<size_t>(n) * outs);
        m.compute_batch(wide.data() + before, n, rows, listed.data(), outs, keys.data(), stride, &named);
        EXPECT_EQ(listed, y) << "pass " << pass << ": a batch on listed terms differs from one listing its own";
      }
      std::vector<int64_t> fewer(static_cast<size_t>(n) * outs), fewer_own(static_cast<size_t>(n) * outs);
      m.compute_batch(wide.data() + before, n, rows - 16, fewer.data(), outs, keys.data(), stride, &named);
      m.compute_batch(wide.data() + before, n, rows - 16, fewer_own.data(), outs, keys.data(), stride);
      EXPECT_EQ(fewer, fewer_own) << "a call on fewer rows read the terms listed for more";
      cim::Macro::InputPlanes narrow = planes;
      narrow.input_bits = s.input_bits - 1;
      EXPECT_THROW(m.compute_batch(wide.data() + before, n, rows, shared.data(), outs, keys.data(), stride, &narrow),
                   Error);
      narrow = planes;
      narrow.bit_stride = static_cast<size_t>(rows) / 64;  // fewer words than the block's rows
      EXPECT_THROW(m.compute_batch(wide.data() + before, n, rows, shared.data(), outs, keys.data(), stride, &narrow),
                   Error);
    }
    if (s.read_noise_sigma > 0) {  // the key chooses the draws
      std::vector<int64_t> other(static_cast<size_t>(n) * outs);
      const std::vector<uint64_t> shifted{8, 4, 6, 1, 9};
      m.compute_batch(x.data(), n, rows, other.data(), outs, shifted.data());
      EXPECT_NE(other, y);
    }
  }
  cim::Macro m(macro_specs()[0].spec);
  int32_t x = 0;
  int64_t y = 0;
  const uint64_t bad = uint64_t{1} << cim::Macro::kKeyBits;
  EXPECT_THROW(m.compute_batch(&x, 1, 1, &y, 1, &bad), Error);
}

TEST(BatchedForward, ReferenceChunksEqualPositionByPosition) {
  test::EmbeddedModel f;
  const Config& c = f.ck.config;
  const std::vector<int> ids = some_ids(c, 45, 1);
  ReferenceBackend one(c, f.ck.weights), batch(c, f.ck.weights);
  expect_same_floats(per_position(c, f.ck.weights, one, ids), in_chunks(c, f.ck.weights, batch, ids, 16), "reference");
  std::vector<float> out;
  EXPECT_THROW(forward_sequence(c, f.ck.weights, batch, ids.data(), c.seq_len - 2, 3, out), Error);
}

TEST(BatchedForward, CimChunksEqualPositionByPositionWhateverRanBefore) {
  test::EmbeddedModel f;
  const Config& c = f.ck.config;
  const Weights& w = f.ck.weights;
  const std::vector<int> ids = some_ids(c, 20, 2), other = some_ids(c, 12, 3);
  for (const NamedSpec& ns : macro_specs()) {
    // the macro test covers the others; these are the paths of whole runs
    if (ns.name.find("2-bit") != std::string::npos || ns.name.rfind("cell noise", 0) == 0 ||
        ns.name.rfind("read noise", 0) == 0)
      continue;
    SCOPED_TRACE(ns.name);
    cim::MacroSpec m = ns.spec;
    m.rows = 64, m.cols = 64;
    auto weights = std::make_shared<CimWeights>(c, w, m, [&](int layer, MatrixKind kind) {
      const WeightMatrix& wm = w.matrix(layer, kind);
      return tile_blocks(static_cast<int>(wm.cols()), static_cast<int>(wm.rows()), m);
    });
    auto tiles = [] { return std::make_unique<cim::CModelTile>(cim::TileParams{}); };
    SessionBackend single(c, w, {}, weights, tiles), before(c, w, {}, weights, tiles), batched(c, w, {}, weights, tiles);
    single.set_noise_stream(5);
    const std::vector<Vector> rows = per_position(c, w, single, ids);
    before.set_noise_stream(6);  // another sequence through the same macros first
    (void)per_position(c, w, before, other);
    batched.set_noise_stream(9);
    (void)in_chunks(c, w, batched, other, 5);
    batched.reset();
    batched.ledger() = energy::Ledger(c.n_layers);
    batched.set_noise_stream(5);
    expect_same_floats(rows, in_chunks(c, w, batched, ids, 8), ns.name);
    EXPECT_EQ(batched.ledger(), single.ledger());
    if (m.read_noise_sigma > 0) {  // another stream, other draws
      SessionBackend third(c, w, {}, weights, tiles);
      third.set_noise_stream(4);
      const std::vector<Vector> r4 = per_position(c, w, third, ids);
      bool differs = false;
      for (size_t p = 0; p < rows.size(); ++p) differs |= r4[p] != rows[p];
      EXPECT_TRUE(differs);
    }
  }
}

TEST(BatchedForward, StreamsSideBySideEqualEachAlone) {
  test::EmbeddedModel f;
  const Config& c = f.ck.config;
  const Weights& w = f.ck.weights;
  const std::vector<std::vector<int>> seqs{some_ids(c, 12, 4), some_ids(c, 12, 5), some_ids(c, 12, 6)};
  std::vector<std::unique_ptr<ReferenceBackend>> alone, together;
  std::vector<Backend*> streams;
  for (size_t j = 0; j < seqs.size(); ++j) {
    alone.push_back(std::make_unique<ReferenceBackend>(c, w));
    together.push_back(std::make_unique<ReferenceBackend>(c, w));
    streams.push_back(together.back().get());
  }
  std::vector<RunState> states(seqs.size(), RunState(c));
  std::vector<float> logits;
  size_t differ = 0;
  for (int pos = 0; pos < 12; ++pos) {
    std::vector<int> ids;
    for (const auto& s : seqs) ids.push_back(s[static_cast<size_t>(pos)]);
    forward_streams(c, w, streams, ids.data(), pos, logits);
    for (size_t j = 0; j < seqs.size(); ++j) {
      const Vector& one = forward(c, w, states[j], *alone[j], ids[j], pos);
      differ += std::memcmp(one.data(), logits.data() + j * static_cast<size_t>(c.vocab_size), sizeof(float) * c.vocab_size) != 0;
    }
  }
  EXPECT_EQ(differ, 0u);
}
