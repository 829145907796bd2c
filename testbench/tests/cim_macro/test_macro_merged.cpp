// The analog_merged macro kind: weight slices merged in analog, one conversion per output over the
// merged range. Both compute paths are held to a plain implementation written here from the
// docs' definition (docs/cim_macro.md, "Weight bits merged in analog"), which never looks at
// slices or cells: per (input cycle, row group) the merged value is sum_r u_k(x_r) enc(w_r).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kvcim/cmodel/cim/macro_kind.hpp"
#include "kvcim/cmodel/macro_model/macro_components.hpp"
#include "kvcim/cmodel/macro_model/macro_desc.hpp"
#include "macro_test_util.hpp"

namespace {

using namespace macro_test;

// The input pieces as the docs define them: bits [k d, min((k+1) d, body)) in cycle k, then the
// sign bit alone weighted -2^(B-1) for signed inputs.
struct InPiece {
  int offset, width, sign;
};
std::vector<InPiece> plain_pieces(const MacroSpec& s) {
  std::vector<InPiece> out;
  const int body = s.input_signed ? s.input_bits - 1 : s.input_bits;
  for (int off = 0; off < body; off += s.input_bits_per_cycle)
    out.push_back({off, std::min(s.input_bits_per_cycle, body - off), +1});
  if (s.input_signed) out.push_back({s.input_bits - 1, 1, -1});
  return out;
}

// The plain merged macro: returns y and the number of clipped conversions.
std::vector<int64_t> plain_merged(const MacroSpec& s, const Block& b, int* clipped = nullptr) {
  const auto pieces = plain_pieces(s);
  int dmax = 0;
  for (const auto& p : pieces) dmax = std::max(dmax, p.width);
  const int W = s.weight_bits;
  const bool offset = s.encoding == WeightEncoding::offset;
  // Largest merged magnitudes of one weight: offset [0, 2^W - 1]; two's complement
  // [-2^(W-1), 2^(W-1) - 1]; differential +-(2^(W-1) - 1).
  const int64_t pos = offset ? (int64_t{1} << W) - 1 : (int64_t{1} << (W - 1)) - 1;
  const int64_t neg = offset ? 0 : s.encoding == WeightEncoding::twos_complement ? int64_t{1} << (W - 1) : pos;
  const int64_t fs = int64_t{s.rows_per_cycle} * ((int64_t{1} << dmax) - 1) * std::max(pos, neg);
  const bool bipolar = neg > 0;
  const int64_t top = bipolar ? (int64_t{1} << (s.adc_bits - 1)) - 1 : (int64_t{1} << s.adc_bits) - 1;
  const int64_t low = bipolar ? -(int64_t{1} << (s.adc_bits - 1)) : 0;
  const double range = s.adc_range == AdcRange::full_scale ? static_cast<double>(fs) : s.adc_clip * static_cast<double>(fs);
  int sh = 0;
  while (std::ldexp(static_cast<double>(top), sh) < range) ++sh;
  std::vector<int64_t> y(b.n_out, 0);
  int64_t sx = 0;
  for (int r = 0; r < b.n_rows; ++r) sx += b.x[r];
  for (const auto& p : pieces) {
    for (int r0 = 0; r0 < b.n_rows; r0 += s.rows_per_cycle) {
      for (int o = 0; o < b.n_out; ++o) {
        int64_t v = 0;
        for (int r = r0; r < std::min(b.n_rows, r0 + s.rows_per_cycle); ++r) {
          const uint32_t code = static_cast<uint32_t>(b.x[r]) & ((1u << s.input_bits) - 1u);
          const int64_t u = (code >> p.offset) & ((1u << p.width) - 1u);
          const int64_t w = b.w[static_cast<size_t>(r) * b.n_out + o];
          v += u * (offset ? w + (int64_t{1} << (W - 1)) : w);
        }
        const int64_t rounded = static_cast<int64_t>(std::floor(static_cast<double>(v) / std::ldexp(1.0, sh) + 0.5));
        const int64_t c = std::clamp(rounded, low, top);
        if (clipped && c != rounded) ++*clipped;
        y[o] += p.sign * ((c << sh) << p.offset);
      }
    }
  }
  if (offset)
    for (auto& v : y) v -= sx << (W - 1);
  return y;
}

// rows x cols of 1-bit cells, all rows summed per conversion, 8-bit weights, bit-serial inputs
MacroSpec merged_spec(int rows, int cols, int input_bits, int adc_bits, MacroKind kind = MacroKind::analog_merged) {
  MacroSpec s;
  s.kind = kind;
  s.rows = s.rows_per_cycle = rows;
  s.cols = cols;
  s.input_bits = input_bits;
  s.adc_bits = adc_bits;
  return s;
}

MacroSpec random_merged(std::mt19937_64& g) {
  MacroSpec s = random_spec(g, MacroKind::analog);
  s.kind = MacroKind::analog_merged;
  s.adc_bits = pick(g, 2, 16);
  s.adc_share = pick(g, 1, s.cols);
  if (pick(g, 0, 1) == 1) {
    s.adc_range = AdcRange::calibrated;
    s.adc_clip = std::ldexp(1.0, -pick(g, 0, 8)) * std::uniform_real_distribution<double>(0.5, 1.0)(g);
  }
  return s;
}

TEST(MacroMerged, BothPathsEqualThePlainMergedConversionOnRandomMatrices) {
  std::mt19937_64 g(36);
  int clipped = 0, lossy = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const MacroSpec s = random_merged(g);
    ASSERT_NO_THROW(s.validate("random")) << trial;
    const Block b = random_block(g, s);
    Macro fast(s), ref(s);
    fast.write_block(b.w.data(), b.n_rows, b.n_out);
    ref.write_block(b.w.data(), b.n_rows, b.n_out);
    std::vector<int64_t> yf(b.n_out), yr(b.n_out);
    fast.compute(b.x.data(), b.n_rows, yf.data(), b.n_out);
    ref.compute_reference(b.x.data(), b.n_rows, yr.data(), b.n_out);
    int c = 0;
    const auto yp = plain_merged(s, b, &c);
    clipped += c;
    lossy += yp != exact_product(b.x, b.w, b.n_rows, b.n_out);
    ASSERT_EQ(yf, yp) << "fast path, trial " << trial;
    ASSERT_EQ(yr, yp) << "reference, trial " << trial;
    EXPECT_EQ(ref.events(), fast.events()) << trial;
    MacroEvents expect = compute_events(s, b.n_rows, b.n_out);
    expect += write_events(s, b.n_rows, b.n_out);
    EXPECT_EQ(ref.events(), expect) << trial;
  }
  // the cases exercised both saturation and rounding
  EXPECT_GT(clipped, 100);
  EXPECT_GT(lossy, 100);
}

