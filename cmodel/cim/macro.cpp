// Macro: the stored state (cell levels, programmed cell noise, the noise generator) and the
// write operations. compute() dispatches to a fast path (macro_fast.cpp); compute_reference()
// is the literal circuit (macro_reference.cpp).
#include <cmath>
#include <numbers>
#include <string>

#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/error.hpp"
#include "macro_kernels.hpp"
#include "macro_layout.hpp"

namespace kvcim::cmodel::cim {
namespace {
constexpr const char* kWhere = "cim::Macro";

void check_index(const char* field, long long v, long long n) {
  if (v < 0 || v >= n)
    fail(kWhere, field, std::to_string(v), "an index in [0, " + std::to_string(n) + ")");
}
void check_count(const char* field, long long v, long long n) {
  if (v < 0 || v > n)
    fail(kWhere, field, std::to_string(v), "a count in [0, " + std::to_string(n) + "]");
}
}  // namespace

Macro::Macro(const MacroSpec& spec) : spec_(spec), noise_key_(detail::noise_key(spec.seed)) {
  spec_.validate("cim::MacroSpec");
  // The simulation's fast paths mirror weights as int8 (MacroSpec::validate allows 16 bits for
  // the analytic event model only).
  if (spec_.weight_bits > 8)
    fail("cim::MacroSpec", "weight_bits", std::to_string(spec_.weight_bits),
         "an integer in [2, 8] for the bit-accurate Macro (wider weights are priced analytically only)");
  const size_t n = static_cast<size_t>(spec_.rows) * spec_.cols;
  cells_.assign(n, 0);
  if (spec_.kind == MacroKind::analog && spec_.cell_noise_sigma > 0.0) cell_noise_.assign(n, 0.f);
  row_words_ = (spec_.rows + 63) / 64;
  slices_ = detail::weight_slices(spec_);
  planes_.assign(static_cast<size_t>(spec_.cell_bits) * row_words_ * spec_.cols, 0);
  weights_.assign(static_cast<size_t>(spec_.rows) * spec_.weights_per_row(), 0);
  // Erased state: every weight slot encodes 0 (offset encoding: the level of the offset itself).
  // Not counted as writes and noise-free: noise is drawn when a weight is programmed.
  const double sigma = spec_.cell_noise_sigma;
  spec_.cell_noise_sigma = 0.0;
  const int wpr = spec_.weights_per_row();
  for (int r = 0; r < spec_.rows; ++r)
    for (int o = 0; o < wpr; ++o) store(r, o, 0);
  spec_.cell_noise_sigma = sigma;
}

double Macro::gaussian() { return detail::normal_draw(noise_key_, noise_draws_++); }

void Macro::read_noise(double sigma, double* out, int n) {
  // Drawn as floats, then scaled in double: out[i] = sigma * draw, as both paths use it.
  if (draws_.size() < static_cast<size_t>(n)) draws_.resize(n);
  detail::normal_draws(noise_key_, noise_draws_, n, draws_.data());
  for (int i = 0; i < n; ++i) out[i] = sigma * static_cast<double>(draws_[i]);
  noise_draws_ += static_cast<uint64_t>(n);
}

void Macro::store(int row, int out, int32_t w) {
  const int S = static_cast<int>(slices_.size());
  for (int j = 0; j < S; ++j) {
    const int col = out * S + j;
    const uint32_t level = detail::slice_level(spec_, slices_[j], w);
    const size_t idx = static_cast<size_t>(row) * spec_.cols + col;
    cells_[idx] = static_cast<uint8_t>(level);
    for (int b = 0; b < spec_.cell_bits; ++b) {
      uint64_t& word = planes_[(static_cast<size_t>(b) * row_words_ + row / 64) * spec_.cols + col];
      const uint64_t bit = uint64_t{1} << (row % 64);
      word = ((level >> b) & 1u) ? (word | bit) : (word & ~bit);
    }
    // One programming-variation draw per cell written, slices in ascending order.
    if (!cell_noise_.empty() && spec_.cell_noise_sigma > 0.0)
      cell_noise_[idx] = static_cast<float>(spec_.cell_noise_sigma * gaussian());
  }
  weights_[static_cast<size_t>(row) * (spec_.cols / S) + out] = static_cast<int8_t>(w);
}

int32_t Macro::read(int row, int out) const {
  check_index("row", row, spec_.rows);
  check_index("out", out, spec_.weights_per_row());
  const auto& slices = slices_;
  const int S = static_cast<int>(slices.size());
  int64_t w = 0;
  for (int j = 0; j < S; ++j)
    w += static_cast<int64_t>(slices[j].sign) *
         (int64_t{cells_[static_cast<size_t>(row) * spec_.cols + out * S + j]} << slices[j].offset);
  if (spec_.encoding == WeightEncoding::offset) w -= int64_t{1} << (spec_.weight_bits - 1);
  return static_cast<int32_t>(w);
}

void Macro::write(int row, int out, int32_t w) {
  check_index("row", row, spec_.rows);
  check_index("out", out, spec_.weights_per_row());
  if (w < spec_.weight_min() || w > spec_.weight_max())
    fail(kWhere, "w", std::to_string(w),
         "a weight in [" + std::to_string(spec_.weight_min()) + ", " +
             std::to_string(spec_.weight_max()) + "] (weight_bits = " +
             std::to_string(spec_.weight_bits) + ")");
  store(row, out, w);
  events_ += write_events(spec_, 1, 1);
}

namespace {
// All values are checked before any cell changes, so a rejected write leaves the macro intact.
void check_weights(const MacroSpec& spec, const int8_t* w, long long n) {
  if (n > 0 && w == nullptr) fail(kWhere, "w", "null", "a readable weight array");
  for (long long i = 0; i < n; ++i)
    if (w[i] < spec.weight_min() || w[i] > spec.weight_max())
      fail(kWhere, "w[" + std::to_string(i) + "]", std::to_string(w[i]),
           "a weight in [" + std::to_string(spec.weight_min()) + ", " +
               std::to_string(spec.weight_max()) + "] (weight_bits = " +
               std::to_string(spec.weight_bits) + ")");
}
}  // namespace

void Macro::write_block(const int8_t* w, int n_rows, int n_out) {
  check_count("n_rows", n_rows, spec_.rows);
  check_count("n_out", n_out, spec_.weights_per_row());
  check_weights(spec_, w, static_cast<long long>(n_rows) * n_out);
  for (int r = 0; r < n_rows; ++r)
    for (int o = 0; o < n_out; ++o) store(r, o, w[static_cast<size_t>(r) * n_out + o]);
  events_ += write_events(spec_, n_rows, n_out);
}

void Macro::write_row(int row, const int8_t* w, int n_out) {
  check_index("row", row, spec_.rows);
  check_count("n_out", n_out, spec_.weights_per_row());
  check_weights(spec_, w, n_out);
  for (int o = 0; o < n_out; ++o) store(row, o, w[o]);
  events_ += write_events(spec_, 1, n_out);
}

void Macro::write_column_group(int out, const int8_t* w, int n_rows) {
  check_index("out", out, spec_.weights_per_row());
  check_count("n_rows", n_rows, spec_.rows);
  check_weights(spec_, w, n_rows);
  for (int r = 0; r < n_rows; ++r) store(r, out, w[r]);
  events_ += write_events(spec_, n_rows, 1);
}

void Macro::check_compute(const int32_t* x, int n_rows, const int64_t* y, int n_out,
                          const char* where) const {
  check_count("n_rows", n_rows, spec_.rows);
  check_count("n_out", n_out, spec_.weights_per_row());
  if (n_rows > 0 && x == nullptr) fail(where, "x", "null", "n_rows readable inputs");
  if (n_out > 0 && y == nullptr) fail(where, "y", "null", "n_out writable outputs");
  const int32_t lo = spec_.input_min(), hi = spec_.input_max();
  for (int r = 0; r < n_rows; ++r)
    if (x[r] < lo || x[r] > hi)
      fail(where, "x[" + std::to_string(r) + "]", std::to_string(x[r]),
           "an input in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (input_bits = " +
               std::to_string(spec_.input_bits) +
               (spec_.input_signed ? ", signed)" : ", unsigned)"));
}

void Macro::compute(const int32_t* x, int n_rows, int64_t* y, int n_out) {
  check_compute(x, n_rows, y, n_out, kWhere);
  if (spec_.kind == MacroKind::digital)
    compute_digital_fast(x, n_rows, y, n_out);
  else
    compute_analog_fast(x, n_rows, y, n_out);
}

}  // namespace kvcim::cmodel::cim
