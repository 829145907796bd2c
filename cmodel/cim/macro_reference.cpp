// The bit-level reference of the macro: the circuit computed literally, one (column, input
// cycle, row group) partial sum at a time from the stored cell levels and the input bits, every
// event counted where it happens. Slow on purpose; the fast paths are proven equal to it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/cmodel/quant/quant.hpp"
#include "macro_layout.hpp"

namespace kvcim::cmodel::cim {

void Macro::compute_sliced_reference(const int32_t* x, int n_rows, int64_t* y, int n_out) {
  std::fill(y, y + n_out, int64_t{0});
  if (n_rows == 0 || n_out == 0) return;

  const auto slices = detail::weight_slices(spec_);
  const auto pieces = detail::input_pieces(spec_);
  const int S = static_cast<int>(slices.size()), T = static_cast<int>(pieces.size());
  const int G = spec_.row_groups(n_rows), C = n_out * S;
  const bool analog = spec_.kind == MacroKind::analog;
  const int shift = spec_.adc_shift();
  const int64_t top_code = (int64_t{1} << spec_.adc_bits) - 1;
  const double scale = std::ldexp(1.0, -shift);  // v * 2^-s, exact as ldexp(v, -s)
  const int n_adc = (spec_.cols + spec_.adc_share - 1) / spec_.adc_share;

  MacroEvents ev;
  // psum[col * T + k]: the column's partial sums of input cycle k, accumulated over row groups.
  std::vector<int64_t> psum(static_cast<size_t>(C) * T, 0);
  const bool rounded = rounded_.k_max > 0;  // read noise drawn rounded (Macro::rounded_)
  const bool fixed = !rounded && fixed_q_ > 0;  // the fixed noise model (Macro::fixed_q_)
  std::vector<double> read_draws(analog && spec_.read_noise_sigma > 0.0 && !rounded && !fixed ? C : 0);
  std::vector<int32_t> read_offsets(rounded || (fixed && spec_.read_noise_sigma > 0.0) ? C : 0);
  for (int k = 0; k < T; ++k) {
    ev.row_activations += n_rows;  // every used row is driven once in each input cycle
    for (int g = 0; g < G; ++g) {
      const int r0 = g * spec_.rows_per_cycle, r1 = std::min(n_rows, r0 + spec_.rows_per_cycle);
      // Read noise of this step's conversions (column order), one draw per conversion.
      if (rounded)
        read_noise_rounded(read_offsets.data(), C);
      else if (!read_offsets.empty())
        read_noise_fixed(read_offsets.data(), C);
      else if (analog && spec_.read_noise_sigma > 0.0)
        read_noise(spec_.read_noise_sigma, read_draws.data(), C);
      std::vector<int> adc_queue(n_adc, 0);  // conversions waiting at each shared ADC
      for (int col = 0; col < C; ++col) {
        ++ev.column_reads;
        int64_t read;
        if (!analog) {
          // Adder tree: the products (input piece level x cell level) of the group's rows.
          int64_t p = 0;
          for (int r = r0; r < r1; ++r) {
            const int64_t term = int64_t{detail::input_level(spec_, pieces[k], x[r])} * cell_level(r, col);
            if (r > r0) ++ev.adder_ops;
            p += term;
          }
          read = p;
        } else {
          // Bitline: sum of input level x (cell level + programmed deviation), plus read noise.
          int64_t p_int = 0, p_grid = 0;  // p_grid: the fixed model's deviations, grid units
          double p_noise = 0.0;
          for (int r = r0; r < r1; ++r) {
            const uint32_t u = detail::input_level(spec_, pieces[k], x[r]);
            const size_t idx = static_cast<size_t>(r) * spec_.cols + col;
            p_int += int64_t{u} * cell_level(r, col);
            if (fixed && cell_noisy_) p_grid += int64_t{u} * grid_deviation(r, col);
            else if (!cell_noise_.empty()) p_noise += static_cast<double>(u) * cell_noise_[idx];
          }
          if (!read_draws.empty()) p_noise += read_draws[col];
          int64_t code;
          if (!cell_noisy_ && spec_.read_noise_sigma == 0.0) {
            code = std::min(quant::shift_round(p_int, shift), top_code);  // p_int >= 0
          } else if (fixed) {
            // integers on the grid of 2^-q levels, rounded as detail::adc_fixed_code
            const int64_t v = (p_int << fixed_q_) + p_grid + (read_offsets.empty() ? 0 : read_offsets[col]);
            code = std::clamp(quant::shift_round(v, fixed_q_ + shift), int64_t{0}, top_code);
          } else if (rounded) {
            code = std::clamp(p_int + read_offsets[col], int64_t{0}, top_code);  // step 1: p + round(n)
          } else {
            const double v = std::floor((static_cast<double>(p_int) + p_noise) * scale + 0.5);
            code = static_cast<int64_t>(std::clamp(v, 0.0, static_cast<double>(top_code)));
          }
          ++ev.adc_conversions;
          ++adc_queue[col / spec_.adc_share];
          read = code << shift;
        }
        if (g > 0) ++ev.adder_ops;  // accumulate this group's partial sum onto the earlier ones
        psum[static_cast<size_t>(col) * T + k] += read;
      }
      // Digital: one adder-tree pass per step. Analog: the step lasts as long as the busiest ADC.
      ev.cycles += analog ? *std::max_element(adc_queue.begin(), adc_queue.end()) : 1;
    }
  }

  // Shift-and-add: each output combines its S x T partial sums, weighted sign * 2^offset.
  for (int o = 0; o < n_out; ++o) {
    int64_t acc = 0;
    bool first = true;
    for (int j = 0; j < S; ++j)
      for (int k = 0; k < T; ++k) {
        const int64_t term = slices[j].sign * pieces[k].sign *
                             (psum[static_cast<size_t>(o * S + j) * T + k]
                              << (slices[j].offset + pieces[k].offset));
        if (!first) ++ev.shift_add_ops;
        first = false;
        acc += term;
      }
    y[o] = acc;
  }
  if (spec_.encoding == WeightEncoding::offset) {
    // Offset encoding stored w + 2^(W-1): remove 2^(W-1) * sum(x), the input sum formed once.
    int64_t sx = x[0];
    for (int r = 1; r < n_rows; ++r) {
      sx += x[r];
      ++ev.adder_ops;
    }
    for (int o = 0; o < n_out; ++o) {
      y[o] -= sx << (spec_.weight_bits - 1);
      ++ev.shift_add_ops;
    }
  }
  events_ += ev;
}

}  // namespace kvcim::cmodel::cim
