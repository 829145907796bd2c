// Macro: the stored state (cell levels, programmed cell noise, the noise generator) and the
// write operations. compute() dispatches to a fast path (macro_fast.cpp); compute_reference()
// is the literal circuit (macro_reference.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <string>

#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/cmodel/cim/macro_kind.hpp"
#include "kvcim/error.hpp"
#include "macro_fixed_subsets.hpp"
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
  // A digital macro keeps its weights (weights_) and derives a cell's level from them
  // (cell_level); a converting macro keeps its cells' bits, as bit-planes, and reads a level
  // from them: one bit per one-bit cell, what the array holds.
  cell_noisy_ = converts(spec_.kind) && (spec_.cell_noise_sigma > 0.0 || deviates());
  fixed_q_ = spec_.noise_grid_bits();
  // The exact model keeps every deviation as a float; the fixed model only on its grid (int16),
  // but for the merged kind, whose computes merge the float deviations of a weight's slices.
  if (cell_noisy_ && (fixed_q_ == 0 || spec_.kind == MacroKind::analog_merged)) cell_noise_.assign(n, 0.f);
  if (cell_noisy_ && fixed_q_ > 0) {
    noise_q_ = fixed_q_;
    noise_qstride_ = detail::grid_row_stride(spec_.cols);
    cell_noise_q_.assign(static_cast<size_t>(spec_.rows) * noise_qstride_, 0);
  } else if (!cell_noise_.empty() && !deviates()) {
    // |deviation| = sigma |draw| < 5.8 sigma: the largest grid 2^-q that holds 6 sigma in int16;
    // a group's sums stay in int32 when rows_per_cycle * (largest input level) * 32767 does.
    const int q = static_cast<int>(std::floor(std::log2(32767.0 / (6.0 * spec_.cell_noise_sigma))));
    int width = 0;
    for (const auto& piece : detail::input_pieces(spec_)) width = std::max(width, piece.width);
    const double u_max = std::ldexp(1.0, width) - 1.0;
    if (q >= 1 && q <= 60 && u_max < 32768.0 && spec_.rows_per_cycle * u_max * 32767.0 < 2147483647.0) {
      noise_q_ = q;
      noise_qstride_ = detail::grid_row_stride(spec_.cols);
      cell_noise_q_.assign(static_cast<size_t>(spec_.rows) * noise_qstride_, 0);
    }
  }
  row_words_ = (spec_.rows + 63) / 64;
  slices_ = detail::weight_slices(spec_);
  pieces_ = detail::input_pieces(spec_);
  // Only the analog fast path reads the bit-planes; the digital one reads weights_.
  if (converts(spec_.kind))
    planes_.assign(static_cast<size_t>(spec_.cell_bits) * row_words_ * spec_.cols, 0);
  // the digital kind's stored state; the merged kind's fast path merges from them too
  if (spec_.kind != MacroKind::analog) weights_.assign(static_cast<size_t>(spec_.rows) * spec_.weights_per_row(), 0);
  adc_shift_ = spec_.adc_shift();
  if (spec_.kind == MacroKind::analog && !cell_noisy_ && adc_shift_ == 0)
    rounded_ = detail::rounded_noise_law(spec_.read_noise_sigma);
  // Erased state: every weight slot encodes 0 (offset encoding: the level of the offset itself).
  // Not counted as writes and noise-free: noise is drawn when a weight is programmed. When weight
  // 0's cells are all at level 0 (two's complement, differential), the zero-filled state above is
  // already that (noise-free cells at level 0 deviate by 0): nothing to store.
  if (std::all_of(slices_.begin(), slices_.end(), [&](const detail::Piece& p) { return detail::slice_level(spec_, p, 0) == 0; }))
    return;
  const double sigma = spec_.cell_noise_sigma, drift_time = spec_.drift_time_s, stuck = spec_.stuck_rate;
  spec_.cell_noise_sigma = 0.0;
  spec_.drift_time_s = 0.0;  // nor drifted, nor stuck: they show when a weight is programmed
  spec_.stuck_rate = 0.0;
  const std::vector<int8_t> zero(static_cast<size_t>(spec_.rows) * spec_.weights_per_row(), 0);
  store_block(zero.data(), spec_.rows, spec_.weights_per_row());
  spec_.cell_noise_sigma = sigma;
  spec_.drift_time_s = drift_time;
  spec_.stuck_rate = stuck;
}

