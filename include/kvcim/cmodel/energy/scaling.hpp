// Technology-node scaling: carries an energy, a delay or an area from the node (and supply
// voltage) where it was measured to the node where a comparison is made.
//
// The equations are Stillmaker & Baas, "Scaling equations for the accurate prediction of CMOS
// device performance from 180 nm to 7 nm", Integration 58 (2017): per node, energy is a
// quadratic and delay a cubic polynomial in Vdd (their fits to PTM/ITRS device models); the
// factor from node A at voltage Va to node B at Vb is P_B(Vb) / P_A(Va). Accelergy's hwcomponents
// uses the same fits. This model takes the high-performance (HP) fits for 45 nm and below (the
// paper gives HP and LP; Horowitz's 45 nm figures are a high-performance process), the single
// fits above. Area uses the paper's area table.
//
// Between tabulated nodes the polynomial values are interpolated linearly in log(node) and
// log(value). Below 7 nm the paper has nothing: values are extrapolated along the 10 -> 7 nm
// slope in log-log and flagged `extrapolated` (an assumption the reports state). Nodes outside
// [kMinNode, kMaxNode] are an error.
//
// How each kind of cost scales is a property of the cost (`ScalingRule`): logic and data
// converters follow the device equations; an SRAM access a technology table marks as one follows
// the published SRAM energies by node (sram_nodes.hpp: sram_read, sram_write); on-chip wires keep
// their capacitance per mm across nodes, so only the supply voltage scales their energy (C V^2)
// and their delay is left alone; off-chip memory (DRAM, HBM) is another chip and does not scale
// with the logic node at all.
#pragma once
#include <string>
#include <string_view>

#include "kvcim/spec_fields.hpp"

namespace kvcim::cmodel::energy {

inline constexpr double kMinNode = 3.0;     // nm; below 7 nm: extrapolated
inline constexpr double kMaxNode = 180.0;   // nm
inline constexpr double kMinVoltage = 0.4;  // V
inline constexpr double kMaxVoltage = 1.8;  // V

enum class ScalingRule { device, wire, none, sram_read, sram_write };
std::string_view name(ScalingRule r);

// A technology point: node and supply voltage.
struct NodePoint {
  double node_nm = 45;
  double voltage_v = 0.9;
  bool operator==(const NodePoint&) const = default;
};
// The spec's `comparison` section (kvcim/spec_fields.hpp); node_nm is required there, voltage_v
// defaults to a table's supply at that node (HardwareSpec::compare_at).
constexpr auto spec_fields(const NodePoint*) {
  return std::tuple{
      ::kvcim::range_field("node_nm", &NodePoint::node_nm, kMinNode, kMaxNode, "nm",
                           "the node both sides are priced at (below 7 nm extrapolated)").needed(),
      ::kvcim::range_field("voltage_v", &NodePoint::voltage_v, kMinVoltage, kMaxVoltage, "V", "the supply at that node")
          .by_default("the supply of a table measured at node_nm, else the node's nominal supply"),
  };
}

// The paper's nominal supply of a node (PTM), interpolated between nodes and held below 7 nm.
double nominal_voltage(double node_nm);

// Throws kvcim::Error naming `where` and `field` when the node or voltage is out of range or the
// polynomial is not positive there.
void check_node_point(const NodePoint& p, const std::string& where, const std::string& field);

// The polynomials themselves (dimensionless, as the paper normalises them).
double energy_polynomial(const NodePoint& p);
double delay_polynomial(const NodePoint& p);

// Factors to multiply a value measured at `from` by, to get it at `to`.
double energy_factor(const NodePoint& from, const NodePoint& to);
double delay_factor(const NodePoint& from, const NodePoint& to);
double area_factor(double from_nm, double to_nm);
// Under a rule: device = the equations; wire = (Vto / Vfrom)^2 for energy, 1 for delay; none = 1;
// sram_read / sram_write = the SRAM table's access energies (sram_energy_factor) for energy, the
// equations for delay.
double energy_factor(ScalingRule rule, const NodePoint& from, const NodePoint& to);
double delay_factor(ScalingRule rule, const NodePoint& from, const NodePoint& to);

// True when a node lies below the paper's 7 nm (the value is an extrapolation).
bool is_extrapolated(double node_nm);

}  // namespace kvcim::cmodel::energy
