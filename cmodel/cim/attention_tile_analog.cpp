// The analog attention tile (include/kvcim/cmodel/cim/attention_tile_analog.hpp): multi-level
// cells, one ADC per score and per output (per slice column), seeded cell and read noise, and the
// fixed-point softmax or a per-token HardSigmoid/ReLU normalisation. docs/attention_tile.md, "The
// analog tile", is the contract this file implements.
#include "kvcim/cmodel/cim/attention_tile_analog.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "kvcim/cmodel/quant/quant.hpp"
#include "kvcim/error.hpp"
#include "kvcim/random.hpp"

namespace kvcim::cmodel::cim {

int analog_slices(int bits, int cell_bits) { return (bits + cell_bits - 1) / cell_bits; }

namespace {
// Largest |level| of slice j of a `bits`-wide signed value (the top slice is signed).
double slice_max(int bits, int cell_bits, int j) {
  const int s = analog_slices(bits, cell_bits);
  if (j < s - 1) return std::ldexp(1.0, cell_bits) - 1.0;
  return std::ldexp(1.0, bits - (s - 1) * cell_bits - 1);
}
// Level of slice j of x: the low slices unsigned cell_bits-wide pieces of the two's-complement
// code, the top slice the signed rest, so that x = sum_j slice_j 2^(j cell_bits).
int slice_of(int x, int bits, int cell_bits, int j) {
  const int s = analog_slices(bits, cell_bits);
  if (j < s - 1) return (x >> (j * cell_bits)) & ((1 << cell_bits) - 1);
  return x >> ((s - 1) * cell_bits);  // arithmetic shift: the signed top slice
}
double range_of(const TileParams& p, double full_scale, double clip) {
  return p.adc_range == AdcRange::full_scale ? full_scale : clip * full_scale;
}
// 2^e as a double, exactly, for |e| <= 1022 (its exponent field; no libm call).
inline double pow2(int e) { return std::bit_cast<double>(static_cast<uint64_t>(1023 + e) << 52); }
}  // namespace

int adc_shift_for(double range, int adc_bits) {
  const double top = std::ldexp(1.0, adc_bits - 1) - 1.0;
  int s = 0;
  while (top * std::ldexp(1.0, s) < range && s < 62) ++s;
  return s;
}

int64_t adc_convert(double a, int shift, int adc_bits) {
  // Scaled by 2^-shift as an exact double (0 <= shift <= 62, as the returned code 2^shift needs:
  // a normal number), which gives ldexp(a, -shift) to the bit (one correctly rounded result of
  // the same exact value) without a libm call: the three ldexp calls per conversion were a
  // seventh of a gain-cell KV run's CPU. (adc_bits: 2 - 30, TileParams.)
  const double half = pow2(adc_bits - 1);
  const double code = std::clamp(std::floor(a * pow2(-shift) + 0.5), -half, half - 1.0);
  return static_cast<int64_t>(code) * (int64_t{1} << shift);
}

double analog_k_full_scale(const TileParams& p, int j) {
  return p.head_dim * std::ldexp(1.0, p.kv_bits - 1) * slice_max(p.kb(), p.cell_bits, j);
}

// sum_t p'_t <= 2^P - 1 + n/2 (the fold rounds each p_t at most half up): the V columns' bound.
double analog_v_full_scale(const TileParams& p, int j) {
  const double psum = std::ldexp(1.0, p.prob_bits) - 1.0 + (p.tokens + 1) / 2;
  return psum * slice_max(p.vb(), p.cell_bits, j);
}

SoftmaxEvents normalisation_events(const TileParams& p, int64_t n) {
  SoftmaxEvents e;
  switch (p.softmax) {
    case TileSoftmax::fixed:  // softmax_fixed.cpp: the pipelined divider's fill once per query
      e = {n, 3 * n, 4 * n, 2 * n, n, n, softmax_cycles(p, n)};
      break;
    case TileSoftmax::hardsigmoid:  // rescale; /6 and +1/2; clamp; sum; divide; fold
      e = {n, 2 * n, 4 * n, 3 * n, 0, 2 * n, 3 * n};
      break;
    case TileSoftmax::relu:  // rescale; << (16 - F); clamp; sum; divide; fold
      e = {n, 3 * n, 3 * n, 3 * n, 0, n, 3 * n};
      break;
  }
  return e;
}

SoftmaxOutput softmax_per_token(const TileParams& p, std::span<const int64_t> scores,
                                std::span<const int> ek, std::span<const int> ev, QueryScale qs,
                                SoftmaxEvents& events) {
  const size_t n = scores.size();
  if (n == 0 || ek.size() != n || ev.size() != n)
    fail("softmax_per_token", "tokens", std::to_string(n), "expected >= 1 with one ek and ev each");
  if (p.softmax == TileSoftmax::fixed)
    fail("softmax_per_token", "softmax", "fixed", "use softmax_fixed");
  SoftmaxOutput out;
  out.prob.resize(n);
  out.raw.resize(n);
  out.e.resize(n);
  out.ymax = 0;
  out.evmax = std::numeric_limits<int>::min();
  const int64_t one = int64_t{1} << kExpOneBits;
  const int64_t den = int64_t{6} << p.exp_frac;
  out.sum = 0;
  for (size_t t = 0; t < n; ++t) {
    const int64_t y = scale_score(scores[t], qs.qmul, qs.qexp, ek[t], p.exp_frac);
    int64_t e;
    if (p.softmax == TileSoftmax::hardsigmoid) {
      const int64_t num = y * one;  // |y| < 2^34: no overflow
      int64_t q = num / den;
      if ((num % den != 0) && ((num < 0) != (den < 0))) --q;  // floor division
      e = std::clamp<int64_t>(q + one / 2, 1, one);
    } else {
      e = std::clamp<int64_t>(y * (int64_t{1} << (kExpOneBits - p.exp_frac)), 1, one << 8);
    }
    out.e[t] = static_cast<uint32_t>(e);
    out.sum += e;
    out.evmax = std::max(out.evmax, ev[t]);
  }
  const int64_t pmax = (int64_t{1} << p.prob_bits) - 1;
  for (size_t t = 0; t < n; ++t) {
    out.raw[t] = static_cast<uint32_t>(static_cast<int64_t>(out.e[t]) * pmax / out.sum);
    const int sh = std::min(out.evmax - ev[t], kFoldMaxShift);
    out.prob[t] = static_cast<uint32_t>(quant::shift_round(out.raw[t], sh));
  }
  events += normalisation_events(p, static_cast<int64_t>(n));
  return out;
}

TileEvents analog_append_events(const TileParams& p) {
  TileEvents e;
  const int sk = analog_slices(p.kb(), p.cell_bits), sv = analog_slices(p.vb(), p.cell_bits);
  e.k_macro.cell_writes = int64_t{p.head_dim} * sk;  // one cell write per slice cell
  e.k_macro.row_activations = p.head_dim;            // the K column, one wordline per cycle
  e.k_macro.cycles = p.head_dim;
  e.v_macro.cell_writes = int64_t{p.head_dim} * sv;  // one V row
  e.v_macro.row_activations = 1;
  e.v_macro.cycles = 1;
  e.cycles = append_cycles(p);
  e.appends = 1;
  return e;
}

TileEvents analog_query_events(const TileParams& p, int n) {
  TileEvents e;
  const int64_t sk = analog_slices(p.kb(), p.cell_bits), sv = analog_slices(p.vb(), p.cell_bits);
  const int64_t D = p.head_dim;
  e.k_macro.row_activations = D;  // q on the D rows, all bits at once (a multi-level drive)
  e.k_macro.column_reads = n * sk;
  e.k_macro.adc_conversions = n * sk;  // one per score and slice column
  e.k_macro.shift_add_ops = n * (sk - 1);
  e.k_macro.cycles = 1;
  e.v_macro.row_activations = n;  // p'_t on the token rows
  e.v_macro.column_reads = D * sv;
  e.v_macro.adc_conversions = D * sv;  // one per output and slice column
  e.v_macro.shift_add_ops = D * (sv - 1);
  e.v_macro.cycles = 1;
  e.softmax = normalisation_events(p, n);
  e.cycles = analog_query_cycles(p, n);
  e.queries = 1;
  return e;
}

// The softmax unit's passes (with the fixed softmax, the same pipelined divider as the digital
// tile's) + 6.
int64_t analog_query_cycles(const TileParams& p, int n) {
  return (p.softmax == TileSoftmax::fixed ? softmax_cycles(p, n) : 3 * static_cast<int64_t>(n)) + 6;
}

namespace {
const TileParams& validated_analog(const TileParams& p) {
  p.validate("analog attention tile");
  if (p.kind != TileKind::analog)
    fail("analog attention tile", "kind", "digital", "AnalogTile is the analog tile (make_tile picks by kind)");
  return p;
}
}  // namespace

AnalogTile::AnalogTile(const TileParams& p)
    : p_(validated_analog(p)),
      sk_(analog_slices(p.kb(), p.cell_bits)),
      sv_(analog_slices(p.vb(), p.cell_bits)),
      kcell_(static_cast<size_t>(p.tokens) * p.head_dim * sk_),
      vcell_(static_cast<size_t>(p.tokens) * p.head_dim * sv_),
      ek_(p.tokens),
      ev_(p.tokens),
      lut_(exp_lut(p.exp_frac)),
      rng_(p.seed),
      written_ns_(p.tokens, 0.0),
      drift_rng_(p.seed ^ 0xD81F7D81F7D81F7ull) {
  if (p_.drifts()) {
    knu_.assign(kcell_.size(), 0.0);
    vnu_.assign(vcell_.size(), 0.0);
  }
  for (int j = 0; j < sk_; ++j)
    k_shift_.push_back(adc_shift_for(range_of(p_, analog_k_full_scale(p_, j), p_.adc_clip), p_.adc_bits));
  for (int j = 0; j < sv_; ++j)
    v_shift_.push_back(adc_shift_for(range_of(p_, analog_v_full_scale(p_, j), p_.out_adc_clip), p_.adc_bits));
}

double AnalogTile::uniform() { return unit_interval(splitmix64(rng_)); }

// The second normal of a Box-Muller pair is the next draw.
double AnalogTile::gaussian() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  has_spare_ = true;
  return box_muller(rng_, &spare_);
}

