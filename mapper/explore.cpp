#include "kvcim/mapper/explore.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/report.hpp"

namespace kvcim::mapper {

namespace cim = cmodel::cim;

namespace {

template <typename T>
std::vector<T> or_default(const std::vector<T>& v, T fallback) {
  return v.empty() ? std::vector<T>{fallback} : v;
}

}  // namespace

EnumerationStats enumerate_designs(const ModelShape& shape, const HardwareSpec& base,
                                   const Policy& policy, const DesignRanges& r,
                                   const std::function<void(const DesignPoint&)>& visit) {
  shape.config.validate(shape.name);
  check_mappable(shape.config, shape.name);
  base.validate();
  policy.validate("policy");
  const int64_t context = r.context > 0 ? r.context : shape.config.seq_len;
  EnumerationStats st;
  const auto rows = or_default(r.rows, base.macro.rows), cols = or_default(r.cols, base.macro.cols);
  const auto cells = or_default(r.cell_bits, base.macro.cell_bits);
  const auto adcs = or_default(r.adc_bits, base.macro.adc_bits);
  const auto macros = or_default(r.macros, base.organization.macros);
  const auto pages = or_default(r.tokens_per_page, policy.tokens_per_page);
  const auto overflows = or_default(r.overflow, policy.overflow);
  const bool analog = cim::converts(base.macro.kind);
  // The conventional baseline depends on the CIM design only through its SRAM size (iso-area):
  // computed once per (context, SRAM bytes).
  std::map<std::pair<int64_t, int64_t>, BaselineFigures> baselines;
  auto baseline = [&](int64_t ctx, const HardwareSpec& conv) -> const BaselineFigures& {
    const auto key = std::make_pair(ctx, conv.baseline.sram_bytes);
    auto it = baselines.find(key);
    if (it == baselines.end()) it = baselines.emplace(key, baseline_figures(shape, conv, ctx, policy.sequences)).first;
    return it->second;
  };
  // A digital macro's rows_per_cycle follows its rows when the base sums all rows at once.
  const bool all_rows = base.macro.rows_per_cycle == base.macro.rows;

  for (int R : rows)
    for (int C : cols)
      for (int cb : cells)
        for (size_t ai = 0; ai < (analog ? adcs.size() : 1); ++ai) {
          HardwareSpec hw = base;
          hw.macro.rows = R;
          hw.macro.cols = C;
          hw.macro.cell_bits = cb;
          if (analog) hw.macro.adc_bits = adcs[ai];
          hw.macro.rows_per_cycle = all_rows ? R : std::min(base.macro.rows_per_cycle, R);
          hw.macro.adc_share = std::min(base.macro.adc_share, C);
          bool spec_ok = true;
          try {
            hw.validate();
          } catch (const Error&) {
            spec_ok = false;
          }
          const int64_t inner = static_cast<int64_t>(macros.size() * pages.size() * overflows.size());
          st.combinations += inner;
          if (!spec_ok) {
            st.invalid += inner;
            continue;
          }
          for (int64_t n : macros)
            for (int tpp : pages)
              for (KvOverflow ov : overflows) {
                hw.organization.macros = n;
                Policy p = policy;
                p.tokens_per_page = tpp;
                p.overflow = ov;
                if (ov != KvOverflow::window) p.window_tokens = 0;
                const int T = hw.kv.tokens_per_tile;
                if (n < 1 || (tpp > 0 && (tpp > T || T % tpp != 0))) {
                  ++st.invalid;
                  continue;
                }
                const int64_t budget = weight_macro_budget(shape.config, hw, p);
                const WeightPlacement w = place_weights(shape.config, hw.macro, p.replicas, budget);
                const int64_t kv_macros =
                    p.kv_fraction < 0 ? n - w.macros_used
                                      : static_cast<int64_t>(std::floor(p.kv_fraction * static_cast<double>(n)));
                const KvLayout kv = kv_layout(shape.config, hw, p, kv_macros);
                DesignPoint d;
                d.rows = R;
                d.cols = C;
                d.cell_bits = cb;
                d.adc_bits = analog ? hw.macro.adc_bits : 0;
                d.macros = n;
                d.tokens_per_page = kv.tokens_per_page;
                d.overflow = ov;
                const int64_t fit = kv.pages_per_stream() * kv.tokens_per_page;
                d.fits = ov != KvOverflow::fail || fit >= context;
                d.context_evaluated = d.fits ? context : fit;
                if (d.context_evaluated < 1 || (ov == KvOverflow::window && kv.pages_per_stream() < 1 &&
                                                p.window_tokens == 0)) {
                  ++st.invalid;  // no KV capacity at all under this policy
                  continue;
                }
                // the chip as placed: KV sized to the context evaluated, the rest not built
                hw.organization.macros = n;
                HardwareSpec chip = hw;
                const KvLayout placed =
                    kv_layout(shape.config, chip, p,
                              place_kv_macros(shape.config, chip, p, w.macros_used, d.context_evaluated));
                try {
                  const HardwareSpec conv = r.iso_area ? iso_area_baseline(chip, placed.tiles) : chip;
                  d.area_mm2_cim = cim_area(chip, placed.tiles).total_mm2();
                  d.area_mm2_conventional = baseline_area(conv).total_mm2();
                  d.figures = figures(shape, chip, p, w, placed, d.context_evaluated, &baseline(d.context_evaluated, conv));
                } catch (const Error&) {
                  ++st.invalid;
                  continue;
                }
                ++st.valid;
                visit(d);
              }
        }
  return st;
}

std::vector<DesignPoint> enumerate_designs(const ModelShape& shape, const HardwareSpec& base,
                                           const Policy& policy, const DesignRanges& ranges,
                                           EnumerationStats* stats) {
  std::vector<DesignPoint> out;
  const EnumerationStats s =
      enumerate_designs(shape, base, policy, ranges, [&](const DesignPoint& d) { out.push_back(d); });
  if (stats) *stats = s;
  return out;
}

nlohmann::json to_json(const DesignPoint& d) {
  // the design's knobs, then its figures under the keys `kvcim map --json` gives them
  nlohmann::json j = figures_json(d.figures);
  j.update({{"rows", d.rows},
            {"cols", d.cols},
            {"cell_bits", d.cell_bits},
            {"adc_bits", d.adc_bits},
            {"macros", d.macros},
            {"tokens_per_page", d.tokens_per_page},
            {"overflow", name(d.overflow)},
            {"fits", d.fits},
            {"context", d.context_evaluated},
            {"area_mm2", {{"cim", d.area_mm2_cim}, {"conventional", d.area_mm2_conventional}}}});
  return j;
}

}  // namespace kvcim::mapper
