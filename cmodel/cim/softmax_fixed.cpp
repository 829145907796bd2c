// The tile's fixed-point softmax (steps 2-5 of docs/attention_tile.md) and the query scale code.
// The RTL softmax_unit (rtl/softmax_unit.sv) computes exactly this, one token per cycle and pass.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/cmodel/cim/attention_tile_analog.hpp"
#include "kvcim/cmodel/quant/quant.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel::cim {

// The K column group is written one wordline (row) per cycle, as the macro's write_events count.
int64_t append_cycles(const TileParams& p) { return p.head_dim; }

int divider_stages(const TileParams& p) { return (p.prob_bits + kDividerBitsPerStage - 1) / kDividerBitsPerStage; }

int64_t softmax_cycles(const TileParams& p, int64_t n_tokens) {
  return n_tokens > 0 ? 3 * n_tokens + divider_stages(p) - 1 : 0;
}

// Query handshake (1) + K macro bit-serial input (kv_bits) + hand-over to the softmax unit (1) +
// the softmax unit (softmax_cycles) + hand-over to the V macro (1) + V macro bit-serial input
// (prob_bits) + result handshake (1).
// The analog tile has its own schedule (analog_query_cycles).
int64_t query_cycles(const TileParams& p, int n_tokens) {
  if (p.kind == TileKind::analog) return analog_query_cycles(p, n_tokens);
  return p.kv_bits + p.prob_bits + softmax_cycles(p, n_tokens) + 4;
}

QueryScale query_scale(double q_scale, int head_dim) {
  if (!std::isfinite(q_scale) || q_scale <= 0.0)
    fail("query_scale", "q_scale", std::to_string(q_scale), "expected a positive finite number");
  if (head_dim < 1)
    fail("query_scale", "head_dim", std::to_string(head_dim), "expected >= 1");
  const double m = q_scale / std::log(2.0) / std::sqrt(static_cast<double>(head_dim));
  int ex = 0;
  const double fr = std::frexp(m, &ex);  // m = fr 2^ex, fr in [0.5, 1)
  long long mant = std::llround(std::ldexp(fr, kQmulBits));
  if (mant == (1LL << kQmulBits)) {  // fr rounded up to 1.0
    mant >>= 1;
    ++ex;
  }
  const int qexp = ex - kQmulBits;
  const int lo = -(1 << (kScaleExpBits - 1)), hi = (1 << (kScaleExpBits - 1)) - 1;
  if (qexp < lo || qexp > hi)
    fail("query_scale", "qexp", std::to_string(qexp),
         "scale " + std::to_string(q_scale) + " outside the 8-bit exponent range");
  return QueryScale{static_cast<uint16_t>(mant), qexp};
}

int64_t scale_score(int64_t s, uint16_t qmul, int qexp, int ek, int exp_frac) {
  const int64_t prod = s * static_cast<int64_t>(qmul);
  const int sh = std::clamp(-(qexp + ek + exp_frac), 0, kScaleMaxShift);
  return quant::shift_round(prod, sh);
}

uint32_t exp_fixed(int64_t d, int exp_frac, std::span<const uint32_t> lut) {
  const int64_t n = d >> exp_frac;
  if (n >= kExpZeroShift) return 0;
  return lut[static_cast<size_t>(d & ((int64_t{1} << exp_frac) - 1))] >> n;
}

