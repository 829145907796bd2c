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
  // the ranges of the table (spec_fields), the analog rows for an analog tile only
  check_fields(*this, where);
  if (k_bits == 1) check_range(where, "k_bits", k_bits, 2, 8);  // 0 (= kv_bits) or 2..8
  if (v_bits == 1) check_range(where, "v_bits", v_bits, 2, 8);
  if (kind == TileKind::analog) return;
  // a digital tile's cells keep their charge and conductance
  if (retention_ns != 0.0 || refresh_ns != 0.0)
    fail(where, retention_ns != 0.0 ? "retention_ns" : "refresh_ns",
         std::to_string(retention_ns != 0.0 ? retention_ns : refresh_ns),
         "only the analog tile's cells lose charge (kind: analog)");
  if (drift_nu != 0.0 || drift_nu_sigma != 0.0)
    fail(where, drift_nu != 0.0 ? "drift_nu" : "drift_nu_sigma",
         std::to_string(drift_nu != 0.0 ? drift_nu : drift_nu_sigma),
         "0 for the digital tile (conductance drift is an analog effect; kind: analog)");
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
