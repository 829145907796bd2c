// Shared helpers of the cim_macro tests: random specs, random data and the exact product that
// the tests compute themselves (never through the macro).
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kvcim/cmodel/cim/macro.hpp"
#include "error_of.hpp"
#include "kvcim/error.hpp"

namespace macro_test {

using namespace kvcim::cmodel::cim;

using kvcim::test::error_of;

inline int pick(std::mt19937_64& g, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(g);
}

// Widest slice and input piece, from the encoding rules as the docs state them (the sign bit
// travels alone; the rest is cut cell_bits / input_bits_per_cycle wide).
inline int widest_slice(const MacroSpec& s) {
  const int body = s.encoding == WeightEncoding::offset ? s.weight_bits : s.weight_bits - 1;
  return std::min(s.cell_bits, body);
}
inline int widest_piece(const MacroSpec& s) {
  const int body = s.input_signed ? s.input_bits - 1 : s.input_bits;
  return std::min(s.input_bits_per_cycle, body);
}

// The geometry a worked example fixes by hand; every other field stays as in the base spec.
struct HandGeometry {
  int rows, rows_per_cycle, cols, weight_bits, input_bits, adc_bits;
};
inline MacroSpec with_geometry(MacroSpec s, const HandGeometry& g) {
  s.rows = g.rows;
  s.rows_per_cycle = g.rows_per_cycle;
  s.cols = g.cols;
  s.weight_bits = g.weight_bits;
  s.input_bits = g.input_bits;
  s.adc_bits = g.adc_bits;
  return s;
}

// A random geometry; analog specs get an ADC just wide enough to be lossless.
inline MacroSpec random_spec(std::mt19937_64& g, MacroKind kind) {
  MacroSpec s;
  s.kind = kind;
  s.encoding = static_cast<WeightEncoding>(pick(g, 0, 2));
  s.cell_bits = pick(g, 1, 4);
  s.weight_bits = pick(g, 2, 8);
  s.input_signed = pick(g, 0, 1) == 1;
  s.input_bits = pick(g, s.input_signed ? 2 : 1, pick(g, 0, 3) == 0 ? 16 : 8);
  s.input_bits_per_cycle = pick(g, 1, std::min(8, s.input_bits));
  s.rows = pick(g, 1, pick(g, 0, 3) == 0 ? 300 : 70);
  s.rows_per_cycle = pick(g, 1, s.rows);
  const int slices = s.encoding == WeightEncoding::offset
                         ? (s.weight_bits + s.cell_bits - 1) / s.cell_bits
                     : s.encoding == WeightEncoding::twos_complement
                         ? 1 + (s.weight_bits - 1 + s.cell_bits - 1) / s.cell_bits
                         : 2 * ((s.weight_bits - 1 + s.cell_bits - 1) / s.cell_bits);
  s.cols = slices * pick(g, 1, 9) + pick(g, 0, slices - 1);
  s.seed = g();
  if (kind == MacroKind::analog) {
    // Lossless: 2^adc_bits - 1 >= rows_per_cycle * (2^dmax - 1) * (2^cmax - 1), within 16 bits.
    const int64_t per_row = ((int64_t{1} << widest_piece(s)) - 1) * ((int64_t{1} << widest_slice(s)) - 1);
    s.rows_per_cycle = static_cast<int>(std::min<int64_t>(s.rows_per_cycle, 65535 / per_row));
    s.rows_per_cycle = std::max(s.rows_per_cycle, 1);
    s.adc_bits = std::bit_width(static_cast<uint64_t>(s.rows_per_cycle * per_row));
    s.adc_share = pick(g, 1, s.cols);
  }
  return s;
}

inline int32_t wmin(const MacroSpec& s) {
  return s.encoding == WeightEncoding::differential ? -((1 << (s.weight_bits - 1)) - 1)
                                                    : -(1 << (s.weight_bits - 1));
}
inline int32_t wmax(const MacroSpec& s) { return (1 << (s.weight_bits - 1)) - 1; }
inline int32_t xmin(const MacroSpec& s) { return s.input_signed ? -(1 << (s.input_bits - 1)) : 0; }
inline int32_t xmax(const MacroSpec& s) {
  return s.input_signed ? (1 << (s.input_bits - 1)) - 1 : (1 << s.input_bits) - 1;
}

// Values biased towards the extremes, where sign and carry mistakes show.
inline int32_t random_value(std::mt19937_64& g, int32_t lo, int32_t hi) {
  switch (pick(g, 0, 5)) {
    case 0: return lo;
    case 1: return hi;
    case 2: return 0;
    default: return std::uniform_int_distribution<int32_t>(lo, hi)(g);
  }
}

// A random block for spec s, drawn in this order: n_rows in [1, rows], n_out in
// [1, weights_per_row], the n_rows x n_out weight codes (row = input) and the n_rows inputs.
struct Block {
  int n_rows = 0, n_out = 0;
  std::vector<int8_t> w;
  std::vector<int32_t> x;
};
inline Block random_block(std::mt19937_64& g, const MacroSpec& s) {
  Block b;
  b.n_rows = pick(g, 1, s.rows);
  b.n_out = pick(g, 1, s.weights_per_row());
  b.w.resize(static_cast<size_t>(b.n_rows) * b.n_out);
  for (auto& v : b.w) v = static_cast<int8_t>(random_value(g, wmin(s), wmax(s)));
  b.x.resize(b.n_rows);
  for (auto& v : b.x) v = random_value(g, xmin(s), xmax(s));
  return b;
}

inline std::vector<int64_t> exact_product(const std::vector<int32_t>& x,
                                          const std::vector<int8_t>& w, int n_rows, int n_out) {
  std::vector<int64_t> y(n_out, 0);
  for (int r = 0; r < n_rows; ++r)
    for (int o = 0; o < n_out; ++o) y[o] += int64_t{x[r]} * w[r * n_out + o];
  return y;
}

}  // namespace macro_test