void AnalogTile::store(std::vector<float>& cells, int slices, int token, std::span<const int8_t> x,
                       int bits) {
  float* c = cells.data() + static_cast<size_t>(token) * p_.head_dim * slices;
  for (int i = 0; i < p_.head_dim; ++i)
    for (int j = 0; j < slices; ++j) {
      double level = slice_of(x[i], bits, p_.cell_bits, j);
      if (p_.cell_noise_sigma > 0) level += p_.cell_noise_sigma * gaussian();
      if (p_.stuck_rate > 0) {  // a stuck cell holds its lowest or highest level, whatever is written
        const double u = uniform();
        if (u < p_.stuck_rate) {
          ++stuck_;
          const bool top = j == slices - 1;
          const double lo = top ? -slice_max(bits, p_.cell_bits, j) : 0.0;
          const double hi = top ? slice_max(bits, p_.cell_bits, j) - 1.0 : slice_max(bits, p_.cell_bits, j);
          level = uniform() < 0.5 ? lo : hi;
        }
      }
      c[i * slices + j] = static_cast<float>(level);
    }
}

double AnalogTile::drift_gaussian() { return box_muller(drift_rng_); }

void AnalogTile::draw_nu(std::vector<double>& nu, int slices, int token) {
  double* c = nu.data() + static_cast<size_t>(token) * p_.head_dim * slices;
  for (int i = 0; i < p_.head_dim * slices; ++i)
    c[i] = p_.drift_nu + (p_.drift_nu_sigma > 0 ? p_.drift_nu_sigma * drift_gaussian() : 0.0);
}

