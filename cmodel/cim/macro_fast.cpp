// The fast paths of Macro::compute(). Both produce exactly what compute_reference() produces
// (results, events, noise-generator state); testbench/tests/cim_macro proves it.
//  - digital: the adder tree is exact, so the macro computes the exact integer product; it is
//    computed directly from the decoded weights and the events are added by formula.
//  - analog: each column partial sum is an integer popcount identity,
//      p = sum_{a < d, b < c} 2^(a+b) popcount(input bit-plane a AND cell bit-plane b AND group),
//    over 64-row words; the bit-planes are laid out [bit][row word][column] so that the inner
//    loop runs over contiguous columns (vectorised with -march=native where the CPU has a vector
//    popcount, plain scalar code elsewhere). The ADC rule is then applied to every p. Noise (cell
//    deviations, read noise) is added in double in the reference's order, so even noisy results
//    are bit-identical to the reference.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kvcim/cmodel/cim/macro.hpp"
#include "macro_fixed_subsets.hpp"
#include "macro_kernels.hpp"
#include "macro_layout.hpp"

namespace kvcim::cmodel::cim {

namespace {
// Per-thread scratch of the fast paths, slot `Slot` of element type T, n copies of `value`: a
// batch makes thousands of calls a token, each of which would otherwise allocate and free a dozen
// small vectors. Each slot is one variable of the functions below (never two alive at once).
template <class T, int Slot>
std::vector<T>& scratch(size_t n, T value) {
  thread_local std::vector<T> v;
  v.assign(n, value);
  return v;
}
// The same slots for buffers every element of which is written before it is read: at least n
// elements, their values left as they were (no fill per call).
template <class T, int Slot>
std::vector<T>& scratch_unset(size_t n) {
  thread_local std::vector<T> v;
  if (v.size() < n) v.resize(n);
  return v;
}
}  // namespace

void Macro::form_input_planes(const int32_t* x, int n_tokens, int n_rows, int x_stride, int input_bits,
                              std::vector<uint64_t>& out) {
  const int nw = (n_rows + 63) / 64;
  const size_t per = static_cast<size_t>(input_bits) * nw;
  out.resize(per * static_cast<size_t>(std::max(n_tokens, 0)));
  for (int t = 0; t < n_tokens; ++t)
    detail::code_planes(x + static_cast<size_t>(t) * x_stride, n_rows, input_bits, nw, out.data() + per * t);
}

const detail::SubsetTable* Macro::subset_table() {
  // A version no contents had before: one counter for every macro of the process (a write sets
  // grid_version_ to 0; a copy keeps its source's version with its source's contents).
  static std::atomic<uint64_t> versions{0};
  thread_local detail::SubsetTable table;
  thread_local uint64_t listed = 0;  // the version whose last compute listed its rows
  if (grid_version_ == 0) grid_version_ = versions.fetch_add(1, std::memory_order_relaxed) + 1;
  if (table.version == grid_version_) return &table;
  // Built for a macro computed twice in a row on this thread (an evaluation's batch, one macro
  // called again and again): a build costs about two computes of its rows (the whole table is
  // written), so macros that follow each other a call at a time (a decode's) list their rows.
  if (listed != grid_version_) {
    listed = grid_version_;
    return nullptr;
  }
  table.top = detail::subset_sums(cell_noise_q_.data(), noise_qstride_, spec_.rows, spec_.cols,
                                  spec_.rows_per_cycle, table.sums);
  table.version = grid_version_;
  return &table;
}

void Macro::compute_digital_fast(const int32_t* x, int n_rows, int64_t* y, int n_out) {
  const int wpr = spec_.weights_per_row();
  const int8_t* w = weights_.data();
  int64_t xmax = 0;
  for (int r = 0; r < n_rows; ++r) xmax = std::max<int64_t>(xmax, x[r] < 0 ? -int64_t{x[r]} : x[r]);
  const int64_t wmax = int64_t{1} << (spec_.weight_bits - 1);
  if (xmax * wmax * n_rows <= std::numeric_limits<int32_t>::max()) {
    // No partial sum can leave int32: accumulate in 32-bit lanes (twice the vector width).
    detail::digital_columns(x, n_rows, w, wpr, n_out, y);
  } else {
    std::fill(y, y + n_out, int64_t{0});
    for (int r = 0; r < n_rows; ++r) {
      const int64_t xr = x[r];
      if (xr == 0) continue;
      const int8_t* wr = w + static_cast<size_t>(r) * wpr;
      for (int o = 0; o < n_out; ++o) y[o] += xr * wr[o];
    }
  }
  events_ += call_events(n_rows, n_out);
}

size_t Macro::max_input_terms(int n_rows) const {
  size_t m = 0;
  const int nw = (n_rows + 63) / 64, G = spec_.row_groups(n_rows);
  for (const detail::Piece& piece : pieces_) m += static_cast<size_t>(piece.width) * spec_.cell_bits * (nw + G);
  return m;
}

int Macro::list_input_terms(const uint64_t* cb, size_t bit_stride, int n_rows, detail::InputTerm* terms,
                            int* step_begin) const {
  const auto& pieces = pieces_;
  const int T = static_cast<int>(pieces.size()), B = spec_.input_bits, c_bits = spec_.cell_bits;
  const int rpc = spec_.rows_per_cycle, G = spec_.row_groups(n_rows), nw = (n_rows + 63) / 64;
  const size_t cols = static_cast<size_t>(spec_.cols);
  // The popcount terms of every step (k, g), steps in order k * G + g, each step's terms in
  // descending shift (the kernels sum them Horner-wise: one shift per change of shift, not one per
  // term or run). Written without a branch on the input words (a zero word writes its term and
  // does not count it): whether a bit-plane word of real activations is zero varies from token to
  // token, and the mispredicted test was a tenth of a batched call.
  // each group's words' masks of its rows, once per group (not per term): group g's words
  // w0(g) .. w1(g) at word_mask[mask_at[g] ..]
  std::vector<uint64_t>& word_mask = scratch_unset<uint64_t, 1>(static_cast<size_t>(nw) + G);
  std::vector<int>& mask_at = scratch_unset<int, 4>(static_cast<size_t>(G));
  for (int g = 0, m = 0; g < G; ++g) {
    const int r0 = g * rpc, r1 = std::min(n_rows, r0 + rpc);
    mask_at[g] = m;
    for (int wd = r0 / 64; wd <= (r1 - 1) / 64; ++wd) {
      const int lo = std::max(r0, wd * 64) - wd * 64, hi = std::min(r1, wd * 64 + 64) - wd * 64;
      word_mask[m++] = (hi - lo == 64 ? ~uint64_t{0} : ((uint64_t{1} << (hi - lo)) - 1)) << lo;
    }
  }
  const size_t plane_stride = static_cast<size_t>(row_words_) * cols;  // one cell bit's plane
  size_t n_terms = 0;
  for (int k = 0; k < T; ++k) {
    const int wa = std::min(pieces[k].width, B - pieces[k].offset);  // the piece's input bits
    for (int g = 0; g < G; ++g) {
      step_begin[static_cast<size_t>(k) * G + g] = static_cast<int>(n_terms);
      const int w0 = g * rpc / 64, w1 = (std::min(n_rows, (g + 1) * rpc) - 1) / 64;
      const uint64_t* mask = word_mask.data() + mask_at[g];  // word w0 + i: mask[i]
      for (int sh = wa + c_bits - 2; sh >= 0; --sh)
        for (int a = std::max(0, sh - (c_bits - 1)); a <= std::min(wa - 1, sh); ++a) {
          const uint64_t* xb = cb + static_cast<size_t>(pieces[k].offset + a) * bit_stride;
          const size_t pb = static_cast<size_t>(sh - a) * plane_stride;
          for (int wd = w0; wd <= w1; ++wd) {
            const uint64_t xm = xb[wd] & mask[wd - w0];
            // no row of this group drives this bit: nothing to count
            terms[n_terms] = {xm, pb + static_cast<size_t>(wd) * cols, sh};
            n_terms += xm != 0 ? 1 : 0;
          }
        }
    }
  }
  step_begin[static_cast<size_t>(T) * G] = static_cast<int>(n_terms);
  return static_cast<int>(n_terms);
}


void Macro::compute_analog_fast(const int32_t* x, int n_rows, int64_t* y, int n_out, const uint64_t* cb,
                                size_t bit_stride, const detail::InputTerm* listed, const int* listed_steps) {
  std::fill(y, y + n_out, int64_t{0});
  if (n_rows == 0 || n_out == 0) return;
  const auto& slices = slices_;
  const auto& pieces = pieces_;
  const int S = static_cast<int>(slices.size()), T = static_cast<int>(pieces.size());
  const int C = n_out * S, cols = spec_.cols;
  const int rpc = spec_.rows_per_cycle, G = spec_.row_groups(n_rows);
  const int nw = (n_rows + 63) / 64;

  // Input bit-planes: cb[b * bit_stride + word], bit r%64 = bit b of the input's code; bit a of
  // piece k is bit offset_k + a of the code (detail::input_level). Given by the caller (a batch
  // forms them once for every macro of a row block), or formed here, eight rows at a time and
  // without a branch on the bits (a test per bit mispredicted half of random bits: a fifth of the
  // noise-free call).
  const int B = spec_.input_bits;
  if (cb == nullptr) {
    std::vector<uint64_t>& own = scratch_unset<uint64_t, 0>(static_cast<size_t>(B) * nw);
    detail::code_planes(x, n_rows, B, nw, own.data());
    cb = own.data();
    bit_stride = static_cast<size_t>(nw);
  }

  const int shift = adc_shift_;
  const uint32_t half = shift > 0 ? (1u << (shift - 1)) : 0u;
  const uint32_t top_code = static_cast<uint32_t>((int64_t{1} << spec_.adc_bits) - 1);
  const double read_sigma = spec_.read_noise_sigma;
  const bool noisy = read_sigma > 0.0 || cell_noisy_;
  // one row group's column partial sums (< 2^31, validate()); one step's read noise, in levels
  // (both written before they are read; at least C elements)
  std::vector<uint32_t>& p = scratch_unset<uint32_t, 0>(noisy ? C : 0);
  std::vector<double>& rn = scratch_unset<double, 0>(noisy ? C : 0);
  // Input cycle k's reconstructed sums over the row groups. Each is below 2 * full scale per
  // group (top code * 2^s < 2 * range, or p itself when s = 0), so with validate()'s limits the
  // sum stays below 2 * rows * 255 * 15 < 2^31: 32-bit lanes, twice the vector width of int64.
  // sum over k of sign_k 2^offset_k pk: written whole by analog_columns or weigh_codes
  std::vector<int64_t>& acc = scratch_unset<int64_t, 0>(C);
  // The popcount terms of every step (k, g) (list_input_terms), given by the caller (a batch
  // lists a token's once for every macro of a row block) or listed here; the fused kernel reads
  // them as they are, the other paths' popcounts by address (terms).
  const detail::InputTerm* iterms = listed;
  const int* step_begin = listed_steps;
  if (iterms == nullptr || step_begin == nullptr) {
    detail::InputTerm* own = scratch_unset<detail::InputTerm, 0>(max_input_terms(n_rows)).data();
    int* own_steps = scratch_unset<int, 0>(static_cast<size_t>(T) * G + 1).data();
    list_input_terms(cb, bit_stride, n_rows, own, own_steps);
    iterms = own;
    step_begin = own_steps;
  }
  const bool fused = !noisy || rounded_.k_max > 0;
  const int n_terms = step_begin[static_cast<size_t>(T) * G];
  std::vector<detail::PopTerm>& terms = scratch_unset<detail::PopTerm, 0>(fused ? 0 : static_cast<size_t>(n_terms));
  if (!fused)
    for (int t = 0; t < n_terms; ++t) terms[t] = {iterms[t].xm, planes_.data() + iterms[t].at, iterms[t].shift};

  // Shared by the noisy paths. The generator is counter-based: step (k, g) reads draws
  // base + (k * G + g) * C + col wherever it runs, as the reference takes them in order.
  const uint64_t base = noise_draws_;
  std::vector<uint32_t>& levels = scratch<uint32_t, 1>(0, 0u);  // the input levels of one row group, [row][k]
  const auto group_levels = [&](int r0, int r1) {
    levels.resize(static_cast<size_t>(std::max(rpc, r1 - r0)) * T);
    for (int r = r0; r < r1; ++r)
      for (int k = 0; k < T; ++k)
        levels[static_cast<size_t>(r - r0) * T + k] = detail::input_level(spec_, pieces[k], x[r]);
  };
  // Step (k, g)'s column partial sums into p and its read noise into rn (zeros without).
  const auto step_sums = [&](int k, int g) {
    const int s0 = step_begin[k * G + g];
    detail::popcount_columns(terms.data() + s0, step_begin[k * G + g + 1] - s0, C, p.data());
    if (read_sigma > 0.0) {
      noise_draws_ = base + static_cast<uint64_t>(k * G + g) * static_cast<uint64_t>(C);
      read_noise(read_sigma, rn.data(), C);
    } else {
      std::fill(rn.begin(), rn.end(), 0.0);
    }
  };
  // acc = sum over k of sign_k 2^offset_k pk for every input cycle k, pk_all[k * C + col] its
  // codes: sixteen columns at a time summed over k in registers (vector extensions, whatever the
  // target), stored once (a pass over acc per input cycle was a fifth of the rounded-noise call).
  const auto weigh_codes = [&](const std::vector<uint32_t>& pk_all) {
    using V8 = int64_t __attribute__((vector_size(64)));
    using U8 = uint32_t __attribute__((vector_size(32)));
    int col = 0;
    for (; col + 16 <= C; col += 16) {
      V8 a0 = {}, a1 = {};
      for (int k = 0; k < T; ++k) {
        const uint32_t* pkp = pk_all.data() + static_cast<size_t>(k) * C + col;
        U8 p0, p1;
        std::memcpy(&p0, pkp, sizeof p0);
        std::memcpy(&p1, pkp + 8, sizeof p1);
        const int64_t off = pieces[k].offset;
        const V8 w0 = __builtin_convertvector(p0, V8) << off, w1 = __builtin_convertvector(p1, V8) << off;
        if (pieces[k].sign > 0) {
          a0 += w0;
          a1 += w1;
        } else {
          a0 -= w0;
          a1 -= w1;
        }
      }
      std::memcpy(acc.data() + col, &a0, sizeof a0);
      std::memcpy(acc.data() + col + 8, &a1, sizeof a1);
    }
    for (; col < C; ++col) {
      int64_t a = 0;
      for (int k = 0; k < T; ++k) {
        const int64_t w = static_cast<int64_t>(pk_all[static_cast<size_t>(k) * C + col]) << pieces[k].offset;
        a += pieces[k].sign > 0 ? w : -w;
      }
      acc[col] = a;
    }
  };

  // each input cycle's sign and significance, as the kernels take them
  std::vector<int>& sign = scratch_unset<int, 5>(T);
  std::vector<int>& offset = scratch_unset<int, 6>(T);
  for (int k = 0; k < T; ++k) {
    sign[k] = pieces[k].sign;
    offset[k] = pieces[k].offset;
  }
  if (fused) {
    // ADC: the rule of MacroSpec::adc_shift(); for p >= 0 (p + half) >> s is exactly
    // quant::shift_round(p, s), which the reference path calls. Fused per column block.
    // Read noise alone at a step of one level (Macro::rounded_): code = clamp(p + k), k the
    // rounded noise of the conversion; step (k, g) reads offsets base + (k * G + g) * C + col, as
    // the reference does, in the same fused pass (p <= rows * 255 * 15 < 2^28 with validate()'s
    // limits, so p + k and the sums over the row groups fit in 32 bits).
    const detail::RoundedDraws draws{noise_key_, base, rounded_, static_cast<int32_t>(top_code)};
    detail::analog_columns(iterms, planes_.data(), step_begin, T, G, sign.data(), offset.data(),
                           {shift, half, top_code}, C, acc.data(), noisy ? &draws : nullptr, true);
  } else if (fixed_q_ > 0) {
    // The fixed noise model, every step of the call in one pass per column block
    // (detail::fixed_columns): the grid deviations of the rows each step drives summed in
    // integers, the read noise drawn onto the same grid, each code rounded in integers. The
    // partial sums are counted in the pass, the read noise drawn for all steps at once first:
    // step (k, g) reads draws base + (k * G + g) * C + col, as the reference.
    const size_t steps = static_cast<size_t>(T) * G;
    int32_t* R = nullptr;
    if (read_sigma > 0.0) {
      R = scratch_unset<int32_t, 2>(steps * C).data();
      noise_draws_ = base;
      read_noise_fixed(R, static_cast<int>(steps * C));
    }
    std::vector<int>& row_begin = scratch_unset<int, 1>(0);
    std::vector<int32_t>& row_off = scratch_unset<int32_t, 3>(0);  // (int32_t is int: slot 1 is row_begin's)
    // The deviations' subset sums (detail::subset_sums: one add per block of kSubsetRows rows
    // with a driven row instead of one per driven row); where a sum leaves int16 the rows are
    // listed instead.
    const detail::SubsetTable* table = cell_noise_q_.empty() ? nullptr : subset_table();
    const bool subsets = table != nullptr && table->top >= 0;
    int bits = 0;
    if (subsets) {
      bits = detail::list_fixed_subsets(cb, bit_stride, B, pieces.data(), T, n_rows, G, rpc, row_begin, row_off);
    } else if (!cell_noise_q_.empty()) {
      bits = detail::list_fixed_rows(cb, bit_stride, B, pieces.data(), T, n_rows, G, rpc, noise_qstride_, row_begin,
                                     row_off);
    }
    const detail::FixedSteps f{nullptr, terms.data(), step_begin, R, subsets ? table->sums.data() : cell_noise_q_.data(),
                               subsets ? detail::subset_tile(spec_.rows, rpc) : 0, noise_qstride_,
                               n_rows, rpc, row_begin.data(), row_off.data(),
                               bits, T, G, sign.data(), offset.data(), fixed_q_, shift,
                               static_cast<int32_t>(top_code), subsets ? table->top : noise_qmax_};
    detail::fixed_columns(f, C, acc.data());
  } else if (!cell_noise_q_.empty()) {
    // Cell noise summed in integers (cell_noise_q_: each deviation within 2^-(q+1) of its grid
    // value), row group by row group: S = sum of u * q exactly, so |pn - S 2^-q| <= (sum of u)
    // 2^-(q+1) (times 1 + 2^-20 for the reference's own roundings) for the reference's double
    // sum pn. Where that margin leaves the code in doubt (detail::adc_noisy_bounded), pn is
    // summed as the reference sums it, in double over the group's rows in ascending order, and
    // the ADC applied as adc_noisy does: the codes are the reference's.
    const double scale = std::ldexp(1.0, -shift), top = static_cast<double>(top_code);
    const double qscale = std::ldexp(1.0, -noise_q_), half_q = std::ldexp(1.0 + 0x1p-20, -noise_q_ - 1);
    std::vector<int32_t>& S = scratch<int32_t, 1>(static_cast<size_t>(T) * C, 0);
    std::vector<uint32_t>& pk_all = scratch<uint32_t, 2>(static_cast<size_t>(T) * C, 0u);
    std::vector<int>& uncertain = scratch<int, 3>(C, 0);
    for (int g = 0; g < G; ++g) {
      const int r0 = g * rpc, r1 = std::min(n_rows, r0 + rpc);
      group_levels(r0, r1);
      detail::cell_noise_isums(cell_noise_q_.data() + static_cast<size_t>(r0) * noise_qstride_, noise_qstride_,
                               r1 - r0, levels.data(), T, C, noise_qmax_, S.data());
      for (int k = 0; k < T; ++k) {
        step_sums(k, g);
        double count = 0.0;  // sum of u over the group's rows
        for (int r = r0; r < r1; ++r) count += levels[static_cast<size_t>(r - r0) * T + k];
        uint32_t* pk = pk_all.data() + static_cast<size_t>(k) * C;
        const int m = detail::adc_noisy_bounded(p.data(), S.data() + static_cast<size_t>(k) * C, qscale, rn.data(),
                                                count * half_q, C, scale, top, shift, pk, uncertain.data());
        for (int i = 0; i < m; ++i) {
          const int col = uncertain[i];
          double pn = 0.0;
          for (int r = r0; r < r1; ++r) {
            const uint32_t u = levels[static_cast<size_t>(r - r0) * T + k];
            if (u != 0) pn += static_cast<double>(u) * static_cast<double>(cell_noise_[static_cast<size_t>(r) * cols + col]);
          }
          detail::adc_noisy(p.data() + col, &pn, rn.data() + col, 1, scale, top, shift, pk + col);
        }
      }
    }
    weigh_codes(pk_all);
  } else {
    // Row group by row group, so that each cell deviation is read once per call: the cell noise
    // of every input cycle k of the group, pn[k * C + col] = sum over the group's rows in
    // ascending order of u_k(x_r) * delta[r][col] (u * delta is exact in double, the order is the
    // reference's, so the sums are bit-identical), then each step (k, g) in turn.
    const double scale = std::ldexp(1.0, -shift);  // exact: v * 2^-s == ldexp(v, -s)
    const double top = static_cast<double>(top_code);
    std::vector<double>& pn_all = scratch<double, 1>(cell_noise_.empty() ? 0 : static_cast<size_t>(T) * C, 0.0);
    std::vector<uint32_t>& pk_all = scratch<uint32_t, 2>(static_cast<size_t>(T) * C, 0u);
    const std::vector<double>& zeros = scratch<double, 2>(pn_all.empty() ? C : 0, 0.0);
    for (int g = 0; g < G; ++g) {
      const int r0 = g * rpc, r1 = std::min(n_rows, r0 + rpc);
      if (!cell_noise_.empty()) {
        group_levels(r0, r1);
        detail::cell_noise_sums(cell_noise_.data() + static_cast<size_t>(r0) * cols, cols, r1 - r0,
                                levels.data(), T, C, pn_all.data());
      }
      for (int k = 0; k < T; ++k) {
        step_sums(k, g);
        // A missing noise reads as +0.0, which changes no sum (p >= 0): the same v as the reference.
        const double* pnp = pn_all.empty() ? zeros.data() : pn_all.data() + static_cast<size_t>(k) * C;
        detail::adc_noisy(p.data(), pnp, rn.data(), C, scale, top, shift,
                          pk_all.data() + static_cast<size_t>(k) * C);
      }
    }
    weigh_codes(pk_all);
  }
  // Every noisy path leaves the generator after the call's T * G * C read-noise draws.
  if (read_sigma > 0.0) noise_draws_ = base + static_cast<uint64_t>(T) * G * static_cast<uint64_t>(C);
  std::vector<int>& slice_sign = scratch_unset<int, 7>(S);
  std::vector<int>& slice_offset = scratch_unset<int, 8>(S);  // read once, not per output
  for (int j = 0; j < S; ++j) {
    slice_sign[j] = slices[j].sign;
    slice_offset[j] = slices[j].offset;
  }
  detail::combine_slices(acc.data(), n_out, S, slice_sign.data(), slice_offset.data(), y);
  if (spec_.encoding == WeightEncoding::offset) {
    int64_t sx = 0;
    for (int r = 0; r < n_rows; ++r) sx += x[r];
    for (int o = 0; o < n_out; ++o) y[o] -= sx << (spec_.weight_bits - 1);
  }
  events_ += call_events(n_rows, n_out);
}

}  // namespace kvcim::cmodel::cim
