// The analog_merged macro kind: a weight's slices are merged in analog before conversion, as
// binary-weighted capacitors, C-2C ladders or multi-level cells merge them. Each (output, input
// cycle, row group) is ONE conversion of the merged value
//   V = sum_j sign_j 2^off_j sum_{r in group} u_k(x_r) (L[r][o*S+j] + deviation) + read noise,
// by a converter whose range spans the merged range (bipolar when the encoding has negative
// slices), instead of one conversion per bit column (the analog kind). docs/cim_macro.md,
// "Weight bits merged in analog".
//
// Two implementations of the same function, proven equal by tests: compute_reference() forms every
// column sum from the stored cell levels and deviations and merges them; compute() takes the
// noise-free merged value from the weights themselves (sum_j sign_j 2^off_j L_j = the weight, or
// w + 2^(W-1) for the offset encoding), an integer product per input cycle, and adds the merged
// deviations from the vector kernels' column sums (cell_noise_sums, cell_noise_isums) in the
// reference's order. Both draw one read noise per conversion, conversion (k, g, o) taking draw
// D + (k G + g) N + o.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kvcim/cmodel/cim/macro_kind.hpp"
#include "kvcim/cmodel/quant/quant.hpp"
#include "kvcim/error.hpp"
#include "macro_access.hpp"
#include "macro_kernels.hpp"
#include "macro_layout.hpp"