std::vector<double> AnalogTile::drift_logs() const {
  std::vector<double> l;
  if (!p_.drifts()) return l;
  l.resize(n_);
  for (int t = 0; t < n_; ++t) {
    const double age_s = (now_ns_ - written_ns_[t]) * 1e-9;
    l[t] = age_s > p_.drift_t0_s ? std::log(age_s / p_.drift_t0_s) : 0.0;
  }
  return l;
}

void AnalogTile::set_time_ns(double ns) {
  if (!(ns >= now_ns_)) fail("analog attention tile", "time", std::to_string(ns) + " ns", "time runs forward");
  now_ns_ = ns;
  if (p_.refresh_ns <= 0) return;
  // every refresh_ns since its last write a token is read and written back: its written level
  // restored (decay starts again), every cell of its K column and V row written
  for (int t = 0; t < n_; ++t) {
    const double k = std::floor((now_ns_ - written_ns_[t]) / p_.refresh_ns);
    if (k < 1) continue;
    const auto times = static_cast<int64_t>(k);
    written_ns_[t] += k * p_.refresh_ns;
    refreshes_ += times;
    ev_count_.k_macro.cell_writes += times * p_.head_dim * sk_;
    ev_count_.v_macro.cell_writes += times * p_.head_dim * sv_;
  }
}

double AnalogTile::decay(int t) const {
  return p_.retention_ns > 0 ? std::exp(-(now_ns_ - written_ns_[t]) / p_.retention_ns) : 1.0;
}