SoftmaxOutput softmax_fixed(const TileParams& p, std::span<const int64_t> scores,
                            std::span<const int> ek, std::span<const int> ev, QueryScale qs,
                            std::span<const uint32_t> lut, SoftmaxEvents& events) {
  const size_t n = scores.size();
  if (n == 0 || ek.size() != n || ev.size() != n)
    fail("softmax_fixed", "tokens", std::to_string(n), "expected >= 1 with one ek and ev each");
  if (lut.size() != (size_t{1} << p.exp_frac))
    fail("softmax_fixed", "lut size", std::to_string(lut.size()), "expected 2^exp_frac");
  SoftmaxOutput out;
  out.prob.resize(n);
  out.raw.resize(n);
  out.e.resize(n);
  std::vector<int64_t> y(n);

  // Pass 1: rescale to base-2 logits, running maxima of Y and of the V exponents.
  out.ymax = std::numeric_limits<int64_t>::min();
  out.evmax = std::numeric_limits<int>::min();
  for (size_t t = 0; t < n; ++t) {
    y[t] = scale_score(scores[t], qs.qmul, qs.qexp, ek[t], p.exp_frac);
    out.ymax = std::max(out.ymax, y[t]);
    out.evmax = std::max(out.evmax, ev[t]);
  }
  events.multiplies += n;
  events.shifts += n;
  events.adds += n;
  events.comparisons += 2 * n;

  // Pass 2: exponents by table and octave shift, and their sum.
  out.sum = 0;
  for (size_t t = 0; t < n; ++t) {
    out.e[t] = exp_fixed(out.ymax - y[t], p.exp_frac, lut);
    out.sum += out.e[t];
  }
  events.adds += 2 * n;
  events.exp_lookups += n;
  events.shifts += n;

  // Pass 3: normalise to unsigned P-bit probabilities, then fold each token's V exponent into its
  // probability so that the V macro accumulates everything at the common exponent evmax.
  const int64_t pmax = (int64_t{1} << p.prob_bits) - 1;
  for (size_t t = 0; t < n; ++t) {
    out.raw[t] = static_cast<uint32_t>(static_cast<int64_t>(out.e[t]) * pmax / out.sum);
    const int sh = std::min(out.evmax - ev[t], kFoldMaxShift);
    out.prob[t] = static_cast<uint32_t>(quant::shift_round(out.raw[t], sh));
  }
  events.divisions += n;
  events.shifts += n;
  events.adds += n;
  events.cycles += softmax_cycles(p, static_cast<int64_t>(n));
  return out;
}

namespace {
void check_vector(const TileParams& p, std::span<const int8_t> x, const char* field,
                  const std::string& where, int bits, const char* bits_name) {
  if (static_cast<int>(x.size()) != p.head_dim)
    fail(where, std::string(field) + " length", std::to_string(x.size()),
         "expected head_dim = " + std::to_string(p.head_dim));
  const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] < lo || x[i] > hi)
      fail(where, std::string(field) + "[" + std::to_string(i) + "]", std::to_string(x[i]),
           "expected " + std::to_string(lo) + ".." + std::to_string(hi) + " (" + bits_name + ")");
}
void check_exponent(int e, const char* field, const std::string& where) {
  if (e < -(1 << (kScaleExpBits - 1)) || e > (1 << (kScaleExpBits - 1)) - 1)
    fail(where, field, std::to_string(e), "expected a signed 8-bit exponent -128..127");
}
}  // namespace

void check_append(const TileParams& p, int tokens_held, std::span<const int8_t> k,
                  std::span<const int8_t> v, int ek, int ev, const std::string& where) {
  if (tokens_held >= p.tokens)
    fail(where, "tokens", std::to_string(tokens_held),
         "tile full (it holds " + std::to_string(p.tokens) + " tokens)");
  check_vector(p, k, "k", where, p.kb(), p.k_bits > 0 ? "k_bits" : "kv_bits");
  check_vector(p, v, "v", where, p.vb(), p.v_bits > 0 ? "v_bits" : "kv_bits");
  check_exponent(ek, "ek", where);
  check_exponent(ev, "ev", where);
}

void check_overwrite(const TileParams& p, int tokens_held, int slot, std::span<const int8_t> k,
                     std::span<const int8_t> v, int ek, int ev, const std::string& where) {
  if (slot < 0 || slot >= tokens_held)
    fail(where, "slot", std::to_string(slot),
         "expected a slot held, 0.." + std::to_string(tokens_held - 1) + " (append fills the next one)");
  check_append(p, slot, k, v, ek, ev, where);
}

void check_query(const TileParams& p, int tokens_held, std::span<const int8_t> q, uint16_t qmul,
                 int qexp, const std::string& where) {
  if (tokens_held < 1) fail(where, "tokens", "0", "a query needs at least one appended token");
  check_vector(p, q, "q", where, p.kv_bits, "kv_bits");
  if (qmul < (1u << (kQmulBits - 1)))
    fail(where, "qmul", std::to_string(qmul), "expected a normalised mantissa in [32768, 65535]");
  check_exponent(qexp, "qexp", where);
}

}  // namespace kvcim::cmodel::cim
