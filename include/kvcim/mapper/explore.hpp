// The design-space enumerator: from ranges of macro geometry and circuit (rows, cols, cell bits,
// ADC bits), number of macros, page size and overflow policy, every valid design point with its
// derived figures, computed in closed form (thousands of points per second; see
// benchmarks/bench_mapper.cpp) for the sweep tools to evaluate.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/mapper/analysis.hpp"

namespace kvcim::mapper {

struct DesignRanges {
  std::vector<int> rows, cols, cell_bits, adc_bits;  // empty = the base spec's value
  std::vector<int64_t> macros;
  std::vector<int> tokens_per_page;                  // 0 = one page per tile
  std::vector<KvOverflow> overflow;
  int64_t context = 0;                               // 0 = the shape's context
  // Hold area equal: each design point's conventional engine gets the SRAM that gives its chip
  // the CIM chip's area (iso_area_baseline); otherwise the base spec's SRAM for every point.
  bool iso_area = false;
};

struct DesignPoint {
  int rows = 0, cols = 0, cell_bits = 0, adc_bits = 0;  // adc_bits 0 for digital macros
  int64_t macros = 0;
  int tokens_per_page = 0;
  KvOverflow overflow = KvOverflow::fail;
  bool fits = true;                  // the context fits under the policy
  int64_t context_evaluated = 0;     // = context, or max_context_tokens when it does not fit
  double area_mm2_cim = 0, area_mm2_conventional = 0;  // chips at the comparison node
  Figures figures;
};

struct EnumerationStats {
  int64_t combinations = 0;  // points of the grid (digital macros ignore adc_bits)
  int64_t valid = 0;         // points visited
  int64_t invalid = 0;       // rejected: spec invalid, page not dividing the tile, no KV capacity
};

// Visits every valid point in grid order (rows, cols, cell_bits, adc_bits, macros, page,
// overflow). The base spec and policy give every other parameter. Deterministic.
EnumerationStats enumerate_designs(const ModelShape& shape, const HardwareSpec& base,
                                   const Policy& policy, const DesignRanges& ranges,
                                   const std::function<void(const DesignPoint&)>& visit);
std::vector<DesignPoint> enumerate_designs(const ModelShape& shape, const HardwareSpec& base,
                                           const Policy& policy, const DesignRanges& ranges,
                                           EnumerationStats* stats = nullptr);

nlohmann::json to_json(const DesignPoint& p);

}  // namespace kvcim::mapper
