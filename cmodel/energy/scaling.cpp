#include "kvcim/cmodel/energy/scaling.hpp"

#include <array>
#include <cmath>
#include <sstream>

#include "kvcim/cmodel/energy/sram_nodes.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel::energy {

namespace {

// Stillmaker & Baas 2017, Table 4 (delay: c3 V^3 + c2 V^2 + c1 V + c0; energy: e2 V^2 + e1 V +
// e0), HP fits for 45 nm and below; area relative to 45 nm from their area table; nominal supply
// of each node's PTM model.
struct NodeFit {
  double node_nm;
  std::array<double, 4> delay;   // c3, c2, c1, c0
  std::array<double, 3> energy;  // e2, e1, e0
  double area_rel_45;
  double vdd;
};

constexpr std::array<NodeFit, 11> kFits = {{
    {7, {-28.58, 76.6, -70.26, 24.69}, {0.1776, -0.09097, 0.02447}, 0.059, 0.70},
    {10, {-34.95, 93.65, -85.99, 30.4}, {0.2068, -0.09311, 0.02375}, 0.10, 0.75},
    {14, {-40.66, 109.2, -100.6, 35.92}, {0.2363, -0.09675, 0.02239}, 0.17, 0.80},
    {16, {0, 24.8, -47.52, 28.87}, {0.2958, -0.1241, 0.03024}, 0.19, 0.85},
    {20, {0, 34.63, -66.37, 41.15}, {0.373, -0.1582, 0.04104}, 0.21, 0.90},
    {32, {-1047, 2982, -2797, 873.5}, {0.8367, -0.4341, 0.1701}, 0.46, 0.90},
    {45, {-501.6, 1567, -1619, 566.1}, {1.018, -0.3107, 0.1539}, 1.0, 1.00},
    {65, {-53.3, 230.4, -333.9, 178.6}, {3.755, -4.398, 1.975}, 1.5, 1.10},
    {90, {-60.34, 262.5, -384.2, 210.9}, {4.762, -4.781, 2.092}, 2.8, 1.20},
    {130, {-76.65, 334.9, -493.4, 275.8}, {7.171, -6.709, 2.904}, 6.4, 1.30},
    {180, {0, 97.09, -356.7, 406.5}, {0, 24.64, -17.98}, 19.0, 1.80},
}};

double delay_at(const NodeFit& f, double v) {
  return ((f.delay[0] * v + f.delay[1]) * v + f.delay[2]) * v + f.delay[3];
}
double energy_at(const NodeFit& f, double v) { return (f.energy[0] * v + f.energy[1]) * v + f.energy[2]; }

// The segment [kFits[i], kFits[i + 1]] holding `node` (the first one below 7 nm).
size_t segment(double node) {
  for (size_t i = 0; i + 2 < kFits.size(); ++i)
    if (node <= kFits[i + 1].node_nm) return i;
  return kFits.size() - 2;
}

// Log-log interpolation (and extrapolation below 7 nm) of a per-node quantity.
template <typename F>
double interpolate(double node, F value_at) {
  for (const auto& f : kFits)
    if (node == f.node_nm) return value_at(f);
  const size_t i = segment(node);
  const double a = value_at(kFits[i]), b = value_at(kFits[i + 1]);
  if (!(a > 0) || !(b > 0)) return std::nan("");
  const double t = std::log(node / kFits[i].node_nm) / std::log(kFits[i + 1].node_nm / kFits[i].node_nm);
  return std::exp(std::log(a) + t * (std::log(b) - std::log(a)));
}

std::string num(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

}  // namespace

std::string_view name(ScalingRule r) {
  switch (r) {
    case ScalingRule::device: return "device";
    case ScalingRule::wire: return "wire";
    case ScalingRule::none: return "none";
    case ScalingRule::sram_read: return "sram_read";
    case ScalingRule::sram_write: return "sram_write";
  }
  return "device";
}

double nominal_voltage(double node) {
  if (node <= kFits.front().node_nm) return kFits.front().vdd;
  const size_t i = segment(node);
  const double t = (node - kFits[i].node_nm) / (kFits[i + 1].node_nm - kFits[i].node_nm);
  return kFits[i].vdd + t * (kFits[i + 1].vdd - kFits[i].vdd);
}

double energy_polynomial(const NodePoint& p) {
  return interpolate(p.node_nm, [&](const NodeFit& f) { return energy_at(f, p.voltage_v); });
}

double delay_polynomial(const NodePoint& p) {
  return interpolate(p.node_nm, [&](const NodeFit& f) { return delay_at(f, p.voltage_v); });
}

void check_node_point(const NodePoint& p, const std::string& where, const std::string& field) {
  if (!(p.node_nm >= kMinNode && p.node_nm <= kMaxNode))
    fail(where, field + ".node_nm", num(p.node_nm),
         "expected a node of " + num(kMinNode) + " to " + num(kMaxNode) +
             " nm (Stillmaker & Baas cover 180-7 nm; below 7 nm is extrapolated)");
  if (!(p.voltage_v >= kMinVoltage && p.voltage_v <= kMaxVoltage))
    fail(where, field + ".voltage_v", num(p.voltage_v),
         "expected a supply of " + num(kMinVoltage) + " to " + num(kMaxVoltage) + " V");
  if (!(energy_polynomial(p) > 0) || !(delay_polynomial(p) > 0))
    fail(where, field + ".voltage_v", num(p.voltage_v),
         "outside the range where the scaling equations of " + num(p.node_nm) +
             " nm hold (nominal " + num(nominal_voltage(p.node_nm)) + " V)");
}

double energy_factor(const NodePoint& from, const NodePoint& to) {
  return energy_polynomial(to) / energy_polynomial(from);
}

double delay_factor(const NodePoint& from, const NodePoint& to) {
  return delay_polynomial(to) / delay_polynomial(from);
}

double area_factor(double from_nm, double to_nm) {
  auto area = [](double n) { return interpolate(n, [](const NodeFit& f) { return f.area_rel_45; }); };
  return area(to_nm) / area(from_nm);
}

double energy_factor(ScalingRule rule, const NodePoint& from, const NodePoint& to) {
  switch (rule) {
    case ScalingRule::device: return energy_factor(from, to);
    case ScalingRule::wire: return (to.voltage_v * to.voltage_v) / (from.voltage_v * from.voltage_v);
    case ScalingRule::none: return 1.0;
    case ScalingRule::sram_read: return sram_energy_factor(false, from, to);
    case ScalingRule::sram_write: return sram_energy_factor(true, from, to);
  }
  return 1.0;
}

double delay_factor(ScalingRule rule, const NodePoint& from, const NodePoint& to) {
  const bool device = rule == ScalingRule::device || rule == ScalingRule::sram_read || rule == ScalingRule::sram_write;
  return device ? delay_factor(from, to) : 1.0;
}

bool is_extrapolated(double node_nm) { return node_nm < kFits.front().node_nm; }

}  // namespace kvcim::cmodel::energy
