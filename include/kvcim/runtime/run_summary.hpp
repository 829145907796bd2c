// The terminal summary of a run (what `kvcim run` prints): the two texts side by side, the batch,
// the accuracy with its intervals, energy per token by component with its conditions, and the
// mapping. Written from the typed report, as the JSON is.
#pragma once
#include <string>

#include "kvcim/runtime/report.hpp"

namespace kvcim::runtime {

std::string run_summary(const RunReport& report);

}  // namespace kvcim::runtime
