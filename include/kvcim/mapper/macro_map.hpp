// Per macro of a placement: its role (weights, kv, unused) and the fraction of its cells holding
// data. Used by `kvcim map`'s Python macro map (Placement.to_dict()["macro_map"]) and by the run
// report's mapping.macro_map, which the HTML report draws.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "kvcim/mapper/placement.hpp"

namespace kvcim::mapper {

// At most this many macros are listed (a chip sized for a 7B model has millions).
inline constexpr int64_t kMaxMacroMap = 1 << 16;

struct MacroMap {
  std::vector<double> used_cells;
  std::vector<uint8_t> role;  // 0 unused, 1 weights, 2 kv
  bool truncated = false;     // the chip has more than kMaxMacroMap macros
};

// Weight macros from their blocks; the KV macros (kv.macros of them right after the weight
// macros, as `kvcim map --json` says in kv.first_macro) from the pages in use, laid over the KV
// area by cell count (the mapper counts KV tiles by cell area).
MacroMap macro_map(const Placement& p);

const char* macro_role_name(uint8_t role);  // "unused", "weights", "kv"

// {"role": [names], "utilization": [fractions of cells used, capped at 1], "truncated": bool}
nlohmann::json macro_map_json(const Placement& p);

}  // namespace kvcim::mapper
