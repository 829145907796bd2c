// Internal to the macro C model: the vector kernels of the fast paths (the analog macro's, and
// the digital macro's products), chosen at run time (AVX-512, AVX2 or portable code: KernelLevel
// in macro.hpp; all give identical results).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvcim/cmodel/cim/macro.hpp"

namespace kvcim::cmodel::cim::detail {

// One term of a column partial sum: popcount(xm AND plane[col]) << shift.
struct PopTerm {
  uint64_t xm;            // the driven rows of one 64-row word (input bit-plane AND row group)
  const uint64_t* plane;  // that word of one cell bit-plane, indexed by column
  int shift;              // input bit + cell bit
};

// A PopTerm whose plane word is named by its offset in the macro's bit-planes rather than by
// address: one list serves every macro of a spec over the same rows (Macro::compute_batch forms
// a token's list once for all the macros of a row range).
struct InputTerm {
  uint64_t xm;  // the driven rows of one 64-row word
  size_t at;    // that word of one cell bit-plane: planes + at, indexed by column
  int shift;    // input bit + cell bit
};

// The digital macro's exact products y[o] = sum_r x[r] w[r * wpr + o] for o < n_out, summed in
// int32 (the caller guarantees that no partial sum leaves it), each tile of outputs in registers
// over the rows: the vector levels' kernels, so that a capped level (KVCIM_MACRO_KERNEL) runs the
// digital macro at that level's width too.
void digital_columns(const int32_t* x, int n_rows, const int8_t* w, int wpr, int n_out, int64_t* y);

// The bit-planes of the inputs' B-bit codes (input_level's code, the low B bits of x[r]):
// cb[b * nw + r / 64], bit r % 64 = bit b of the code of x[r] (all B * nw words written; rows
// from n_rows to 64 nw are 0).
void code_planes(const int32_t* x, int n_rows, int B, int nw, uint64_t* cb);

// p[col] = sum_t popcount(t.xm & t.plane[col]) << t.shift for col < n (the caller guarantees
// that every sum fits in 32 bits).
void popcount_columns(const PopTerm* terms, int n_terms, int n, uint32_t* p);

// The whole noise-free analog computation of n columns, fused so that every intermediate stays in
// registers: for each input cycle k < T and row group g < G (step s = k * G + g), the partial sum
// p = sum of terms[step_begin[s] .. step_begin[s+1]) (as popcount_columns), the ADC code
// min((p + half) >> shift, top) << shift, summed over the groups into pk, and
// acc[col] = sum_k sign[k] * (pk << offset[k]). Every pk must fit in 32 bits.
struct AdcRule {
  int shift;
  uint32_t half;
  uint32_t top;
};
//
// With `noise` (read noise alone at an ADC step of one level, adc.shift 0): the code of step s
// and column col is clamp(p + k, 0, noise->top) instead, k the rounded read noise of draw
// noise->base + s * n + col (detail::rounded_noise_codes' draw: the same codes, fused so that no
// partial sum or code leaves the registers).
struct RoundedDraws {
  NoiseKey key;
  uint64_t base;
  RoundedNoise law;  // law.k_max > 0
  int32_t top;
};
// The terms' plane words are planes + terms[t].at. `descending`: the caller vouches that every
// step's shifts descend (Macro::list_input_terms' lists), which the kernel otherwise checks.
void analog_columns(const InputTerm* terms, const uint64_t* planes, const int* step_begin, int T, int G,
                    const int* sign, const int* offset, AdcRule adc, int n, int64_t* acc,
                    const RoundedDraws* noise = nullptr, bool descending = false);

// The slices' recombination of n_out weights: y[o] = sum over j < S of sign[j] (acc[o * S + j]
// << offset[j]) (sign +-1; vectorised for the S = 8 slices of 8-bit weights in 1-bit cells).
void combine_slices(const int64_t* acc, int n_out, int S, const int* sign, const int* offset, int64_t* y);

// The noisy ADC of one step: pk[col] += clamp(floor((p + (pn + rn)) * scale + 1/2), 0, top) << shift
// for col < n, in double (scale = 2^-shift), as the reference computes it.
void adc_noisy(const uint32_t* p, const double* pn, const double* rn, int n, double scale,
               double top, int shift, uint32_t* pk);

// The cell noise of one row group: pn[k * n + col] = the sum over rows i < n_rows, in ascending
// order, of u[i * T + k] * dev[i * stride + col] in double (rows with u == 0 add nothing; u * dev
// is exact), for k < T and col < n. Every lane's additions are the scalar loop's, in its order.
void cell_noise_sums(const float* dev, size_t stride, int n_rows, const uint32_t* u, int T, int n,
                     double* pn);

// The cell noise of one row group in integers: S[k * n + col] = sum over rows i < n_rows of
// u[i * T + k] * qdev[i * stride + col] (the int16 deviations, row i of the group at
// qdev + i * stride; every |qdev| <= qmax, u < 2^15). Exact: the caller guarantees that no sum
// leaves int32, so every kernel gives the same S in any order. The vector kernels add the rows
// whose level has bit b set (sparse: the zero bits of the inputs cost nothing) in int16 lanes, as
// many at a time as 32767 / qmax allows, and widen those runs into int32.
void cell_noise_isums(const int16_t* qdev, size_t stride, int n_rows, const uint32_t* u, int T,
                      int n, int32_t qmax, int32_t* S);
// The fixed noise model's whole computation of n columns, every step of a call at once: for each
// input cycle k < T and row group g < G (step s = k * G + g), with the partial sum p of column col
// (FixedSteps::p or ::terms), the cell noise S = sum over level bits b < bits of (the sum of the
// grid values (fixed_grid_at) of the rows at the offsets listed in row_off[row_begin[s * bits +
// b] .. row_begin[s * bits + b + 1])) << b and
// the read noise R[s * n + col] (zero where R is null), the code adc_fixed_code(p, S + R, q,
// shift, top) << shift is summed over the groups into pk and acc[col] = sum_k sign[k] *
// (pk << offset[k]). The cell sums stay in registers, added in int16 lanes as many rows at a time
// as 32767 / qmax allows (cell_noise_isums' runs); the caller guarantees what adc_fixed_code needs.
constexpr int kGridTileCols = 64;  // the columns of a tile of a tiled grid (FixedSteps::tile)
struct FixedSteps {
  // the partial sums: p[s * n + col] where p is given (callers with the sums at hand), else
  // counted from terms[step_begin[s] .. step_begin[s + 1]) as popcount_columns does (in registers,
  // no p buffer: what the fast path gives; terms may be empty, null, when no input bit is set)
  const uint32_t* p;
  const PopTerm* terms;
  const int* step_begin;
  const int32_t* R;
  // the listed rows' grid values: column col of the row at offset o at qdev[o + col], or with
  // tile > 0 (tiles of kGridTileCols columns, tile elements apart: the subset table) at
  // qdev[(col / kGridTileCols) * tile + o + col % kGridTileCols] (fixed_grid_at)
  const int16_t* qdev;
  size_t tile;
  size_t stride;  // the row stride of qdev's rows, untiled (what each block prefetches of the next group)
  int n_rows;  // the call's rows (each block prefetches the next block's)
  int rpc;     // rows per group: group g is rows g * rpc ..
  const int* row_begin;
  const int32_t* row_off;  // r * stride of each listed row
  int bits;
  int T, G;
  const int* sign;
  const int* offset;
  int q, shift;
  int32_t top, qmax;
};
void fixed_columns(const FixedSteps& f, int n, int64_t* acc);
// Column col of the listed rows: fixed_grid_at(f, col)[o] for each listed offset o.
inline const int16_t* fixed_grid_at(const FixedSteps& f, int col) {
  return f.tile == 0 ? f.qdev + col
                     : f.qdev + static_cast<size_t>(col / kGridTileCols) * f.tile + col % kGridTileCols;
}
// The row stride (in int16) of a macro's grid deviations for `cols` columns: whole 64-byte lines
// (aligned vector loads), and from 2 KB rows on an odd number of them, so that the rows of a group
// fall in different L1 sets (at 4 KB, 2,048 columns, they shared one set and evicted each other);
// the padding costs at most one line in 32 (3%).
inline size_t grid_row_stride(int cols) {
  const size_t lines = (static_cast<size_t>(cols) + 31) / 32;
  return (lines >= 32 ? lines | 1 : lines) * 32;
}

// The noisy ADC of one step from cell noise known to within `margin` levels: pna = S * qscale,
// va = p + (pna + rn); where floor((va -+ m) * scale + 1/2) agree, m = margin + (|va| + p) 2^-48
// (room for the roundings of these sums), that is the code of any v within margin of va, and
// clamp(code) << shift is added to pk[col]; the other columns are written to `uncertain`
// (ascending) and left for the caller. Returns how many.
int adc_noisy_bounded(const uint32_t* p, const int32_t* S, double qscale, const double* rn,
                      double margin, int n, double scale, double top, int shift, uint32_t* pk,
                      int* uncertain);
// How many columns adc_noisy_bounded has left in doubt so far, in this process (tests).
uint64_t bounded_adc_doubts();

// The fixed noise model's ADC of one conversion, in integers on the grid of 2^-q levels: with
// d the cell and read noise in grid units the value is p 2^q + d grid units and
// code = clamp(floor((p 2^q + d) / 2^(q+s) + 1/2), 0, top), computed as
// (p >> s) + ((((p mod 2^s) << q) + d + 2^(q+s-1)) >> (q+s)) so that nothing leaves int32 (the
// caller guarantees q + s <= 28 and |d| < 2^30); fixed_columns' vector kernels do the same.
inline int32_t adc_fixed_code(uint32_t p, int32_t d, int q, int shift, int32_t top) {
  const int32_t rem = static_cast<int32_t>(p & ((1u << shift) - 1u));
  const int32_t c = static_cast<int32_t>(p >> shift) + ((rem * (1 << q) + d + (1 << (q + shift - 1))) >> (q + shift));
  return c < 0 ? 0 : (c > top ? top : c);
}

// The noise generator (noise_key, normal_draw, normal_draws) is declared in macro.hpp.

}  // namespace kvcim::cmodel::cim::detail
