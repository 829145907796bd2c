// Technology-node scaling: the factors equal Stillmaker & Baas's published equations at the
// tabulated nodes (the coefficients are written out here from the paper's table, apart from the
// copy in scaling.cpp), interpolate between them, are flagged as extrapolated below 7 nm, and
// refuse nodes and supplies outside the model.
#include <gtest/gtest.h>

#include <string>

#include "kvcim/cmodel/energy/scaling.hpp"
#include "kvcim/error.hpp"

using namespace kvcim::cmodel::energy;

namespace {

// The paper's polynomials evaluated by hand at one supply.
double e45(double v) { return 1.018 * v * v - 0.3107 * v + 0.1539; }    // HP45 energy
double e7(double v) { return 0.1776 * v * v - 0.09097 * v + 0.02447; }  // HP7 energy
double e130(double v) { return 7.171 * v * v - 6.709 * v + 2.904; }     // 130 nm energy
double d45(double v) { return ((-501.6 * v + 1567) * v - 1619) * v + 566.1; }  // HP45 delay
double d7(double v) { return ((-28.58 * v + 76.6) * v - 70.26) * v + 24.69; }  // HP7 delay

std::string error_of(const NodePoint& p) {
  try {
    check_node_point(p, "where", "field");
  } catch (const kvcim::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Scaling, FactorsEqualThePublishedEquationsAtTabulatedNodes) {
  EXPECT_DOUBLE_EQ(energy_polynomial({45, 0.9}), e45(0.9));
  EXPECT_DOUBLE_EQ(energy_polynomial({7, 0.7}), e7(0.7));
  EXPECT_DOUBLE_EQ(energy_polynomial({130, 1.3}), e130(1.3));
  EXPECT_DOUBLE_EQ(energy_factor(NodePoint{45, 0.9}, NodePoint{7, 0.7}), e7(0.7) / e45(0.9));
  EXPECT_DOUBLE_EQ(energy_factor(NodePoint{130, 1.3}, NodePoint{45, 1.0}), e45(1.0) / e130(1.3));
  EXPECT_DOUBLE_EQ(delay_factor(NodePoint{45, 1.0}, NodePoint{7, 0.7}), d7(0.7) / d45(1.0));
  // the area table: 45 nm -> 7 nm is 0.059 of the area
  EXPECT_DOUBLE_EQ(area_factor(45, 7), 0.059);
  EXPECT_DOUBLE_EQ(area_factor(7, 45), 1 / 0.059);
  // a lower supply at the same node saves energy
  EXPECT_LT(energy_factor(NodePoint{45, 1.0}, NodePoint{45, 0.8}), 1.0);
  EXPECT_DOUBLE_EQ(energy_factor(NodePoint{22, 0.8}, NodePoint{22, 0.8}), 1.0);
}

TEST(Scaling, InterpolatesBetweenNodesAndExtrapolatesBelowSeven) {
  // 28 nm lies between 32 and 20 nm
  const double e28 = energy_polynomial({28, 0.9});
  EXPECT_LT(e28, energy_polynomial({32, 0.9}));
  EXPECT_GT(e28, energy_polynomial({20, 0.9}));
  EXPECT_FALSE(is_extrapolated(7));
  EXPECT_TRUE(is_extrapolated(5));
  // below 7 nm the 10 -> 7 nm trend continues: 5 nm cheaper than 7 nm, 3 nm cheaper still
  const double f5 = energy_factor(NodePoint{7, 0.7}, NodePoint{5, 0.7});
  const double f3 = energy_factor(NodePoint{7, 0.7}, NodePoint{3, 0.7});
  EXPECT_LT(f5, 1.0);
  EXPECT_GT(f5, 0.6);
  EXPECT_LT(f3, f5);
  EXPECT_LT(area_factor(7, 5), 1.0);
  EXPECT_DOUBLE_EQ(nominal_voltage(5), 0.7);
  EXPECT_DOUBLE_EQ(nominal_voltage(45), 1.0);
}

TEST(Scaling, RulesForWiresAndOffchipMemory) {
  const NodePoint a{45, 0.9}, b{5, 0.7};
  EXPECT_DOUBLE_EQ(energy_factor(ScalingRule::device, a, b), energy_factor(a, b));
  EXPECT_DOUBLE_EQ(energy_factor(ScalingRule::wire, a, b), 0.49 / 0.81);
  EXPECT_DOUBLE_EQ(delay_factor(ScalingRule::wire, a, b), 1.0);
  EXPECT_DOUBLE_EQ(energy_factor(ScalingRule::none, a, b), 1.0);
  EXPECT_DOUBLE_EQ(delay_factor(ScalingRule::none, a, b), 1.0);
}

TEST(Scaling, NodesAndSuppliesOutsideTheModelAreRefused) {
  EXPECT_EQ(error_of({45, 0.9}), "");
  EXPECT_EQ(error_of({3, 0.7}), "");
  for (const auto& [p, expect] : std::vector<std::pair<NodePoint, std::string>>{
           {{2, 0.7}, "field.node_nm = 2"},
           {{200, 1.8}, "field.node_nm = 200"},
           {{45, 0.2}, "field.voltage_v = 0.2"},
           {{45, 2.5}, "field.voltage_v = 2.5"}}) {
    const std::string e = error_of(p);
    EXPECT_NE(e.find("where"), std::string::npos) << e;
    EXPECT_NE(e.find(expect), std::string::npos) << e;
  }
}
