// The macro kinds' registry, and the two kinds that read every bit column on its own: digital
// (exact adder trees) and analog (an ADC per column, shift-and-add recombining the slices). Their
// computes are Macro's own fast paths and its bit-level reference (macro_fast.cpp, macro_kernels.cpp,
// macro_reference.cpp); this file states what differs between them: converters, full scale, events.
#include <algorithm>
#include <array>
#include <string>

#include "kvcim/cmodel/cim/macro_kind.hpp"
#include "kvcim/error.hpp"
#include "macro_access.hpp"
#include "macro_layout.hpp"

namespace kvcim::cmodel::cim {
namespace {

class SlicedKind final : public MacroKindModel {
 public:
  explicit SlicedKind(bool analog) : analog_(analog) {}
  void validate(const MacroSpec&, const std::string&) const override {}
  // The largest noise-free column partial sum: rows_per_cycle * (2^dmax - 1) * (2^cmax - 1).
  int64_t adc_full_scale(const MacroSpec& spec) const override {
    int dmax = 0, cmax = 0;
    for (const auto& p : detail::input_pieces(spec)) dmax = std::max(dmax, p.width);
    for (const auto& p : detail::weight_slices(spec)) cmax = std::max(cmax, p.width);
    return static_cast<int64_t>(spec.rows_per_cycle) * ((1 << dmax) - 1) * ((1 << cmax) - 1);
  }
  int64_t adc_low_code(const MacroSpec&) const override { return 0; }
  int64_t adc_top_code(const MacroSpec& spec) const override { return (int64_t{1} << spec.adc_bits) - 1; }
  int64_t adc_count(const MacroSpec& spec) const override {
    return analog_ ? (spec.cols + spec.adc_share - 1) / spec.adc_share : 0;
  }
  // docs/cim_macro.md, "Events": R rows, N outputs, S slices, T input cycles,
  // G = ceil(R / rows_per_cycle) row groups, C = N*S columns.
  MacroEvents compute_events(const MacroSpec& spec, int n_rows, int n_out) const override {
    MacroEvents e;
    const int64_t R = n_rows, N = n_out, S = spec.slices_per_weight(), T = spec.input_cycles();
    const int64_t G = spec.row_groups(n_rows), C = N * S;
    const bool offset = spec.encoding == WeightEncoding::offset;
    e.row_activations = R * T;
    e.column_reads = C * T * G;
    e.adc_conversions = analog_ ? C * T * G : 0;
    e.adder_ops = (analog_ ? 0 : C * T * (R - G)) + C * T * (G - 1) + (offset ? R - 1 : 0);
    e.shift_add_ops = N * (S * T - 1) + (offset ? N : 0);
    e.cycles = T * G * (analog_ ? std::min<int64_t>(spec.adc_share, C) : 1);
    return e;
  }
  void compute(Macro& m, const int32_t* x, int n_rows, int64_t* y, int n_out) const override {
    if (analog_) detail::MacroAccess::analog_fast(m, x, n_rows, y, n_out);
    else detail::MacroAccess::digital_fast(m, x, n_rows, y, n_out);
  }
  void compute_reference(Macro& m, const int32_t* x, int n_rows, int64_t* y, int n_out) const override {
    detail::MacroAccess::sliced_reference(m, x, n_rows, y, n_out);
  }

 private:
  bool analog_;
};

}  // namespace

const MacroKindModel& macro_kind_digital() {
  static const SlicedKind kind(false);
  return kind;
}

const MacroKindModel& macro_kind_analog() {
  static const SlicedKind kind(true);
  return kind;
}

const MacroKindModel& macro_kind_model(MacroKind kind) {
#define KVCIM_MACRO_KIND_ENTRY(name, converts, doc) &macro_kind_##name,
  static constexpr std::array kModels = {KVCIM_MACRO_KINDS(KVCIM_MACRO_KIND_ENTRY)};
#undef KVCIM_MACRO_KIND_ENTRY
  const auto i = static_cast<size_t>(kind);
  if (i >= kModels.size())
    fail("cim::MacroSpec", "kind", std::to_string(static_cast<int>(kind)), "a kind of macro_kinds.hpp");
  return kModels[i]();
}

}  // namespace kvcim::cmodel::cim
