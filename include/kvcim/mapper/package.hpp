// The package a CIM chip is built as: dies no larger than a reticle field (or one wafer, stated as
// such), linked die to die. The spec's `die` and `link` sections (kvcim/spec_fields.hpp tables);
// mapper/dies.hpp partitions a placement onto dies and charges the links.
#pragma once
#include <tuple>

#include "kvcim/spec_fields.hpp"

namespace kvcim::mapper {

// A 300 mm wafer's area: no die, wafer-scale or not, can be larger.
inline constexpr double kWafer300mmMm2 = 70685.8;

struct DieSpec {
  // The largest die one lithography exposure makes: the 26 mm x 33 mm scanner field.
  double reticle_mm2 = 858;
  // true: one die may be as large as the wafer (a wafer-scale engine stitched across reticle
  // fields, as Cerebras builds); the limit is then wafer_mm2 instead of reticle_mm2.
  bool wafer_scale = false;
  // The usable wafer area: Cerebras WSE-3, 46,225 mm2 (anchors of docs/mapper.md, "Dies").
  double wafer_mm2 = 46225;
  // The area limit of one die.
  double limit_mm2() const { return wafer_scale ? wafer_mm2 : reticle_mm2; }
};

constexpr auto spec_fields(const DieSpec*) {
  using Self = DieSpec;
  return std::tuple{
      ::kvcim::range_field("reticle_mm2", &Self::reticle_mm2, 1e-6, kWafer300mmMm2, "mm2",
                           "the largest die (one reticle field); at most wafer_mm2"),
      ::kvcim::flag_field("wafer_scale", &Self::wafer_scale,
                          "dies as large as the wafer (wafer_mm2) instead of one reticle field"),
      ::kvcim::range_field("wafer_mm2", &Self::wafer_mm2, 1e-6, kWafer300mmMm2, "mm2",
                           "usable area of one wafer (at most a 300 mm wafer's)"),
  };
}

// One die-to-die link: what moving a bit from one die to the next costs.
struct LinkSpec {
  double energy_pj_per_bit = 0.25;  // UCIe 2.5D (advanced package), up to 16 GT/s
  double bandwidth_gb_s = 1317;     // UCIe advanced package, one millimetre of die edge
  double latency_ns = 2;            // UCIe transmit-to-receive (adapter and PHY)
  // Power of one link powered but idle (UCIe's active state L0 with no traffic), charged for every
  // link over the whole step under --idle leaking; under gated, links sleep (UCIe's low-power
  // state L1) whenever they carry nothing and draw nothing. Assumption: a tenth of the default
  // link's busy power, 0.25 pJ/bit x 1,317 GB/s = 2.63 W: the forwarded clock, its PLL and the
  // receivers stay on while the data lanes idle; no published UCIe idle power was found.
  double idle_power_mw = 0.1 * 0.25 * 1317 * 8;
};

constexpr auto spec_fields(const LinkSpec*) {
  using Self = LinkSpec;
  return std::tuple{
      ::kvcim::range_field("energy_pj_per_bit", &Self::energy_pj_per_bit, 0.0, 1e6, "pJ/bit",
                           "energy of one bit across one die-to-die link").needed(),
      ::kvcim::range_field("bandwidth_gb_s", &Self::bandwidth_gb_s, 1e-9, 1e12, "GB/s",
                           "bandwidth of one link, each direction").needed(),
      ::kvcim::range_field("latency_ns", &Self::latency_ns, 0.0, 1e9, "ns",
                           "latency of one crossing (transmit to receive)"),
      ::kvcim::range_field("idle_power_mw", &Self::idle_power_mw, 0.0, 1e9, "mW",
                           "power of one link powered but idle, every link over the step under --idle leaking "
                           "(gated: asleep between crossings)")
          .by_default("an assumption: a tenth of the UCIe link's busy power, 0.25 pJ/bit x 1317 GB/s"),
  };
}

}  // namespace kvcim::mapper
