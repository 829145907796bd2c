// Internal to the macro C model: how a weight is cut into column slices and an input into
// per-cycle pieces. Every path (bit-level reference, fast paths, event formulas, decoding) reads
// the layout from here, so the encodings are defined in exactly one place.
#pragma once
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "kvcim/cmodel/cim/macro.hpp"

namespace kvcim::cmodel::cim::detail {

inline uint32_t low_mask(int width) { return width >= 32 ? ~0u : ((1u << width) - 1u); }

// Slice j of a weight (j < spec.slices_per_weight()), by arithmetic: writes call it per cell.
// Magnitude (offset: code) bits first, least significant first, cell_bits at a time; then the
// sign bit alone (twos_complement) or the same slices again for max(-w, 0) (differential).
inline Piece weight_slice(const MacroSpec& spec, int j) {
  const int W = spec.weight_bits, c = spec.cell_bits;
  const int body = spec.encoding == WeightEncoding::offset ? W : W - 1;
  const int nb = (body + c - 1) / c;
  if (j < nb) return {j * c, body - j * c < c ? body - j * c : c, +1, false};
  if (spec.encoding == WeightEncoding::twos_complement) return {W - 1, 1, -1, false};
  const int i = j - nb;  // differential: the negative column group
  return {i * c, body - i * c < c ? body - i * c : c, -1, true};
}
// All slices of one weight (column o*S + j holds slice j of output o).
std::vector<Piece> weight_slices(const MacroSpec& spec);
// Input pieces, in cycle order (cycle k applies piece k).
std::vector<Piece> input_pieces(const MacroSpec& spec);

// The unsigned value whose bits the slices hold: twos_complement: the W-bit two's-complement
// code; offset: w + 2^(W-1); differential: max(w, 0) or max(-w, 0) per slice.
inline uint32_t slice_level(const MacroSpec& spec, const Piece& p, int32_t w) {
  uint32_t src;
  switch (spec.encoding) {
    case WeightEncoding::twos_complement:
      src = static_cast<uint32_t>(w) & low_mask(spec.weight_bits);
      break;
    case WeightEncoding::offset:
      src = static_cast<uint32_t>(w + (1 << (spec.weight_bits - 1)));
      break;
    default:
      src = static_cast<uint32_t>(p.negative_source ? (w < 0 ? -w : 0) : (w > 0 ? w : 0));
      break;
  }
  return (src >> p.offset) & low_mask(p.width);
}

// The level an input x drives in cycle piece p (its B-bit two's-complement or unsigned code).
inline uint32_t input_level(const MacroSpec& spec, const Piece& p, int32_t x) {
  const uint32_t code = static_cast<uint32_t>(x) & low_mask(spec.input_bits);
  return (code >> p.offset) & low_mask(p.width);
}

// Gaussian noise source of a macro: splitmix64 uniforms and Box-Muller (one normal per two
// uniforms, nothing cached), so the stream is identical on every platform and standard library.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Read noise of one (input cycle, row group) step: out[col] = sigma x N(0, 1) for col < n, drawn
// in Box-Muller pairs (the cosine and the sine of one pair of uniforms feed two adjacent
// columns; an odd last column discards its sine). One logarithm per two conversions: read noise
// is what bounds a noisy `kvcim run`. Both compute paths call this once per step, so they consume
// the generator identically.
inline void draw_read_noise(uint64_t& state, double sigma, double* out, int n) {
  for (int i = 0; i < n; i += 2) {
    const double u1 = (static_cast<double>(splitmix64(state) >> 11) + 1.0) * 0x1p-53;
    const double u2 = static_cast<double>(splitmix64(state) >> 11) * 0x1p-53;
    const double r = sigma * std::sqrt(-2.0 * std::log(u1));
    const double t = 2.0 * std::numbers::pi * u2;
    out[i] = r * std::cos(t);
    if (i + 1 < n) out[i + 1] = r * std::sin(t);
  }
}

}  // namespace kvcim::cmodel::cim::detail