namespace kvcim::cmodel::cim {
namespace {

using detail::MacroAccess;

// The largest merged sums of one conversion, positive and negative slices apart.
struct MergedRange {
  int64_t pos = 0, neg = 0;
};
MergedRange merged_range(const MacroSpec& spec) {
  int dmax = 0;
  for (const auto& p : detail::input_pieces(spec)) dmax = std::max(dmax, p.width);
  MergedRange r;
  for (const auto& s : detail::weight_slices(spec))
    (s.sign > 0 ? r.pos : r.neg) += ((int64_t{1} << s.width) - 1) << s.offset;
  const int64_t u = static_cast<int64_t>(spec.rows_per_cycle) * ((int64_t{1} << dmax) - 1);
  return {r.pos * u, r.neg * u};
}

// One conversion of a merged value: the ADC rule of MacroSpec (step 2^shift, round half up,
// codes clamped to [low, top]) on the value V (+ its noise), as either noise model sums it.
struct Converter {
  int shift = 0, q = 0;  // q: the fixed noise model's grid bits (0: exact model)
  int64_t low = 0, top = 0;
  double scale = 1.0;    // 2^-shift
  explicit Converter(const MacroSpec& spec, int fixed_q)
      : shift(spec.adc_shift()), q(fixed_q), low(spec.adc_low_code()), top(spec.adc_top_code()),
        scale(std::ldexp(1.0, -shift)) {}
  int64_t clean(int64_t v) const { return std::clamp(quant::shift_round(v, shift), low, top); }
  // exact model: the merged deviations and the read noise in double, as the analog kind's ADC
  int64_t exact(int64_t v, double noise) const {
    const double c = std::floor((static_cast<double>(v) + noise) * scale + 0.5);
    return static_cast<int64_t>(std::clamp(c, static_cast<double>(low), static_cast<double>(top)));
  }
  // fixed model: integers on the grid of 2^-q levels end to end
  int64_t fixed(int64_t v, int64_t grid) const {
    return std::clamp(quant::shift_round(v * (int64_t{1} << q) + grid, q + shift), low, top);
  }
  int64_t value(int64_t code) const { return code * (int64_t{1} << shift); }
};

// What a compute needs of the spec, both paths alike.
struct Plan {
  std::vector<detail::Piece> slices, pieces;
  int S, T, G, rpc, cols;
  bool offset, noisy, fixed;
  Plan(const Macro& m, int n_rows)
      : slices(detail::weight_slices(m.spec())), pieces(detail::input_pieces(m.spec())),
        S(static_cast<int>(slices.size())), T(static_cast<int>(pieces.size())), G(m.spec().row_groups(n_rows)),
        rpc(m.spec().rows_per_cycle), cols(m.spec().cols), offset(m.spec().encoding == WeightEncoding::offset),
        noisy(m.spec().read_noise_sigma > 0.0 || !MacroAccess::deviations(m).empty()),
        fixed(MacroAccess::fixed_q(m) > 0) {}
  // y[o] = sum_k sign_k 2^off_k acc[o T + k], less the offset encoding's 2^(W-1) sum(x)
  void recombine(const MacroSpec& spec, const std::vector<int64_t>& acc, const int32_t* x, int n_rows, int64_t* y,
                 int n_out) const {
    int64_t sx = 0;
    for (int r = 0; r < n_rows && offset; ++r) sx += x[r];
    for (int o = 0; o < n_out; ++o) {
      int64_t v = 0;
      for (int k = 0; k < T; ++k) v += pieces[k].sign * (acc[static_cast<size_t>(o) * T + k] << pieces[k].offset);
      y[o] = offset ? v - (sx << (spec.weight_bits - 1)) : v;
    }
  }
};

// Merged noise-free sums of one (input cycle, row group) from the weights: v[o] = sum over the
// group's rows of u_r * enc(w[r][o]), in Acc (int32 when no sum can leave it).
template <class Acc>
void merged_sums(const int8_t* w, int wpr, const uint32_t* u, int r0, int r1, int n_out, Acc* v) {
  std::fill(v, v + n_out, Acc{0});
  for (int r = r0; r < r1; ++r) {
    const Acc ur = static_cast<Acc>(u[r]);
    if (ur == 0) continue;
    const int8_t* wr = w + static_cast<size_t>(r) * wpr;
    for (int o = 0; o < n_out; ++o) v[o] += ur * wr[o];
  }
}

class MergedKind final : public MacroKindModel {
 public:
  void validate(const MacroSpec& spec, const std::string& where) const override {
    if (merged_range(spec).neg > 0 && spec.adc_bits < 2)
      fail(where, "adc_bits", std::to_string(spec.adc_bits),
           "at least 2 for analog_merged with signed weights (its converter is bipolar: a sign and a magnitude bit)");
  }
  int64_t adc_full_scale(const MacroSpec& spec) const override {
    const MergedRange r = merged_range(spec);
    return std::max(r.pos, r.neg);
  }
  int64_t adc_low_code(const MacroSpec& spec) const override {
    return merged_range(spec).neg > 0 ? -(int64_t{1} << (spec.adc_bits - 1)) : 0;
  }
  int64_t adc_top_code(const MacroSpec& spec) const override {
    return (int64_t{1} << (merged_range(spec).neg > 0 ? spec.adc_bits - 1 : spec.adc_bits)) - 1;
  }
  // One converter per adc_share outputs.
  int64_t adc_count(const MacroSpec& spec) const override {
    return (spec.weights_per_row() + spec.adc_share - 1) / spec.adc_share;
  }
  // docs/cim_macro.md, "Events": every bit column is still read (charged onto the merge), but
  // each output converts once per (input cycle, row group); only the input cycles are shifted
  // and added.
  MacroEvents compute_events(const MacroSpec& spec, int n_rows, int n_out) const override {
    MacroEvents e;
    const int64_t R = n_rows, N = n_out, S = spec.slices_per_weight(), T = spec.input_cycles();
    const int64_t G = spec.row_groups(n_rows);
    const bool offset = spec.encoding == WeightEncoding::offset;
    e.row_activations = R * T;
    e.column_reads = N * S * T * G;
    e.adc_conversions = N * T * G;
    e.adder_ops = N * T * (G - 1) + (offset ? R - 1 : 0);
    e.shift_add_ops = N * (T - 1) + (offset ? N : 0);
    e.cycles = T * G * std::min<int64_t>(spec.adc_share, N);
    return e;
  }
  void compute(Macro& m, const int32_t* x, int n_rows, int64_t* y, int n_out) const override {
    run(m, x, n_rows, y, n_out, false);
  }
  void compute_reference(Macro& m, const int32_t* x, int n_rows, int64_t* y, int n_out) const override {
    run(m, x, n_rows, y, n_out, true);
  }