TEST(MacroMerged, ClipsAtTheTopCodeOfAHandExample) {
  // 4 rows, 8-bit two's-complement weights on 1-bit cells, bit-serial 4-bit signed inputs, a 4-bit
  // bipolar converter over the merged range: full scale 4 * 1 * 128 = 512, codes [-8, 7], so the
  // step is 2^7 (7 * 64 < 512 <= 7 * 128).
  MacroSpec s = merged_spec(4, 8, 4, 4);
  ASSERT_EQ(s.adc_full_scale(), 512);
  ASSERT_EQ(s.adc_shift(), 7);
  ASSERT_EQ(s.adc_top_code(), 7);
  ASSERT_EQ(s.adc_low_code(), -8);
  Macro m(s);
  const std::vector<int8_t> w = {127, 127, 127, 127};
  m.write_block(w.data(), 4, 1);
  // x = 7 = 0b0111: cycles 0..2 each merge 4 * 127 = 508 -> code round(3.97) = 4 (no clip); the
  // sign cycle sees 0. y = (1 + 2 + 4) * 4 * 128 = 3584 against the exact 3556.
  std::vector<int32_t> x = {7, 7, 7, 7};
  int64_t y = 0;
  m.compute(x.data(), 4, &y, 1);
  EXPECT_EQ(y, 3584);
  // Calibrated to an eighth of the range: step 2^4 (7 * 16 = 112 >= 64), 508 / 16 = 31.75 clips
  // at code 7: each cycle reads 112. y = 7 * 112 = 784.
  s.adc_range = AdcRange::calibrated;
  s.adc_clip = 0.125;
  Macro c(s);
  c.write_block(w.data(), 4, 1);
  c.compute(x.data(), 4, &y, 1);
  EXPECT_EQ(y, 784);
  int64_t yr = 0;
  c.compute_reference(x.data(), 4, &yr, 1);
  EXPECT_EQ(yr, 784);
}

