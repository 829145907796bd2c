// Chips sized for the model: how many macros hold what a design point keeps in CIM (the weights
// of every replica and/or the KV pages of `context` tokens for every sequence), capped by an area
// budget through chip.hpp's area model. place() sizes a spec with `organization.macros: auto` or
// an `organization.area_mm2` budget before placing; the placement then says what did not fit.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/policy.hpp"
#include "kvcim/mapper/shape.hpp"

namespace kvcim::mapper {

struct Sizing {
  int64_t weight_macros = 0;   // weight blocks of every replica (0: weights live off-chip)
  int64_t kv_macros = 0;       // KV pages of the context for every sequence (0: KV off-chip)
  int64_t macros_needed = 0;   // both under the policy's split, whole tiles
  int64_t macros_cap = 0;      // what the area budget allows (0: no budget)
  int64_t macros = 0;          // min(needed, cap)
  double macro_mm2 = 0;        // one macro with its converters, at the comparison node
  double fixed_mm2 = 0;        // buffer and digital lanes
  double area_needed_mm2() const { return fixed_mm2 + macro_mm2 * static_cast<double>(macros_needed); }
  double area_mm2() const { return fixed_mm2 + macro_mm2 * static_cast<double>(macros); }
  bool capped() const { return macros < macros_needed; }
};

// The design point's homes applied to a policy: with the KV cache off-chip every page spills
// (overflow=spill); otherwise the policy as given.
Policy effective_policy(const HardwareSpec& hw, Policy p);

// The context `kvcim map` and kvcim.map() use when none is given: the model's seq_len, capped by
// what fits in CIM beside the weights when the chip is not sized for the model (`fit` false) and
// the KV cache may not overflow (overflow=fail). Throws kvcim::Error naming `where` when no KV
// page fits at all.
int64_t default_context(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy, bool fit,
                        const std::string& where);

// Macros an area budget (mm^2, the whole CIM chip) allows. Throws kvcim::Error naming
// `where` when the budget is smaller than the buffer, the lanes and one macro.
int64_t macros_within_area(const HardwareSpec& hw, double area_mm2, const std::string& where);

// Macros for the model at `context` tokens per stream (the window already applied) under the
// policy (replicas, sequences, page size, gqa sharing, kv_fraction), capped by
// hw.organization.area_mm2 when set.
Sizing size_chip(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                 int64_t context);

// The macros of the KV pages `context` tokens of every sequence need under the policy (its
// window, when one is set, bounds the pages): whole pages per stream, whole tiles, whole macros.
// 0 when the KV cache lives off-chip or the context is empty.
int64_t kv_macros_needed(const cmodel::Config& c, const HardwareSpec& hw, const Policy& policy, int64_t context);

// A request to size the chip (kvcim map/run --fit, --area-mm2): `fit` makes the spec's macros
// auto; an area budget (mm^2) caps the sizing and implies fit. Errors name `where` and the field:
// a budget that is not positive or smaller than one macro.
void request_sizing(HardwareSpec& hw, bool fit, std::optional<double> area_mm2, const std::string& where);

// kvcim map and run: a model whose weights (of the policy's replicas) exceed a fixed spec, when
// the caller named no overflow (`overflow_named`: PolicyText), gets a chip sized for it (macros:
// auto) rather than a failure or nearly every weight spilled. Returns the note saying so ("" when
// the spec is left as it is).
std::string fit_if_too_small(HardwareSpec& hw, const cmodel::Config& c, const Policy& policy,
                             bool overflow_named);

// The spec with `macros` set from the sizing (no longer auto).
HardwareSpec sized(HardwareSpec hw, const Sizing& s);

}  // namespace kvcim::mapper
