// MacroSpec: validation, the derived geometry (slices, cycles, ADC step) and the analytic event
// formulas of docs/cim_macro.md. The simulation counts events as they happen (reference path);
// tests hold it equal to these formulas, which the fast paths, the mapper and the energy model use.
#include <algorithm>
#include <cmath>
#include <string>

#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/cmodel/cim/macro_kind.hpp"
#include "kvcim/error.hpp"
#include "macro_layout.hpp"

namespace kvcim::cmodel::cim {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

void check_range(const std::string& where, const char* field, long long v, long long lo,
                 long long hi, const std::string& why = "") {
  if (v < lo || v > hi)
    fail(where, field, std::to_string(v),
         "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]" + why);
}

void check_sigma(const std::string& where, const char* field, double v) {
  if (!std::isfinite(v) || v < 0.0) fail(where, field, std::to_string(v), "a finite number >= 0");
}

}  // namespace

void MacroSpec::validate(const std::string& where) const {
  if (static_cast<size_t>(kind) >= std::size(kMacroKindNames))
    fail(where, "kind", std::to_string(static_cast<int>(kind)), "a kind of macro_kinds.hpp");
  if (encoding != WeightEncoding::twos_complement && encoding != WeightEncoding::offset &&
      encoding != WeightEncoding::differential)
    fail(where, "encoding", std::to_string(static_cast<int>(encoding)),
         "twos_complement, offset or differential");
  if (noise_model != NoiseModel::exact && noise_model != NoiseModel::fixed)
    fail(where, "noise_model", std::to_string(static_cast<int>(noise_model)), "exact or fixed");
  if (adc_range != AdcRange::full_scale && adc_range != AdcRange::calibrated)
    fail(where, "adc_range", std::to_string(static_cast<int>(adc_range)),
         "full_scale or calibrated");
  // 65536 rows keep every column partial sum (and its reconstruction) inside 32 bits.
  check_range(where, "rows", rows, 1, 65536);
  check_range(where, "cols", cols, 1, 65536);
  check_range(where, "cell_bits", cell_bits, 1, 4, " (SRAM 1, ReRAM up to 4)");
  // The analytic model (slices, events, ADC range) holds for any width up to 16 bits, which the
  // published macros need (INT12, [C4]); the bit-accurate Macro keeps int8 mirrors of its weights
  // and refuses more than 8 bits in its constructor.
  check_range(where, "weight_bits", weight_bits, 2, 16);
  check_range(where, "input_bits", input_bits, input_signed ? 2 : 1, 16,
              input_signed ? " (signed inputs need a sign bit and a magnitude bit)" : "");
  check_range(where, "input_bits_per_cycle", input_bits_per_cycle, 1,
              std::min(8, input_bits), " (at most input_bits)");
  check_range(where, "rows_per_cycle", rows_per_cycle, 1, rows, " (at most rows)");
  check_range(where, "adc_bits", adc_bits, 1, 16);
  check_range(where, "adc_share", adc_share, 1, cols, " (at most cols)");
  if (!(adc_clip > 0.0 && adc_clip <= 1.0))
    fail(where, "adc_clip", std::to_string(adc_clip), "a fraction of full scale in (0, 1]");
  check_sigma(where, "cell_noise_sigma", cell_noise_sigma);
  check_sigma(where, "read_noise_sigma", read_noise_sigma);
  const bool exact_reads = !converts(kind);
  if (exact_reads && cell_noise_sigma != 0.0)
    fail(where, "cell_noise_sigma", std::to_string(cell_noise_sigma),
         "0 for a digital macro (noise is an analog effect)");
  if (exact_reads && read_noise_sigma != 0.0)
    fail(where, "read_noise_sigma", std::to_string(read_noise_sigma),
         "0 for a digital macro (noise is an analog effect)");
  check_sigma(where, "drift_nu", drift_nu);
  check_sigma(where, "drift_nu_sigma", drift_nu_sigma);
  if (!(drift_t0_s > 0.0 && drift_t0_s < 1e30))
    fail(where, "drift_t0_s", std::to_string(drift_t0_s), "a positive time in seconds");
  check_sigma(where, "drift_time_s", drift_time_s);
  if (!(stuck_rate >= 0.0 && stuck_rate <= 1.0))
    fail(where, "stuck_rate", std::to_string(stuck_rate), "a probability in [0, 1]");
  if (exact_reads && stuck_rate != 0.0)
    fail(where, "stuck_rate", std::to_string(stuck_rate), "0 for a digital macro (its cells are read exactly)");
  if (exact_reads && (drift_nu != 0.0 || drift_nu_sigma != 0.0))
    fail(where, drift_nu != 0.0 ? "drift_nu" : "drift_nu_sigma",
         std::to_string(drift_nu != 0.0 ? drift_nu : drift_nu_sigma),
         "0 for a digital macro (conductance drift is an analog effect)");
  if (cols < slices_per_weight())
    fail(where, "cols", std::to_string(cols),
         "at least slices_per_weight() = " + std::to_string(slices_per_weight()) +
             " columns to hold one weight");
  macro_kind_model(kind).validate(*this, where);
}

