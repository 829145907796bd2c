// A placement as JSON (what `kvcim map --json` writes) and as a readable summary with a table per
// layer. The JSON keys schema_version, macros_used, utilization, max_context_tokens,
// kv_cell_writes_per_token, energy_per_token_pj.cim and energy_per_token_pj.conventional are
// fixed: scripts read them.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/compare.hpp"
#include "kvcim/mapper/macro_pricing.hpp"

namespace kvcim::mapper {

inline constexpr int kSchemaVersion = 1;

// Everything `kvcim map` reports for a placement at its context.
struct MapReport {
  Figures figures;
  TokenLedgers ledgers;
  cmodel::energy::Ledger conventional;
  // The conventional engine on a chip of the CIM chip's area (iso_area_baseline), per token.
  // NaN when the two chips hold different data (comparison.iso_area_why_not says why).
  double conventional_iso_area_pj = 0;
  Comparison comparison;  // best and equal throughput, EDP, iso-area (compare.hpp)
  // the component macro model's uncertainty on figures.energy_pj_cim (macro_pricing.hpp)
  EnergyBand cim_band;
};
MapReport analyse(const Placement& p);

// Per-macro entries and block tables are listed in full up to these sizes; beyond them the
// JSON says how to derive them (matrices[].first_macro and the tiling; the allocator).
inline constexpr int64_t kMaxListedMacros = 4096;
inline constexpr int64_t kMaxListedPages = 20000;

// The derived figures in the JSON's vocabulary (a subset of to_json, which starts from it):
// context, macros_used, macros_total, utilization, fragmentation, occupancy, offchip_bytes,
// max_context_tokens, kv_cell_writes_per_token, energy_per_token_pj, latency_per_token_ns,
// bound_per_token, batch, comparison, endurance, weights {macros_used, blocks_offchip, onchip_fraction} and kv
// {tiles, slots, macros_reserved, macros_used, pages_in_use, tokens}. Python's Placement.figures.
// figures_json(p, r) adds the context and the iso-area baseline to figures_json(f), the keys a
// Figures alone gives, which the explorer's design points and the run report's `mapping` record
// too: one figure has one key in every output.
nlohmann::json figures_json(const Placement& p, const MapReport& r);
nlohmann::json figures_json(const Figures& f);
nlohmann::json to_json(const Placement& p, const MapReport& r);
std::string summary(const Placement& p, const MapReport& r);

}  // namespace kvcim::mapper
