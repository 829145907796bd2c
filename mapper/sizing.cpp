// Chips sized for the model (see sizing.hpp).
#include "kvcim/mapper/sizing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kvcim/error.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/placement.hpp"

namespace kvcim::mapper {

Policy effective_policy(const HardwareSpec& hw, Policy p) {
  if (hw.organization.kv == Home::offchip) p.overflow = KvOverflow::spill;
  return p;
}

namespace {

// Area of one macro (cells and converters) and of what does not scale with the macro count.
std::pair<double, double> macro_and_fixed_mm2(HardwareSpec hw) {
  hw.organization.macros = 1;
  const ChipArea one = cim_area(hw);
  return {one.macros_mm2 + one.adcs_mm2, one.total_mm2() - one.macros_mm2 - one.adcs_mm2};
}

int64_t whole_tiles(int64_t macros, int per_tile) {
  return (macros + per_tile - 1) / per_tile * per_tile;
}

}  // namespace

int64_t macros_within_area(const HardwareSpec& hw, double area_mm2, const std::string& where) {
  const auto [macro, fixed] = macro_and_fixed_mm2(hw);
  const double n = std::floor((area_mm2 - fixed) / macro);
  if (!(n >= 1)) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "smaller than one macro (%.4g mm2) plus the buffer and digital lanes (%.4g mm2)",
                  macro, fixed);
    char value[64];
    std::snprintf(value, sizeof value, "%g", area_mm2);
    fail(where, "area_mm2", value, why);
  }
  return static_cast<int64_t>(std::min(n, static_cast<double>(int64_t{1} << 32)));
}

int64_t kv_macros_needed(const cmodel::Config& c, const HardwareSpec& hw, const Policy& policy, int64_t context) {
  if (hw.organization.kv != Home::cim || context <= 0) return 0;
  const KvLayout k = kv_layout(c, hw, policy, 0);
  int64_t pages = (context + k.tokens_per_page - 1) / k.tokens_per_page;
  if (policy.window_tokens > 0) pages = std::min(pages, k.window_pages(policy));  // the window's pages
  const __int128 tiles = (static_cast<__int128>(k.streams()) * pages + k.pages_per_tile - 1) / k.pages_per_tile;
  const __int128 macros = (tiles * k.tile_cells + hw.macro_cells() - 1) / hw.macro_cells();
  if (macros > (static_cast<__int128>(1) << 32))
    fail("map", "macros", "more than 2^32", "the KV cache of this context does not fit any chip the mapper sizes");
  return static_cast<int64_t>(macros);
}

Sizing size_chip(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                 int64_t context) {
  const cmodel::Config& c = shape.config;
  Sizing s;
  std::tie(s.macro_mm2, s.fixed_mm2) = macro_and_fixed_mm2(hw);
  if (hw.organization.weights == Home::cim) s.weight_macros = weight_macros_needed(c, hw.macro, policy.replicas);
  s.kv_macros = kv_macros_needed(c, hw, policy, context);
  // total macros so that the policy's split gives both their share
  int64_t total = s.weight_macros + s.kv_macros;
  const double f = policy.kv_fraction;
  if (f >= 0 && s.weight_macros + s.kv_macros > 0) {
    if ((f == 0 && s.kv_macros > 0) || (f == 1 && s.weight_macros > 0))
      fail("policy", "kv_fraction", std::to_string(f),
           "leaves no macros for the " + std::string(f == 0 ? "KV cache" : "weights") + " of a sized chip");
    auto fits = [&](int64_t t) {
      const int64_t kv = static_cast<int64_t>(std::floor(f * static_cast<double>(t)));
      return kv >= s.kv_macros && t - kv >= s.weight_macros;
    };
    total = std::max<int64_t>(
        total, static_cast<int64_t>(std::ceil(std::max(f > 0 ? s.kv_macros / f : 0.0,
                                                       f < 1 ? s.weight_macros / (1 - f) : 0.0))));
    while (!fits(total)) ++total;
  }
  s.macros_needed = whole_tiles(std::max<int64_t>(total, 1), hw.organization.macros_per_tile);
  s.macros = s.macros_needed;
  if (hw.organization.area_mm2 > 0) {
    s.macros_cap = macros_within_area(hw, hw.organization.area_mm2, hw.source + ": organization");
    s.macros = std::min(s.macros, s.macros_cap);
  }
  return s;
}

void request_sizing(HardwareSpec& hw, bool fit, std::optional<double> area_mm2, const std::string& where) {
  if (area_mm2) {
    if (!(*area_mm2 > 0) || !std::isfinite(*area_mm2)) {
      char value[64];
      std::snprintf(value, sizeof value, "%g", *area_mm2);
      fail(where, "area_mm2", value, "expected a positive area in mm2");
    }
    macros_within_area(hw, *area_mm2, where);  // smaller than one macro: an error
    hw.organization.area_mm2 = *area_mm2;
    fit = true;
  }
  if (fit) hw.organization.macros_auto = true;
}

std::string fit_if_too_small(HardwareSpec& hw, const cmodel::Config& c, const Policy& policy,
                             bool overflow_named) {
  if (overflow_named || hw.organization.macros_auto || hw.organization.area_mm2 > 0 ||
      hw.organization.weights != Home::cim)
    return "";
  if (weight_macros_needed(c, hw.macro, policy.replicas) <= hw.organization.macros) return "";
  hw.organization.macros_auto = true;
  return "note      the " + std::to_string(hw.organization.macros) + " macros of " + hw.name +
         " do not hold the model's weights: sized the chip for the model (fit); "
         "policy overflow=spill keeps the spec's size\n";
}

HardwareSpec sized(HardwareSpec hw, const Sizing& s) {
  hw.organization.macros = s.macros;
  hw.organization.macros_auto = false;
  return hw;
}

int64_t default_context(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy, bool fit,
                        const std::string& where) {
  int64_t context = shape.config.seq_len;
  if (!fit && effective_policy(hw, policy).overflow == KvOverflow::fail) {
    const Placement empty = place(shape, hw, policy, 0);
    const int64_t fits = empty.kv.pages_per_stream() * empty.kv.tokens_per_page;
    if (fits == 0)
      fail(where, "KV capacity", "0 tokens",
           "no KV page fits beside the weights (policy overflow=fail); use fit, policy "
           "overflow=spill, kv_fraction=..., or a spec with more macros");
    context = std::min(context, fits);
  }
  return context;
}

}  // namespace kvcim::mapper
