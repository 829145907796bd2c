// MacroSpec's field table (kvcim/spec_fields.hpp): the spec's `macro` section (read, written,
// documented), Python's MacroSpec and its stub. The ranges are the parser's; MacroSpec::validate
// holds the dependent ones (rows_per_cycle <= rows, adc_share <= cols, input widths).
#pragma once
#include <span>
#include <string_view>
#include <tuple>

#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/spec_fields.hpp"

namespace kvcim::cmodel::cim {

inline constexpr std::string_view kAdcRangeNames[] = {"full_scale", "calibrated"};
inline constexpr std::string_view kEncodingNames[] = {"twos_complement", "offset", "differential"};
inline constexpr std::string_view kNoiseModelNames[] = {"exact", "fixed"};

constexpr int spec_kind(const MacroSpec& m) { return static_cast<int>(m.kind); }
constexpr auto spec_fields(const MacroSpec*) {
  using Self = MacroSpec;
  using ::kvcim::choice_field, ::kvcim::flag_field, ::kvcim::path_field, ::kvcim::range_field;
  constexpr unsigned analog = kConvertingMacroKinds;  // the kinds with converters (macro_kinds.hpp)
  using Names = std::span<const std::string_view>;
  return std::tuple{
      choice_field("kind", &Self::kind, Names(kMacroKindNames), "how the columns are read: exact adder trees, an ADC per bit column, or weight bits merged before one conversion per output (docs/cim_macro.md, Macro kinds)").needed(),
      // 65536 rows keep every column partial sum (and its reconstruction) inside 32 bits
      range_field("rows", &Self::rows, 1, 65536, "", "wordlines").needed(),
      range_field("cols", &Self::cols, 1, 65536, "", "bitlines").needed(),
      range_field("cell_bits", &Self::cell_bits, 1, 4, "bits", "bits one cell holds (SRAM 1, ReRAM up to 4)"),
      range_field("weight_bits", &Self::weight_bits, 2, 16, "bits", "stored weight width (precision.weight_bits)").derived().always_reported(),
      range_field("input_bits", &Self::input_bits, 1, 16, "bits", "input width (precision.activation_bits)").derived().always_reported(),
      flag_field("input_signed", &Self::input_signed, "two's complement inputs (false: unsigned)").derived(),
      range_field("input_bits_per_cycle", &Self::input_bits_per_cycle, 1, 8, "bits", "DAC resolution; 1 = bit-serial"),
      range_field("rows_per_cycle", &Self::rows_per_cycle, 1, 65536, "", "rows summed per conversion (at most rows)")
          .by_default("rows"),
      range_field("adc_bits", &Self::adc_bits, 1, 16, "bits", "ADC resolution").only(analog).always_reported(),
      range_field("adc_share", &Self::adc_share, 1, 65536, "", "columns per ADC, time-multiplexed (at most cols)").only(analog).always_reported(),
      choice_field("adc_range", &Self::adc_range, Names(kAdcRangeNames),
                   "full_scale: the ADC spans the largest sum; calibrated: adc_clip of it").only(analog),
      range_field("adc_clip", &Self::adc_clip, 1e-6, 1.0, "fraction", "calibrated range as a fraction of full scale").only(analog),
      choice_field("encoding", &Self::encoding, Names(kEncodingNames), "how a signed weight is stored in cells"),
      range_field("cell_noise_sigma", &Self::cell_noise_sigma, 0.0, 1e6, "levels", "Gaussian, drawn once per cell when written (0 when digital)"),
      range_field("read_noise_sigma", &Self::read_noise_sigma, 0.0, 1e6, "levels", "Gaussian, added to each column read (0 when digital)"),
      range_field("seed", &Self::seed, 0, 9.3e18, "", "the counter-based generator of the noises"),
      range_field("drift_nu", &Self::drift_nu, 0.0, 10.0, "", "mean conductance drift exponent nu").only(analog).always_reported(),
      range_field("drift_nu_sigma", &Self::drift_nu_sigma, 0.0, 10.0, "", "spread (sigma) of nu across cells").only(analog).always_reported(),
      range_field("drift_t0_s", &Self::drift_t0_s, 1e-12, 1e12, "s", "reference time t0 of the drift law").only(analog),
      range_field("drift_time_s", &Self::drift_time_s, 0.0, 1e12, "s", "time since programming at which the weights are read").only(analog).always_reported(),
      flag_field("drift_compensation", &Self::drift_compensation, "reads rescaled by the mean drift").only(analog).always_reported(),
      range_field("stuck_rate", &Self::stuck_rate, 0.0, 1.0, "fraction", "cells stuck at their lowest or highest level").only(analog).always_reported(),
      choice_field("noise_model", &Self::noise_model, Names(kNoiseModelNames),
                   "fixed: deviations and read noise on a 2^-10-level grid, summed in integers; exact: in double (the reference)").only(analog),
      path_field("describes", &Self::describes, "configs/macros/*.yaml",
                 "the published macro these are: its circuit prices the macro events at the comparison node (docs/calibration.md)"),
  };
}

}  // namespace kvcim::cmodel::cim