 private:
  // Both paths: acc[o T + k] = the reconstructed conversions of output o in input cycle k, summed
  // over the row groups; then the shift-and-add over the input cycles.
  void run(Macro& m, const int32_t* x, int n_rows, int64_t* y, int n_out, bool reference) const {
    std::fill(y, y + n_out, int64_t{0});
    if (n_rows == 0 || n_out == 0) return;
    const Plan pl(m, n_rows);
    const Converter adc(m.spec(), MacroAccess::fixed_q(m));
    std::vector<int64_t> acc(static_cast<size_t>(n_out) * pl.T, 0);
    MacroEvents ev;
    if (reference) {
      reference_codes(m, pl, adc, x, n_rows, n_out, acc, ev);
      ev.shift_add_ops += static_cast<int64_t>(n_out) * (pl.T - 1) + (pl.offset ? n_out : 0);
      if (pl.offset) ev.adder_ops += n_rows - 1;  // the input sum, formed once
    } else {
      fast_codes(m, pl, adc, x, n_rows, n_out, acc);
      ev = compute_events(m.spec(), n_rows, n_out);
    }
    pl.recombine(m.spec(), acc, x, n_rows, y, n_out);
    MacroAccess::events(m) += ev;
  }
  // every column sum from the stored levels and deviations, merged; each event counted
  static void reference_codes(Macro& m, const Plan& pl, const Converter& adc, const int32_t* x, int n_rows,
                              int n_out, std::vector<int64_t>& acc, MacroEvents& ev);
  // the merged value from the weights, the merged deviations from the kernels' column sums
  static void fast_codes(Macro& m, const Plan& pl, const Converter& adc, const int32_t* x, int n_rows, int n_out,
                         std::vector<int64_t>& acc);
};

void MergedKind::reference_codes(Macro& m, const Plan& pl, const Converter& adc, const int32_t* x, int n_rows,
                                 int n_out, std::vector<int64_t>& acc, MacroEvents& ev) {
  const MacroSpec& spec = m.spec();
  const auto& dev = MacroAccess::deviations(m);
  const bool read = spec.read_noise_sigma > 0.0;
  std::vector<double> rn(read && !pl.fixed ? n_out : 0);
  std::vector<int32_t> rq(read && pl.fixed ? n_out : 0);
  for (int k = 0; k < pl.T; ++k) {
    ev.row_activations += n_rows;
    for (int g = 0; g < pl.G; ++g) {
      const int r0 = g * pl.rpc, r1 = std::min(n_rows, r0 + pl.rpc);
      if (!rn.empty()) MacroAccess::read_noise(m, rn.data(), n_out);  // one draw per conversion
      if (!rq.empty()) MacroAccess::read_noise_fixed(m, rq.data(), n_out);
      std::vector<int> queue((n_out + spec.adc_share - 1) / spec.adc_share, 0);
      for (int o = 0; o < n_out; ++o) {
        int64_t v = 0, grid = 0;  // the merged sum; the fixed model's merged deviations (grid units)
        double noise = 0.0;       // the exact model's merged deviations
        for (int j = 0; j < pl.S; ++j) {
          const int col = o * pl.S + j;
          ++ev.column_reads;
          int64_t p = 0, pg = 0;
          double pn = 0.0;
          for (int r = r0; r < r1; ++r) {
            const uint32_t u = detail::input_level(spec, pl.pieces[k], x[r]);
            if (u == 0) continue;
            const size_t idx = static_cast<size_t>(r) * pl.cols + col;
            p += int64_t{u} * MacroAccess::level(m, r, col);
            if (dev.empty()) continue;
            if (pl.fixed) pg += int64_t{u} * MacroAccess::grid_deviation(m, r, col);
            else pn += static_cast<double>(u) * dev[idx];
          }
          // the merge: slice j's charge weighted sign_j 2^off_j
          const int sign = pl.slices[j].sign, off = pl.slices[j].offset;
          v += sign * (p << off);
          grid += sign * (pg << off);
          noise += sign * std::ldexp(pn, off);
        }
        int64_t code;
        if (!pl.noisy) code = adc.clean(v);
        else if (pl.fixed) code = adc.fixed(v, grid + (rq.empty() ? 0 : rq[o]));
        else code = adc.exact(v, noise + (rn.empty() ? 0.0 : rn[o]));
        ++ev.adc_conversions;
        ++queue[o / spec.adc_share];
        if (g > 0) ++ev.adder_ops;
        acc[static_cast<size_t>(o) * pl.T + k] += adc.value(code);
      }
      ev.cycles += *std::max_element(queue.begin(), queue.end());
    }
  }
}

void MergedKind::fast_codes(Macro& m, const Plan& pl, const Converter& adc, const int32_t* x, int n_rows, int n_out,
                            std::vector<int64_t>& acc) {
  const MacroSpec& spec = m.spec();
  const int C = n_out * pl.S, wpr = spec.weights_per_row(), T = pl.T, G = pl.G;
  const int8_t* w = MacroAccess::weights(m);
  const auto& dev = MacroAccess::deviations(m);
  const int16_t* qdev = MacroAccess::grid_deviations(m);
  const bool read = spec.read_noise_sigma > 0.0;
  const bool exact_cells = !dev.empty() && !pl.fixed, grid_cells = !dev.empty() && pl.fixed;

  // Input levels, [k][row] for the sums and [row][k] for the cell-noise kernels.
  std::vector<uint32_t> lv(static_cast<size_t>(T) * n_rows), levels;
  int dmax = 0;
  for (int k = 0; k < T; ++k) {
    dmax = std::max(dmax, pl.pieces[k].width);
    for (int r = 0; r < n_rows; ++r)
      lv[static_cast<size_t>(k) * n_rows + r] = detail::input_level(spec, pl.pieces[k], x[r]);
  }
  // |u w| <= (2^dmax - 1) 2^(W-1) per row (the offset encoding's 2^(W-1) U added apart)
  const bool narrow = static_cast<double>(pl.rpc) * std::ldexp(1.0, dmax + spec.weight_bits - 1) <
                      static_cast<double>(std::numeric_limits<int32_t>::max());
  std::vector<int32_t> v32(narrow ? n_out : 0);
  std::vector<int64_t> v64(static_cast<size_t>(n_out));
  std::vector<double> pn(exact_cells ? static_cast<size_t>(T) * C : 0), rn(read && !pl.fixed ? n_out : 0);
  std::vector<int32_t> S(grid_cells ? static_cast<size_t>(T) * C : 0), rq(read && pl.fixed ? n_out : 0);
  const uint64_t base = MacroAccess::noise_draws(m);
  for (int g = 0; g < G; ++g) {
    const int r0 = g * pl.rpc, r1 = std::min(n_rows, r0 + pl.rpc);
    if (exact_cells || grid_cells) {
      levels.resize(static_cast<size_t>(r1 - r0) * T);
      for (int r = r0; r < r1; ++r)
        for (int k = 0; k < T; ++k) levels[static_cast<size_t>(r - r0) * T + k] = lv[static_cast<size_t>(k) * n_rows + r];
      if (exact_cells)
        detail::cell_noise_sums(dev.data() + static_cast<size_t>(r0) * pl.cols, pl.cols, r1 - r0, levels.data(), T, C,
                                pn.data());
      else
        detail::cell_noise_isums(qdev + static_cast<size_t>(r0) * MacroAccess::grid_stride(m),
                                 MacroAccess::grid_stride(m), r1 - r0, levels.data(), T, C, MacroAccess::grid_max(m),
                                 S.data());
    }
    for (int k = 0; k < T; ++k) {
      const uint32_t* u = lv.data() + static_cast<size_t>(k) * n_rows;
      if (narrow) {
        merged_sums(w, wpr, u, r0, r1, n_out, v32.data());
        std::copy(v32.begin(), v32.end(), v64.begin());
      } else {
        merged_sums(w, wpr, u, r0, r1, n_out, v64.data());
      }
      if (pl.offset) {
        int64_t U = 0;
        for (int r = r0; r < r1; ++r) U += u[r];
        for (auto& v : v64) v += U << (spec.weight_bits - 1);
      }
      if (read) {
        MacroAccess::noise_draws(m) = base + (static_cast<uint64_t>(k) * G + g) * static_cast<uint64_t>(n_out);
        if (pl.fixed) MacroAccess::read_noise_fixed(m, rq.data(), n_out);
        else MacroAccess::read_noise(m, rn.data(), n_out);
      }
      for (int o = 0; o < n_out; ++o) {
        int64_t code;
        if (!pl.noisy) {
          code = adc.clean(v64[o]);
        } else if (pl.fixed) {
          int64_t grid = rq.empty() ? 0 : rq[o];
          for (int j = 0; j < pl.S && grid_cells; ++j)
            grid += pl.slices[j].sign * (int64_t{S[static_cast<size_t>(k) * C + o * pl.S + j]} << pl.slices[j].offset);
          code = adc.fixed(v64[o], grid);
        } else {
          // the reference's merge order: the slices' sums ascending, then the read draw
          double noise = 0.0;
          for (int j = 0; j < pl.S && exact_cells; ++j)
            noise += pl.slices[j].sign * std::ldexp(pn[static_cast<size_t>(k) * C + o * pl.S + j], pl.slices[j].offset);
          code = adc.exact(v64[o], noise + (rn.empty() ? 0.0 : rn[o]));
        }
        acc[static_cast<size_t>(o) * T + k] += adc.value(code);
      }
    }
  }
  if (read) MacroAccess::noise_draws(m) = base + static_cast<uint64_t>(T) * G * static_cast<uint64_t>(n_out);
}

}  // namespace

const MacroKindModel& macro_kind_analog_merged() {
  static const MergedKind kind;
  return kind;
}

}  // namespace kvcim::cmodel::cim
