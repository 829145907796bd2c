// Internal to the macro C model: what a kind model (macro_kind.hpp) may use of a Macro's state.
// The stored levels, deviations and weight mirror are Macro's (written by its write operations);
// a kind's compute reads them and draws its read noise from the macro's generator.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvcim/cmodel/cim/macro.hpp"

namespace kvcim::cmodel::cim::detail {

struct MacroAccess {
  static const MacroSpec& spec(const Macro& m) { return m.spec_; }
  static MacroEvents& events(Macro& m) { return m.events_; }
  // a cell's level (from the bit-planes); [rows, cols] deviations (empty without); the fixed model's grid
  // deviations (Macro::cell_noise_q_'s layout) and its grid bits (0: exact model)
  static uint32_t level(const Macro& m, int row, int col) { return m.cell_level(row, col); }
  static const std::vector<float>& deviations(const Macro& m) { return m.cell_noise_; }
  static const int16_t* grid_deviations(const Macro& m) { return m.cell_noise_q_.data(); }
  static int32_t grid_deviation(const Macro& m, int row, int col) { return m.grid_deviation(row, col); }
  static size_t grid_stride(const Macro& m) { return m.noise_qstride_; }  // row stride of grid_deviations
  static int32_t grid_max(const Macro& m) { return m.noise_qmax_; }       // a bound on |grid_deviations|
  static int fixed_q(const Macro& m) { return m.fixed_q_; }
  static const int8_t* weights(const Macro& m) { return m.weights_.data(); }  // [rows, weights_per_row]
  // The generator: draws taken so far; the next n read-noise draws (sigma x N(0,1) in double, or
  // on the fixed model's grid).
  static uint64_t& noise_draws(Macro& m) { return m.noise_draws_; }
  static void read_noise(Macro& m, double* out, int n) { m.read_noise(m.spec_.read_noise_sigma, out, n); }
  static void read_noise_fixed(Macro& m, int32_t* out, int n) { m.read_noise_fixed(out, n); }
  // The digital and the per-column analog kinds' computes, Macro's own (macro_fast.cpp,
  // macro_reference.cpp).
  static void digital_fast(Macro& m, const int32_t* x, int n_rows, int64_t* y, int n_out) {
    m.compute_digital_fast(x, n_rows, y, n_out);
  }
  static void analog_fast(Macro& m, const int32_t* x, int n_rows, int64_t* y, int n_out) {
    m.compute_analog_fast(x, n_rows, y, n_out);
  }
  static void sliced_reference(Macro& m, const int32_t* x, int n_rows, int64_t* y, int n_out) {
    m.compute_sliced_reference(x, n_rows, y, n_out);
  }
};

}  // namespace kvcim::cmodel::cim::detail