// A token written into `slot` (appended, or overwriting one): fresh cell levels with their noise
// and drift exponents, written now.
void AnalogTile::write_slot(int slot, std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) {
  store(kcell_, sk_, slot, k, p_.kb());
  store(vcell_, sv_, slot, v, p_.vb());
  if (p_.drifts()) {
    draw_nu(knu_, sk_, slot);
    draw_nu(vnu_, sv_, slot);
  }
  ek_[slot] = ek;
  ev_[slot] = ev;
  written_ns_[slot] = now_ns_;
  if (slot == n_) ++n_;
  ev_count_ += analog_append_events(p_);
}

TileResult AnalogTile::query(std::span<const int8_t> q, uint16_t qmul, int qexp) {
  check_query(p_, n_, q, qmul, qexp, "analog attention tile query");
  const int D = p_.head_dim;
  TileEvents& e = ev_count_;
  // 1'. scores: one analog column sum and one conversion per token and slice column
  std::vector<int64_t> s(n_, 0);
  const double k_noise = p_.read_noise_sigma * std::ldexp(1.0, p_.kv_bits - 1);
  e.k_macro.row_activations += D;
  // drift: a cell of exponent nu, in a token of log-age L, reads level x exp((m - nu) L), m the
  // compensated mean exponent (drift_nu with drift_compensation, else 0)
  const std::vector<double> lg = drift_logs();
  const double m = p_.drift_compensation ? p_.drift_nu : 0.0;
  auto drifted = [&](const std::vector<double>& nu, size_t idx, double L) {
    return std::exp((m - nu[idx]) * L);
  };
  for (int t = 0; t < n_; ++t) {
    const size_t base = static_cast<size_t>(t) * D * sk_;
    const float* c = kcell_.data() + base;
    const double d = decay(t);
    const double L = lg.empty() ? 0.0 : lg[t];
    for (int j = 0; j < sk_; ++j) {
      double a = 0;
      if (L > 0)
        for (int i = 0; i < D; ++i)
          a += static_cast<double>(q[i]) * c[i * sk_ + j] * drifted(knu_, base + i * sk_ + j, L);
      else
        for (int i = 0; i < D; ++i) a += static_cast<double>(q[i]) * c[i * sk_ + j];
      a *= d;
      if (k_noise > 0) a += k_noise * gaussian();
      s[t] += adc_convert(a, k_shift_[j], p_.adc_bits) * (int64_t{1} << (j * p_.cell_bits));
      e.k_macro.column_reads += 1;
      e.k_macro.adc_conversions += 1;
      if (j > 0) e.k_macro.shift_add_ops += 1;
    }
  }
  e.k_macro.cycles += 1;
  // 2-5. normalisation and V-exponent fold
  const std::span<const int> ek(ek_.data(), n_), ev(ev_.data(), n_);
  const QueryScale qs{qmul, qexp};
  const SoftmaxOutput sm = p_.softmax == TileSoftmax::fixed
                               ? softmax_fixed(p_, s, ek, ev, qs, lut_, e.softmax)
                               : softmax_per_token(p_, s, ek, ev, qs, e.softmax);
  // 6'. outputs: one analog column sum and one conversion per output and slice column
  std::vector<int32_t> out(D, 0);
  const double v_noise = p_.read_noise_sigma * (std::ldexp(1.0, p_.prob_bits) - 1.0);
  e.v_macro.row_activations += n_;
  std::vector<double> pd(n_);  // p'_t times the decay of token t's V row
  for (int t = 0; t < n_; ++t) pd[t] = static_cast<double>(sm.prob[t]) * decay(t);
  for (int i = 0; i < D; ++i) {
    int64_t o = 0;
    for (int j = 0; j < sv_; ++j) {
      double a = 0;
      for (int t = 0; t < n_; ++t) {
        const size_t idx = (static_cast<size_t>(t) * D + i) * sv_ + j;
        const double L = lg.empty() ? 0.0 : lg[t];
        a += L > 0 ? pd[t] * vcell_[idx] * drifted(vnu_, idx, L) : pd[t] * vcell_[idx];
      }
      if (v_noise > 0) a += v_noise * gaussian();
      o += adc_convert(a, v_shift_[j], p_.adc_bits) * (int64_t{1} << (j * p_.cell_bits));
      e.v_macro.column_reads += 1;
      e.v_macro.adc_conversions += 1;
      if (j > 0) e.v_macro.shift_add_ops += 1;
    }
    out[i] = static_cast<int32_t>(std::clamp<int64_t>(o, std::numeric_limits<int32_t>::min(),
                                                      std::numeric_limits<int32_t>::max()));
  }
  e.v_macro.cycles += 1;
  last_e_ = sm.e;
  e.cycles += analog_query_cycles(p_, n_);
  e.queries += 1;
  return sm.result(std::move(out));
}

}  // namespace kvcim::cmodel::cim