TEST(MacroMerged, NoisyFastEqualsReferenceBitForBitInBothNoiseModels) {
  std::mt19937_64 g(37);
  int differs_from_clean = 0;
  for (int trial = 0; trial < 160; ++trial) {
    MacroSpec s = random_merged(g);
    s.rows = std::max(s.rows, 2);
    s.noise_model = trial % 2 ? NoiseModel::fixed : NoiseModel::exact;
    const int what = pick(g, 0, 3);
    s.cell_noise_sigma = what != 1 ? std::ldexp(1.0, -pick(g, 0, 6)) : 0.0;
    s.read_noise_sigma = what != 0 ? std::ldexp(1.0, -pick(g, -2, 4)) : 0.0;
    if (what == 3) {
      s.drift_nu = 0.02;
      s.drift_nu_sigma = 0.01;
      s.drift_time_s = 1000.0;
      s.stuck_rate = 0.01;
    }
    ASSERT_NO_THROW(s.validate("random")) << trial;
    const Block b = random_block(g, s);
    Macro fast(s), ref(s);
    fast.write_block(b.w.data(), b.n_rows, b.n_out);
    ref.write_block(b.w.data(), b.n_rows, b.n_out);
    // two computes in a row: the second shows that both left the generator in the same state
    for (int rep = 0; rep < 2; ++rep) {
      std::vector<int64_t> yf(b.n_out), yr(b.n_out);
      fast.compute(b.x.data(), b.n_rows, yf.data(), b.n_out);
      ref.compute_reference(b.x.data(), b.n_rows, yr.data(), b.n_out);
      ASSERT_EQ(yf, yr) << "trial " << trial << " compute " << rep << " model "
                        << (s.noise_model == NoiseModel::fixed ? "fixed" : "exact");
      if (rep == 0) differs_from_clean += yf != plain_merged(s, b);
    }
    EXPECT_EQ(ref.events(), fast.events()) << trial;
  }
  EXPECT_GT(differs_from_clean, 40);  // the noise reaches the codes
}

TEST(MacroMerged, ConvertsOncePerOutputWhereTheSlicedKindConvertsEveryColumn) {
  MacroSpec s = merged_spec(64, 64, 8, 8, MacroKind::analog);
  const MacroEvents sliced = compute_events(s, 64, 8);
  s.kind = MacroKind::analog_merged;
  const MacroEvents merged = compute_events(s, 64, 8);
  EXPECT_EQ(sliced.adc_conversions, 8 * 8 * 8);   // 8 outputs x 8 slices x 8 input cycles
  EXPECT_EQ(merged.adc_conversions, 8 * 8);       // 8 outputs x 8 input cycles
  EXPECT_EQ(merged.column_reads, sliced.column_reads);  // every bit column still charges the merge
  EXPECT_EQ(merged.shift_add_ops, 8 * 7);         // only the input cycles are shifted and added
  EXPECT_EQ(s.adc_count(), 64 / 8);               // one converter per output (adc_share 1)
}

