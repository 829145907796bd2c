// The CIM macro kinds, declared once: each row names a kind, whether it reads its columns through
// converters (then the analog fields apply: ADC, noise, drift, stuck cells) and one line of doc.
// The enum MacroKind, the spec's `kind` names and the registry of kind models (macro_kind.hpp,
// cmodel/cim/macro_kind.cpp) are made from it. A new kind is one row here and one file that
// defines `const MacroKindModel& macro_kind_<name>()` (docs/cim_macro.md, "Macro kinds").
#pragma once
#include <string_view>

#define KVCIM_MACRO_KINDS(X)                                                                        \
  X(digital, false, "exact adder trees: every bit column summed exactly")                          \
  X(analog, true, "an ADC per bit column: each weight slice converted, recombined by shift-add")   \
  X(analog_merged, true,                                                                            \
    "weight slices merged in analog (binary-weighted capacitors, C-2C, multi-level cells), one "    \
    "conversion per output over the merged range")

namespace kvcim::cmodel::cim {

#define KVCIM_MACRO_KIND_ENUM(name, converts, doc) name,
enum class MacroKind { KVCIM_MACRO_KINDS(KVCIM_MACRO_KIND_ENUM) };
#undef KVCIM_MACRO_KIND_ENUM

#define KVCIM_MACRO_KIND_NAME(name, converts, doc) #name,
inline constexpr std::string_view kMacroKindNames[] = {KVCIM_MACRO_KINDS(KVCIM_MACRO_KIND_NAME)};
#undef KVCIM_MACRO_KIND_NAME

#define KVCIM_MACRO_KIND_DOC(name, converts, doc) doc,
inline constexpr std::string_view kMacroKindDocs[] = {KVCIM_MACRO_KINDS(KVCIM_MACRO_KIND_DOC)};
#undef KVCIM_MACRO_KIND_DOC

// The mask (bit i = kind i) of the kinds that read through converters: the analog-only fields'.
#define KVCIM_MACRO_KIND_CONVERTS(name, converts, doc) | ((converts) ? 1u << static_cast<int>(MacroKind::name) : 0u)
inline constexpr unsigned kConvertingMacroKinds = 0u KVCIM_MACRO_KINDS(KVCIM_MACRO_KIND_CONVERTS);
#undef KVCIM_MACRO_KIND_CONVERTS

// Whether a macro of this kind reads its columns through converters (analog effects apply).
constexpr bool converts(MacroKind k) { return (kConvertingMacroKinds >> static_cast<int>(k)) & 1u; }

}  // namespace kvcim::cmodel::cim
