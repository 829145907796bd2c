#include "kvcim/mapper/map_job.hpp"

#include "kvcim/error.hpp"
#include "kvcim/mapper/machine.hpp"
#include "kvcim/mapper/sizing.hpp"

namespace kvcim::mapper {

MapResult map_job(MapRequest r) {
  HardwareSpec& hw = r.hw;
  const std::optional<Machine> machine =
      r.baseline == "synthetic" ? std::nullopt : std::optional(machine_by_name(r.baseline));
  request_sizing(hw, r.fit, r.area_mm2, "map");
  if (r.context && *r.context < 1)
    fail("map", "context", std::to_string(*r.context), "expected a positive token count");
  PolicyText given{r.policy.value_or(Policy{}), true};  // a Policy names its overflow
  if (!r.policy) {
    Policy base;  // a budget spills what does not fit unless the policy says otherwise
    if (hw.organization.area_mm2 > 0) base.overflow = KvOverflow::spill;
    given = parse_policy_text(r.policy_text, base);
  }
  const Policy& policy = given.policy;
  std::string note = fit_if_too_small(hw, r.shape.config, policy, given.overflow_named);
  const bool sized = hw.organization.macros_auto || hw.organization.area_mm2 > 0;
  const int64_t context = r.context ? *r.context : default_context(r.shape, hw, policy, sized, "map: spec");
  Placement p = place(r.shape, hw, policy, context);
  p.baseline = r.baseline;
  if (machine) machine_step(*machine, p.shape.config, machine_regime(p));  // a regime beyond its HBM fails here
  return {std::move(p), std::move(note)};
}

}  // namespace kvcim::mapper
