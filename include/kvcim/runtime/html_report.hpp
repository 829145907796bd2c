// The run report (the JSON of `kvcim run --json`, runtime::run_report) as one self-contained HTML
// page: no scripts, fonts or style sheets from elsewhere; inline SVG charts of energy per token
// (by component, operation and layer, CIM beside conventional), accuracy per step and the
// evaluation's intervals, the macro map, the KV cache's occupancy per step, the conditions and
// both texts side by side. `kvcim run --html`, kvcim.Report.to_html(). docs/report.md.
//
// Every number shown that is a number of the JSON report carries it exactly:
//   <... data-key="energy.cim.total_pj" data-value="26751.3...">26.751 nJ</...>
// data-key is the report path (object keys and array indices joined by '.'), data-value the JSON
// text of the number (the shortest text that reads back to the same double), or "null".
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace kvcim::runtime {

// Throws kvcim::Error naming the field when `report` is not a run report (schema_version 1).
std::string html_report(const nlohmann::json& report);

// Text made safe inside HTML and SVG (XML) elements and attribute values: & < > " ' escaped,
// bytes that are not UTF-8 and control characters other than newline and tab become U+FFFD.
std::string html_escape(const std::string& text);

}  // namespace kvcim::runtime
