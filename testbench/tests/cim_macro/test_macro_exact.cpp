// Lossless settings compute the exact integer matrix-vector product: digital always, analog when
// the ADC has enough bits and there is no noise. Over random geometries (rows, cols, cell_bits
// 1..4, weight_bits 2..8, input widths and bits per cycle, signed and unsigned inputs,
// rows_per_cycle) and all three encodings, both the fast path and the bit-level reference must
// equal the product the test computes itself, and count exactly compute_events().
#include <gtest/gtest.h>

#include "macro_test_util.hpp"

using namespace macro_test;

namespace {

void check_random_cases(MacroKind kind, uint64_t seed, int cases) {
  std::mt19937_64 g(seed);
  for (int t = 0; t < cases; ++t) {
    const MacroSpec s = random_spec(g, kind);
    SCOPED_TRACE("case " + std::to_string(t) + " rows " + std::to_string(s.rows) + " cols " +
                 std::to_string(s.cols) + " cell_bits " + std::to_string(s.cell_bits) +
                 " weight_bits " + std::to_string(s.weight_bits) + " encoding " +
                 std::to_string(static_cast<int>(s.encoding)) + " input_bits " +
                 std::to_string(s.input_bits) + (s.input_signed ? "s" : "u") + " per cycle " +
                 std::to_string(s.input_bits_per_cycle) + " rows_per_cycle " +
                 std::to_string(s.rows_per_cycle) + " adc_bits " + std::to_string(s.adc_bits));
    Macro m(s);
    if (kind == MacroKind::analog) {
      ASSERT_EQ(s.adc_shift(), 0) << "the test spec must be lossless";
    }
    const int n_rows = pick(g, 1, s.rows);
    const int n_out = pick(g, 1, s.weights_per_row());
    std::vector<int8_t> w(static_cast<size_t>(n_rows) * n_out);
    for (auto& v : w) v = static_cast<int8_t>(random_value(g, wmin(s), wmax(s)));
    // Exercise every write entry point; they must leave the same cells.
    switch (t % 3) {
      case 0: m.write_block(w.data(), n_rows, n_out); break;
      case 1:
        for (int r = 0; r < n_rows; ++r) m.write_row(r, &w[static_cast<size_t>(r) * n_out], n_out);
        break;
      default:
        for (int o = 0; o < n_out; ++o) {
          std::vector<int8_t> col(n_rows);
          for (int r = 0; r < n_rows; ++r) col[r] = w[static_cast<size_t>(r) * n_out + o];
          m.write_column_group(o, col.data(), n_rows);
        }
    }
    for (int i = 0; i < 4; ++i) {
      const int r = pick(g, 0, n_rows - 1), o = pick(g, 0, n_out - 1);
      ASSERT_EQ(m.read(r, o), w[static_cast<size_t>(r) * n_out + o]);
    }
    std::vector<int32_t> x(n_rows);
    for (auto& v : x) v = random_value(g, xmin(s), xmax(s));
    const auto expect = exact_product(x, w, n_rows, n_out);

    m.reset_events();
    std::vector<int64_t> y_fast(n_out, -1), y_ref(n_out, -1);
    m.compute(x.data(), n_rows, y_fast.data(), n_out);
    const MacroEvents fast_events = m.events();
    m.reset_events();
    m.compute_reference(x.data(), n_rows, y_ref.data(), n_out);
    const MacroEvents ref_events = m.events();
    ASSERT_EQ(y_fast, expect);
    ASSERT_EQ(y_ref, expect);
    const MacroEvents formula = compute_events(s, n_rows, n_out);
    ASSERT_EQ(ref_events, formula) << "the counted events differ from the formulas";
    ASSERT_EQ(fast_events, formula);
  }
}

}  // namespace

TEST(MacroExact, DigitalRandomGeometries) { check_random_cases(MacroKind::digital, 101, 700); }
TEST(MacroExact, AnalogLosslessRandomGeometries) { check_random_cases(MacroKind::analog, 202, 700); }

TEST(MacroExact, ExtremeValuesAllEncodingsFullWidth) {
  // The most negative weight and input of every width: the carries and sign terms at the edge.
  for (int enc = 0; enc < 3; ++enc)
    for (int cb = 1; cb <= 4; ++cb)
      for (int wb = 2; wb <= 8; ++wb) {
        MacroSpec base;
        base.kind = MacroKind::analog;
        base.encoding = static_cast<WeightEncoding>(enc);
        base.cell_bits = cb;
        base.input_bits_per_cycle = 3;
        const MacroSpec s = with_geometry(base, {.rows = 8, .rows_per_cycle = 8, .cols = 64,
                                                 .weight_bits = wb, .input_bits = 8, .adc_bits = 16});
        Macro m(s);
        const int n_out = 2;
        std::vector<int8_t> w(8 * n_out);
        for (int i = 0; i < 8 * n_out; ++i) w[i] = static_cast<int8_t>(i % 2 ? wmin(s) : wmax(s));
        m.write_block(w.data(), 8, n_out);
        const std::vector<int32_t> x = {-128, 127, -128, -128, 127, 0, -1, 1};
        std::vector<int64_t> y(n_out);
        m.compute(x.data(), 8, y.data(), n_out);
        EXPECT_EQ(y, exact_product(x, w, 8, n_out)) << enc << " " << cb << " " << wb;
      }
}