void Macro::mirror_deviation(int row, int col, float deviation) {
  if (cell_noise_q_.empty()) return;
  double v = std::nearbyint(std::ldexp(static_cast<double>(deviation), noise_q_));
  if (fixed_q_ > 0) v = std::clamp(v, -32767.0, 32767.0);  // the fixed model saturates (+-32 levels at q 10)
  if (std::fabs(v) > 32767.0) {  // not expected (|draw| < 5.8); the double sums then do it all
    cell_noise_q_.clear();
    return;
  }
  cell_noise_q_[static_cast<size_t>(row) * noise_qstride_ + col] = static_cast<int16_t>(v);
  grid_version_ = 0;  // new contents: the next compute sums the subsets again
  noise_qmax_ = std::max(noise_qmax_, static_cast<int32_t>(std::fabs(v)));
}

float Macro::deviation(size_t idx, uint32_t level, double noise) const {
  if (spec_.stuck_rate > 0.0) {
    // whether the cell is stuck, and at which rail: two more streams of the seed's generator,
    // indexed by the cell (a defect of the array, whatever and however often it is written)
    static constexpr uint64_t kStuckStream = 0x57C4ull << 40, kRailStream = 0x7A11ull << 40;
    const double z = detail::normal_draw(noise_key_, kStuckStream + idx);
    if (0.5 * std::erfc(-z / std::numbers::sqrt2) < spec_.stuck_rate) {
      const double rail = detail::normal_draw(noise_key_, kRailStream + idx) < 0 ? 0.0 : std::ldexp(1.0, spec_.cell_bits) - 1.0;
      return static_cast<float>(rail - static_cast<double>(level));
    }
  }
  if (!spec_.drifts()) return static_cast<float>(noise);
  // nu of this cell: a second stream of the seed's generator, indexed by the cell
  static constexpr uint64_t kDriftStream = 0xD81F7ull << 40;
  const double nu = spec_.drift_nu +
                    spec_.drift_nu_sigma * static_cast<double>(detail::normal_draw(noise_key_, kDriftStream + idx));
  const double r = spec_.drift_time_s / spec_.drift_t0_s;
  const double factor = std::pow(r, -nu) * (spec_.drift_compensation ? std::pow(r, spec_.drift_nu) : 1.0);
  return static_cast<float>((static_cast<double>(level) + noise) * factor - static_cast<double>(level));
}

double Macro::gaussian() { return detail::normal_draw(noise_key_, noise_draws_++); }

void Macro::read_noise(double sigma, double* out, int n) {
  // Drawn as floats, then scaled in double: out[i] = sigma * draw, as both paths use it.
  if (draws_.size() < static_cast<size_t>(n)) draws_.resize(n);
  detail::normal_draws(noise_key_, noise_draws_, n, draws_.data());
  for (int i = 0; i < n; ++i) out[i] = sigma * static_cast<double>(draws_[i]);
  noise_draws_ += static_cast<uint64_t>(n);
}

int32_t Macro::grid_deviation(int row, int col) const {
  return cell_noise_q_[static_cast<size_t>(row) * noise_qstride_ + col];
}

void Macro::read_noise_fixed(int32_t* out, int n) {
  // The float draws times sigma 2^q, rounded to the grid; saturated at +-2^24 grid units.
  if (draws_.size() < static_cast<size_t>(n)) draws_.resize(n);
  detail::normal_draws(noise_key_, noise_draws_, n, draws_.data());
  // In float (the draws' precision; |sigma 2^q draw| < 2^24 for sigma below 2,800 levels),
  // rounded half away from zero by a truncating conversion of v +- (the float below 1/2): no libm
  // call, the loop vectorises. (+- 1/2 itself rounds v + 1/2 up to the next integer where that
  // sum is a tie: just below 2^k - 1/2, and every odd integer from 2^23 on.)
  const float a = static_cast<float>(std::ldexp(spec_.read_noise_sigma, fixed_q_));
  // (copysign rather than a select on the sign: the loop then vectorises; -0 gives 0 either way)
  // The bound goes through memory (an empty asm): as a constant, GCC turns the clamp's two ends
  // into branches to their integer results, and for AVX2 the loop did not vectorise (a quarter of
  // the noisy benchmark's time in an x86-64-v3 build, against 4% where AVX-512 masks it).
  float lim = 16777216.f;
  __asm__("" : "+m"(lim));
  const float* d = draws_.data();
  for (int i = 0; i < n; ++i) {
    const float v = std::min(std::max(a * d[i], -lim), lim);
    out[i] = static_cast<int32_t>(v + std::copysign(0x1.fffffep-2f, v));
  }
  noise_draws_ += static_cast<uint64_t>(n);
}

