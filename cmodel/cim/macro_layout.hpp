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

}  // namespace kvcim::cmodel::cim::detail