int MacroSpec::slices_per_weight() const {
  switch (encoding) {
    case WeightEncoding::twos_complement: return 1 + ceil_div(weight_bits - 1, cell_bits);
    case WeightEncoding::offset: return ceil_div(weight_bits, cell_bits);
    default: return 2 * ceil_div(weight_bits - 1, cell_bits);
  }
}

int MacroSpec::weights_per_row() const { return cols / slices_per_weight(); }

int MacroSpec::input_cycles() const {
  return input_signed ? 1 + ceil_div(input_bits - 1, input_bits_per_cycle)
                      : ceil_div(input_bits, input_bits_per_cycle);
}

int MacroSpec::row_groups(int used_rows) const { return ceil_div(used_rows, rows_per_cycle); }

int32_t MacroSpec::weight_min() const {
  return encoding == WeightEncoding::differential ? -((1 << (weight_bits - 1)) - 1)
                                                  : -(1 << (weight_bits - 1));
}
int32_t MacroSpec::weight_max() const { return (1 << (weight_bits - 1)) - 1; }
int32_t MacroSpec::input_min() const { return input_signed ? -(1 << (input_bits - 1)) : 0; }
int32_t MacroSpec::input_max() const {
  return input_signed ? (1 << (input_bits - 1)) - 1 : (1 << input_bits) - 1;
}

int64_t MacroSpec::adc_full_scale() const { return macro_kind_model(kind).adc_full_scale(*this); }
int64_t MacroSpec::adc_low_code() const { return macro_kind_model(kind).adc_low_code(*this); }
int64_t MacroSpec::adc_top_code() const { return macro_kind_model(kind).adc_top_code(*this); }
int64_t MacroSpec::adc_count() const { return macro_kind_model(kind).adc_count(*this); }

int MacroSpec::adc_shift() const {
  const double range = adc_range == AdcRange::full_scale
                           ? static_cast<double>(adc_full_scale())
                           : adc_clip * static_cast<double>(adc_full_scale());
  const double top_code = static_cast<double>(adc_top_code());
  int s = 0;
  while (std::ldexp(top_code, s) < range) ++s;
  return s;
}

int MacroSpec::noise_grid_bits() const {
  if (noise_model != NoiseModel::fixed || !converts(kind)) return 0;
  if (cell_noise_sigma == 0.0 && read_noise_sigma == 0.0 && !drifts() && stuck_rate == 0.0) return 0;
  // Sums in int32 (detail::adc_fixed_code): |cell sum| < rows_per_cycle * u_max * 2^15 <= 2^30 and the
  // ADC's remainder and half step below 2^(q + s) <= 2^28.
  int dmax = 0;
  for (const auto& p : detail::input_pieces(*this)) dmax = std::max(dmax, p.width);
  if (static_cast<int64_t>(rows_per_cycle) * ((int64_t{1} << dmax) - 1) >= 32768) return 0;
  const int q = std::min(10, 28 - adc_shift());
  return q >= 8 ? q : 0;
}

namespace detail {

std::vector<Piece> weight_slices(const MacroSpec& spec) {
  std::vector<Piece> out;
  for (int j = 0; j < spec.slices_per_weight(); ++j) out.push_back(weight_slice(spec, j));
  return out;
}

std::vector<Piece> input_pieces(const MacroSpec& spec) {
  const int B = spec.input_bits, d = spec.input_bits_per_cycle;
  const int body = spec.input_signed ? B - 1 : B;
  std::vector<Piece> out;
  for (int off = 0; off < body; off += d) out.push_back({off, std::min(d, body - off), +1, false});
  if (spec.input_signed) out.push_back({B - 1, 1, -1, false});  // sign bit, weighted -2^(B-1)
  return out;
}

}  // namespace detail

namespace {
void check_shape(const MacroSpec& spec, const char* where, int n_rows, int n_out) {
  spec.validate(where);
  check_range(where, "n_rows", n_rows, 0, spec.rows, " (the macro's rows)");
  check_range(where, "n_out", n_out, 0, spec.weights_per_row(), " (weights_per_row())");
}
}  // namespace

// The formulas of docs/cim_macro.md, "Events": each kind's (macro_kind.hpp).
MacroEvents compute_events(const MacroSpec& spec, int n_rows, int n_out) {
  check_shape(spec, "cim::compute_events", n_rows, n_out);
  if (n_rows == 0 || n_out == 0) return {};
  return macro_kind_model(spec.kind).compute_events(spec, n_rows, n_out);
}

MacroEvents write_events(const MacroSpec& spec, int n_rows, int n_out) {
  check_shape(spec, "cim::write_events", n_rows, n_out);
  MacroEvents e;
  if (n_rows == 0 || n_out == 0) return e;
  e.cell_writes = int64_t{n_rows} * n_out * spec.slices_per_weight() * spec.cell_bits;
  e.cycles = n_rows;  // one wordline written per cycle, all its columns in parallel
  return e;
}

}  // namespace kvcim::cmodel::cim