void Macro::read_noise_rounded(int32_t* out, int n) {
  detail::rounded_noise(noise_key_, noise_draws_, n, rounded_, out);
  noise_draws_ += static_cast<uint64_t>(n);
}


void Macro::store(int row, int out, int32_t w) {
  const int S = static_cast<int>(slices_.size());
  // a digital macro's cells are its weights' slices (cell_level): only the weight is stored (the
  // attention tiles write a K or V token this way every position)
  for (int j = 0; j < S && (!planes_.empty() || cell_noisy_); ++j) {
    const int col = out * S + j;
    const uint32_t level = detail::slice_level(spec_, slices_[j], w);
    const size_t idx = static_cast<size_t>(row) * spec_.cols + col;
    for (int b = 0; b < spec_.cell_bits && !planes_.empty(); ++b) {
      uint64_t& word = planes_[(static_cast<size_t>(b) * row_words_ + row / 64) * spec_.cols + col];
      const uint64_t bit = uint64_t{1} << (row % 64);
      word = ((level >> b) & 1u) ? (word | bit) : (word & ~bit);
    }
    // One programming-variation draw per cell written, slices in ascending order.
    if (cell_noisy_) {
      const double noise = spec_.cell_noise_sigma > 0.0 ? spec_.cell_noise_sigma * gaussian() : 0.0;
      const float dev = deviation(idx, level, noise);
      if (!cell_noise_.empty()) cell_noise_[idx] = dev;
      mirror_deviation(row, col, dev);
    }
  }
  if (!weights_.empty()) weights_[static_cast<size_t>(row) * (spec_.cols / S) + out] = static_cast<int8_t>(w);
}

void Macro::store_block(const int8_t* w, int n_rows, int n_out) {
  const int S = static_cast<int>(slices_.size());
  const int cols = spec_.cols, wpr = spec_.weights_per_row(), n_cols = n_out * S;
  if (!weights_.empty())
    for (int r = 0; r < n_rows; ++r)
      std::memcpy(weights_.data() + static_cast<size_t>(r) * wpr, w + static_cast<size_t>(r) * n_out,
                  static_cast<size_t>(n_out));
  if (spec_.kind == MacroKind::digital) return;  // the weights are the stored state
  // the block's cell levels, [row][column used]: the bit-planes and the noise are made from them
  std::vector<uint8_t> cells(static_cast<size_t>(n_rows) * n_cols);
  // The S levels of each of the 256 int8 values, formed once per block: a weight's cells are
  // then a copy.
  std::vector<uint8_t> levels(256 * static_cast<size_t>(S));
  for (int v = -128; v < 128; ++v)
    for (int j = 0; j < S; ++j)
      levels[static_cast<size_t>(v + 128) * S + j] = static_cast<uint8_t>(detail::slice_level(spec_, slices_[j], v));
  for (int r = 0; r < n_rows; ++r) {
    uint8_t* cell = cells.data() + static_cast<size_t>(r) * n_cols;
    const int8_t* wr = w + static_cast<size_t>(r) * n_out;
    for (int o = 0; o < n_out; ++o) {
      const uint8_t* lv = &levels[static_cast<size_t>(wr[o] + 128) * S];
      for (int j = 0; j < S; ++j) cell[o * S + j] = lv[j];
    }
  }
  // The bit-planes 64 rows (one word) at a time, gathered row by row so the inner loop runs
  // along a row of cells; rows outside [0, n_rows) keep their bits.
  std::vector<uint64_t> word(static_cast<size_t>(n_cols));
  for (int b = 0; b < spec_.cell_bits && !planes_.empty(); ++b)
    for (int r0 = 0; r0 < n_rows; r0 += 64) {
      const int r1 = std::min(n_rows, r0 + 64);
      std::fill(word.begin(), word.end(), uint64_t{0});
      for (int r = r0; r < r1; ++r) {
        const uint8_t* cell = cells.data() + static_cast<size_t>(r) * n_cols;
        for (int c = 0; c < n_cols; ++c) word[c] |= static_cast<uint64_t>((cell[c] >> b) & 1u) << (r - r0);
      }
      const uint64_t keep = r1 - r0 == 64 ? uint64_t{0} : ~uint64_t{0} << (r1 - r0);
      uint64_t* plane = planes_.data() + (static_cast<size_t>(b) * row_words_ + r0 / 64) * cols;
      for (int c = 0; c < n_cols; ++c) plane[c] = (plane[c] & keep) | word[c];
    }
  // One programming-variation draw per cell written, in store()'s order (row, output, slice):
  // the counter-based generator gives draw k the same value whichever call takes it.
  if (cell_noisy_) {
    std::vector<float> draws(static_cast<size_t>(n_rows) * n_cols, 0.f);
    if (spec_.cell_noise_sigma > 0.0) {
      detail::normal_draws(noise_key_, noise_draws_, static_cast<int>(draws.size()), draws.data());
      noise_draws_ += draws.size();
    }
    for (int r = 0; r < n_rows; ++r)
      for (int c = 0; c < n_cols; ++c) {
        const size_t idx = static_cast<size_t>(r) * cols + c;
        const double noise = spec_.cell_noise_sigma * static_cast<double>(draws[static_cast<size_t>(r) * n_cols + c]);
        const float dev = deviation(idx, cells[static_cast<size_t>(r) * n_cols + c], noise);
        if (!cell_noise_.empty()) cell_noise_[idx] = dev;
        mirror_deviation(r, c, dev);
      }
  }
}

