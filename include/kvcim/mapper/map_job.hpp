// The job of `kvcim map` and of kvcim.map() once their inputs are read: the chip sized as asked,
// the policy's defaults, the default context and the placement. One function, so that the
// command and the Python call cannot drift apart (they had: each repeated these rules).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/placement.hpp"
#include "kvcim/mapper/policy.hpp"
#include "kvcim/mapper/shape.hpp"

namespace kvcim::mapper {

struct MapRequest {
  ModelShape shape;
  HardwareSpec hw;
  // The policy as text, where the overflow may be left unnamed (then an area budget spills what
  // does not fit, and a fixed spec too small for the weights is sized for them), or as a Policy,
  // which always names it.
  std::string policy_text;
  std::optional<Policy> policy;
  // Tokens of every sequence's cache; none: the model's seq_len, capped by what fits under
  // overflow=fail on a chip not sized for the model (default_context).
  std::optional<int64_t> context;
  bool fit = false;                // organization.macros: auto
  std::optional<double> area_mm2;  // a budget for the CIM chip; implies fit
  // A named machine (configs/machines) beside the synthetic engine: checked before any work, its
  // step (the placement's regime) before the placement is returned.
  std::string baseline = "synthetic";
};

struct MapResult {
  Placement placement;
  std::string note;  // "" or what was done to the spec unasked (sized for the model's weights)
};

// Errors name the field ("map: context = -1: expected a positive token count").
MapResult map_job(MapRequest request);

}  // namespace kvcim::mapper