// The component model (cmodel/macro_model) prices readouts = rows x cols used x input cycles /
// products per conversion: merged in analog, a conversion sums rows x cells per weight products;
// shift-added, rows. The bit-accurate macro's conversions are the same count.
TEST(MacroMerged, CountsTheConversionsTheComponentModelPrices) {
  namespace mm = kvcim::cmodel::macro_model;
  for (MacroKind kind : {MacroKind::analog, MacroKind::analog_merged})
    for (int rows : {64, 256}) {
      const MacroSpec s = merged_spec(rows, 256, 8, 8, kind);
      const MacroEvents e = compute_events(s, rows, s.weights_per_row());
      mm::MacroDesc d;
      d.node_nm = 28;
      d.vdd_v = 0.9;
      d.rows = rows;
      d.cols = s.cols;
      d.cell = mm::Cell::sram;
      d.input_encoding = mm::Encoding::bit_serial;
      d.input_bits = s.input_bits;
      d.weight_bits = s.weight_bits;
      d.weight_merge = kind == MacroKind::analog_merged ? mm::Merge::analog : mm::Merge::digital;
      d.readout = mm::Readout::sar;
      d.adc_bits = s.adc_bits;
      d.readout_count = static_cast<double>(s.adc_count());
      d.output_bits = 24;
      d.clock_mhz = 100;
      mm::finish_desc(d, "test");
      const mm::MacroResult r = mm::evaluate(d, mm::shipped_constants());
      EXPECT_EQ(static_cast<double>(e.adc_conversions), r.conversions)
          << kMacroKindNames[static_cast<int>(kind)] << " rows " << rows;
    }
}

TEST(MacroMerged, ErrorHalvesWithEachAdcBit) {
  // Realistic data (weights and inputs roughly Gaussian, as quantised activations are), one
  // converter design calibrated to a sixteenth of its range (full scale 128 x 128 = 16384, so
  // 1024: 4 sigma of a bit-plane's merged sum): each bit more halves the RMS output error (the
  // step halves, 2^6 at 6 bits ... 2^1 at 11), no cliff. 8 input vectors x 128 outputs.
  std::mt19937_64 g(8);
  MacroSpec s = merged_spec(128, 1024, 8, 8);
  s.adc_range = AdcRange::calibrated;
  s.adc_clip = 1.0 / 16;
  std::normal_distribution<double> nd(0.0, 30.0);
  const auto draw = [&] { return static_cast<int>(std::clamp(std::lround(nd(g)), -127L, 127L)); };
  const int n_out = s.weights_per_row();
  std::vector<int8_t> w;
  for (int i = 0; i < 128 * n_out; ++i) w.push_back(static_cast<int8_t>(draw()));
  std::vector<std::vector<int32_t>> xs(8);
  for (auto& x : xs)
    for (int i = 0; i < 128; ++i) x.push_back(draw());
  double prev = 0;
  for (int bits = 6; bits <= 11; ++bits) {
    s.adc_bits = bits;
    Macro m(s);
    m.write_block(w.data(), 128, n_out);
    double se = 0;
    for (const auto& x : xs) {
      const auto exact = exact_product(x, w, 128, n_out);
      std::vector<int64_t> y(n_out);
      m.compute(x.data(), 128, y.data(), n_out);
      for (int o = 0; o < n_out; ++o) se += std::pow(static_cast<double>(y[o] - exact[o]), 2);
    }
    const double rms = std::sqrt(se / (8.0 * n_out));
    EXPECT_GT(rms, 0.0) << bits << " bits";
    if (bits > 6) {
      EXPECT_GT(prev / rms, 1.6) << bits << " bits";
      EXPECT_LT(prev / rms, 2.5) << bits << " bits";
    }
    prev = rms;
  }
}

TEST(MacroMerged, ValidateRefusesAOneBitBipolarConverter) {
  MacroSpec s;
  s.kind = MacroKind::analog_merged;
  s.adc_bits = 1;
  EXPECT_NE(error_of([&] { s.validate("spec"); }).find("adc_bits = 1"), std::string::npos);
  s.encoding = WeightEncoding::offset;  // unipolar: one bit is a (poor) converter
  EXPECT_NO_THROW(s.validate("spec"));
  s.kind = static_cast<MacroKind>(std::size(kMacroKindNames));
  EXPECT_NE(error_of([&] { s.validate("spec"); }).find("kind"), std::string::npos);
}

}  // namespace
