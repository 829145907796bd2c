// One model per macro kind (the kinds' table: macro_kinds.hpp), as the attention tile has one
// class per TileKind behind make_tile: what a kind checks, how its converters span their range,
// which events one compute counts, and the compute itself (a fast path and the literal reference,
// proven equal by tests). Macro, MacroSpec and compute_events() ask macro_kind_model(spec.kind);
// nothing else in the tree branches on the kind beyond converts() (macro_kinds.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "kvcim/cmodel/cim/macro.hpp"

namespace kvcim::cmodel::cim {

class MacroKindModel {
 public:
  virtual ~MacroKindModel() = default;
  // Checks this kind adds to MacroSpec::validate; throws naming `where`, the field and the value.
  virtual void validate(const MacroSpec& spec, const std::string& where) const = 0;
  // The largest magnitude one noise-free conversion reads (0 without converters).
  virtual int64_t adc_full_scale(const MacroSpec& spec) const = 0;
  // The converter's codes [low, top]: unipolar [0, 2^A - 1] or bipolar [-2^(A-1), 2^(A-1) - 1].
  virtual int64_t adc_low_code(const MacroSpec& spec) const = 0;
  virtual int64_t adc_top_code(const MacroSpec& spec) const = 0;
  virtual int64_t adc_count(const MacroSpec& spec) const = 0;  // converters per macro
  // The events of one compute on n_rows x n_out (shapes already checked), in closed form.
  virtual MacroEvents compute_events(const MacroSpec& spec, int n_rows, int n_out) const = 0;
  // y = the macro's product, its events added to the macro's (inputs already checked).
  virtual void compute(Macro& m, const int32_t* x, int n_rows, int64_t* y, int n_out) const = 0;
  virtual void compute_reference(Macro& m, const int32_t* x, int n_rows, int64_t* y, int n_out) const = 0;
};

// The registry: the model of each row of KVCIM_MACRO_KINDS (cmodel/cim/macro_kind.cpp).
const MacroKindModel& macro_kind_model(MacroKind kind);

// Each kind's file defines its model's accessor, named after its row.
#define KVCIM_MACRO_KIND_ACCESSOR(name, converts, doc) const MacroKindModel& macro_kind_##name();
KVCIM_MACRO_KINDS(KVCIM_MACRO_KIND_ACCESSOR)
#undef KVCIM_MACRO_KIND_ACCESSOR

}  // namespace kvcim::cmodel::cim