uint32_t Macro::cell_level(int row, int col) const {
  if (!planes_.empty()) {
    uint32_t level = 0;
    for (int b = 0; b < spec_.cell_bits; ++b)
      level |= static_cast<uint32_t>((planes_[(static_cast<size_t>(b) * row_words_ + row / 64) * spec_.cols + col] >> (row % 64)) & 1u) << b;
    return level;
  }
  const int S = static_cast<int>(slices_.size());
  if (col >= spec_.weights_per_row() * S) return 0;  // a column no weight uses stays erased
  const int8_t w = weights_[static_cast<size_t>(row) * spec_.weights_per_row() + col / S];
  return detail::slice_level(spec_, slices_[col % S], w);
}

int32_t Macro::read(int row, int out) const {
  check_index("row", row, spec_.rows);
  check_index("out", out, spec_.weights_per_row());
  const auto& slices = slices_;
  const int S = static_cast<int>(slices.size());
  int64_t w = 0;
  for (int j = 0; j < S; ++j)
    w += static_cast<int64_t>(slices[j].sign) *
         (int64_t{cell_level(row, out * S + j)} << slices[j].offset);
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
  const int32_t lo = spec.weight_min(), hi = spec.weight_max();
  if (lo <= INT8_MIN && hi >= INT8_MAX) return;  // 8-bit weights: every int8 is one
  for (long long i = 0; i < n; ++i)
    if (w[i] < lo || w[i] > hi)
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
  store_block(w, n_rows, n_out);
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
  // A batch checks every token of every macro: the range in one branch-free pass (vectorised),
  // the offending input looked for only when there is one.
  int32_t xmin = lo, xmax = hi;
  for (int r = 0; r < n_rows; ++r) {
    xmin = std::min(xmin, x[r]);
    xmax = std::max(xmax, x[r]);
  }
  if (xmin >= lo && xmax <= hi) return;
  for (int r = 0; r < n_rows; ++r)
    if (x[r] < lo || x[r] > hi)
      fail(where, "x[" + std::to_string(r) + "]", std::to_string(x[r]),
           "an input in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (input_bits = " +
               std::to_string(spec_.input_bits) +
               (spec_.input_signed ? ", signed)" : ", unsigned)"));
}

const MacroEvents& Macro::call_events(int n_rows, int n_out) {
  if (n_rows != events_rows_ || n_out != events_out_) {
    shape_events_ = compute_events(spec_, n_rows, n_out);
    events_rows_ = n_rows;
    events_out_ = n_out;
  }
  return shape_events_;
}

void Macro::compute(const int32_t* x, int n_rows, int64_t* y, int n_out) {
  check_compute(x, n_rows, y, n_out, kWhere);
  macro_kind_model(spec_.kind).compute(*this, x, n_rows, y, n_out);
}

void Macro::compute_reference(const int32_t* x, int n_rows, int64_t* y, int n_out) {
  check_compute(x, n_rows, y, n_out, "cim::Macro::compute_reference");
  macro_kind_model(spec_.kind).compute_reference(*this, x, n_rows, y, n_out);
}

}  // namespace kvcim::cmodel::cim