TEST(MacroExact, UnsignedTwelveBitProbabilities) {
  // The attention tile's second product: unsigned 12-bit probabilities times signed V.
  MacroSpec s;
  s.rows = 32;
  s.cols = 64;
  s.input_signed = false;
  s.input_bits = 12;
  s.input_bits_per_cycle = 4;
  s.rows_per_cycle = 16;
  Macro m(s);
  std::mt19937_64 g(5);
  std::vector<int8_t> w(32 * 8);
  for (auto& v : w) v = static_cast<int8_t>(random_value(g, -128, 127));
  m.write_block(w.data(), 32, 8);
  std::vector<int32_t> x(32);
  for (auto& v : x) v = random_value(g, 0, 4095);
  std::vector<int64_t> y(8);
  m.compute(x.data(), 32, y.data(), 8);
  EXPECT_EQ(y, exact_product(x, w, 32, 8));
  EXPECT_NE(error_of([&] { x[3] = 4096; m.compute(x.data(), 32, y.data(), 8); }).find("x[3]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { x[3] = -1; m.compute(x.data(), 32, y.data(), 8); }).find("x[3]"),
            std::string::npos);
}

TEST(MacroExact, OverwriteReplacesAllSlices) {
  // Writing 0 over -1 must clear every slice bit (a stale set bit would survive OR-style writes).
  for (int enc = 0; enc < 3; ++enc) {
    MacroSpec s;
    s.encoding = static_cast<WeightEncoding>(enc);
    s.rows = 4;
    s.rows_per_cycle = 4;
    s.cols = 16;
    Macro m(s);
    m.write(2, 0, -100);
    m.write(2, 0, 0);
    m.write(1, 0, 5);
    EXPECT_EQ(m.read(2, 0), 0);
    const int32_t x[4] = {0, 3, -7, 0};
    int64_t y = 0;
    m.compute(x, 4, &y, 1);
    EXPECT_EQ(y, 15);
    m.compute_reference(x, 4, &y, 1);
    EXPECT_EQ(y, 15);
  }
}

TEST(MacroExact, UnwrittenCellsHoldWeightZeroInEveryEncoding) {
  // A new macro's cells encode weight 0 (offset encoding: the offset's level, not all-zero cells):
  // rows and outputs never written read 0 and add nothing to a product over every row.
  for (const MacroKind kind : {MacroKind::digital, MacroKind::analog})
    for (int enc = 0; enc < 3; ++enc) {
      MacroSpec s;
      s.kind = kind;
      s.encoding = static_cast<WeightEncoding>(enc);
      s.rows = 8;
      s.rows_per_cycle = 8;
      s.cols = 32;
      s.cell_bits = 1;
      s.input_bits_per_cycle = 1;
      s.adc_bits = 8;  // 8 rows of one-bit cells and inputs: lossless
      s.adc_share = 1;
      Macro m(s);
      for (int r = 0; r < s.rows; ++r)
        for (int o = 0; o < s.weights_per_row(); ++o) EXPECT_EQ(m.read(r, o), 0) << static_cast<int>(kind) << " " << enc;
      m.write(1, 0, -7);
      std::vector<int32_t> x(s.rows, 3);
      std::vector<int64_t> y(s.weights_per_row(), -1);
      m.compute(x.data(), s.rows, y.data(), s.weights_per_row());
      EXPECT_EQ(y[0], -21) << static_cast<int>(kind) << " " << enc;
      for (size_t o = 1; o < y.size(); ++o) EXPECT_EQ(y[o], 0) << static_cast<int>(kind) << " " << enc << " out " << o;
    }
}

TEST(MacroExact, DigitalWideBlocksAreExact) {
  // The shapes the runtime uses (16..40 weights per row of 256 rows, odd row counts, zero inputs,
  // the most negative values), which the random geometries above (at most 9 weights per row)
  // never reach: the exact integer product.
  std::mt19937_64 g(77);
  for (int t = 0; t < 60; ++t) {
    MacroSpec s;
    s.kind = MacroKind::digital;
    s.rows = 256;
    s.cols = 8 * (16 + static_cast<int>(g() % 25));
    s.rows_per_cycle = 256;
    const int n_rows = pick(g, 1, s.rows), n_out = pick(g, 1, s.weights_per_row());
    std::vector<int8_t> w(static_cast<size_t>(n_rows) * n_out);
    for (auto& v : w) v = static_cast<int8_t>(t % 5 == 0 ? -128 : random_value(g, -128, 127));
    std::vector<int32_t> x(n_rows);
    for (auto& v : x) v = t % 5 == 0 ? -128 : (g() % 4 == 0 ? 0 : random_value(g, -128, 127));
    Macro m(s);
    m.write_block(w.data(), n_rows, n_out);
    std::vector<int64_t> y(n_out, -1);
    m.compute(x.data(), n_rows, y.data(), n_out);
    ASSERT_EQ(y, exact_product(x, w, n_rows, n_out)) << "case " << t << " rows " << n_rows << " outputs " << n_out;
  }
}
