// The tile's parameters and exponent table. Kept free of other kvcim objects on purpose: the RTL
// package generator (rtl/gen_tile_pkg.cpp) compiles this file at configure time, so the SV table
// and the C model's table come from this one function.
#include <cmath>
#include <string>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel::cim {

namespace {
void check_range(const std::string& where, const char* field, int value, int lo, int hi) {
  if (value < lo || value > hi)
    fail(where, field, std::to_string(value),
         "expected " + std::to_string(lo) + ".." + std::to_string(hi));
}
}  // namespace

void TileParams::validate(const std::string& where) const {
  check_range(where, "head_dim", head_dim, 1, 256);
  check_range(where, "tokens", tokens, 1, 4096);
  check_range(where, "kv_bits", kv_bits, 2, 8);
  check_range(where, "exp_frac", exp_frac, 0, 12);
  // p_t (2^P - 1) products and sums stay far inside int64; 16 keeps p' in a uint16 input.
  check_range(where, "prob_bits", prob_bits, 1, 16);
  if (k_bits != 0) check_range(where, "k_bits", k_bits, 2, 8);
  if (v_bits != 0) check_range(where, "v_bits", v_bits, 2, 8);
  if (kind != TileKind::digital && kind != TileKind::analog)
    check_range(where, "kind", static_cast<int>(kind), 0, 1);
  if (softmax != TileSoftmax::fixed && softmax != TileSoftmax::hardsigmoid &&
      softmax != TileSoftmax::relu)
    check_range(where, "softmax", static_cast<int>(softmax), 0, 2);
  if (kind == TileKind::analog) {
    check_range(where, "cell_bits", cell_bits, 1, 8);
    check_range(where, "adc_bits", adc_bits, 1, 30);
    auto fraction = [&](const char* field, double v, double lo, double hi) {
      if (!(v >= lo && v <= hi))  // NaN fails too
        fail(where, field, std::to_string(v),
             "expected " + std::to_string(lo) + ".." + std::to_string(hi));
    };
    fraction("adc_clip", adc_clip, 1e-9, 1.0);
    fraction("out_adc_clip", out_adc_clip, 1e-9, 1.0);
    fraction("cell_noise_sigma", cell_noise_sigma, 0.0, 1e6);
    fraction("read_noise_sigma", read_noise_sigma, 0.0, 1e6);
    fraction("stuck_rate", stuck_rate, 0.0, 1.0);
    fraction("retention_ns", retention_ns, 0.0, 1e30);
    fraction("refresh_ns", refresh_ns, 0.0, 1e30);
    fraction("drift_nu", drift_nu, 0.0, 10.0);
    fraction("drift_nu_sigma", drift_nu_sigma, 0.0, 10.0);
    if (!(drift_t0_s > 0.0 && drift_t0_s < 1e30))
      fail(where, "drift_t0_s", std::to_string(drift_t0_s), "a positive time in seconds");
  } else if (retention_ns != 0.0 || refresh_ns != 0.0) {
    fail(where, retention_ns != 0.0 ? "retention_ns" : "refresh_ns",
         std::to_string(retention_ns != 0.0 ? retention_ns : refresh_ns),
         "only the analog tile's cells lose charge (kind: analog)");
  } else if (drift_nu != 0.0 || drift_nu_sigma != 0.0) {
    fail(where, drift_nu != 0.0 ? "drift_nu" : "drift_nu_sigma",
         std::to_string(drift_nu != 0.0 ? drift_nu : drift_nu_sigma),
         "0 for the digital tile (conductance drift is an analog effect; kind: analog)");
  }
}

std::vector<uint32_t> exp_lut(int exp_frac) {
  if (exp_frac < 0 || exp_frac > 12)
    fail("exp_lut", "exp_frac", std::to_string(exp_frac), "expected 0..12");
  const int size = 1 << exp_frac;
  std::vector<uint32_t> lut(size);
  for (int f = 0; f < size; ++f) {
    // 2^16 * 2^(-f/2^F) is irrational for f > 0, so no entry sits on a rounding tie.
    const double x = std::ldexp(std::exp2(-static_cast<double>(f) / size), kExpOneBits);
    lut[f] = static_cast<uint32_t>(std::llround(x));
  }
  return lut;
}

}  // namespace kvcim::cmodel::cim
