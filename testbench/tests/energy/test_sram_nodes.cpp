// SRAM density by node (cmodel/energy/sram_nodes.hpp): the shipped table is read strictly with
// every value sourced or assumed, memory cells are carried between nodes by its macro densities
// (by hand at table nodes and between them), no bit comes out denser than a 5 nm macro's, and
// bad tables are refused naming the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kvcim/cmodel/energy/scaling.hpp"
#include "kvcim/cmodel/energy/sram_nodes.hpp"
#include "kvcim/cmodel/energy/tech.hpp"
#include "kvcim/error.hpp"
#include "../mapper/spec_text.hpp"

using namespace kvcim::cmodel::energy;

namespace {

std::string shipped() { return kvcim::test::source_text("configs/memory/sram_nodes.yaml"); }

std::string refusal(const std::string& yaml) {
  return kvcim::test::refusal_of([](const std::string& t) { sram_nodes_from_text(t, "bad.yaml"); }, yaml);
}

}  // namespace

TEST(SramNodes, ShippedTableIsSourcedAndOrdered) {
  const std::vector<SramNode>& t = sram_nodes();
  ASSERT_GE(t.size(), 2u);
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_TRUE(t[i].bitcell_provenance.rfind("source: ", 0) == 0 || t[i].bitcell_provenance.rfind("assumption: ", 0) == 0);
    EXPECT_GE(t[i].macro_um2_per_bit(), t[i].bitcell_um2) << t[i].node_nm;
    if (i > 0) {
      EXPECT_LT(t[i].node_nm, t[i - 1].node_nm);
    }
  }
  // 5 nm: the published 31.8 Mb/mm^2 of a 0.021 um^2 cell
  const SramNode& n5 = *std::find_if(t.begin(), t.end(), [](const SramNode& n) { return n.node_nm == 5; });
  EXPECT_DOUBLE_EQ(n5.macro_mb_per_mm2, 31.8);
  EXPECT_DOUBLE_EQ(n5.bitcell_um2, 0.021);
}

TEST(SramNodes, CellsAreCarriedByMacroDensityByHand) {
  // between table nodes: 45 nm (1.931 Mb/mm^2) to 5 nm (31.8)
  EXPECT_NEAR(sram_area_factor(45, 5), 1.931 / 31.8, 1e-12);
  EXPECT_NEAR(sram_area_factor(5, 3), 31.8 / 33.55, 1e-12);
  // between nodes, log-log: 4 nm lies between 5 and 3
  const double f = std::log(4.0 / 5) / std::log(3.0 / 5);
  EXPECT_NEAR(sram_um2_per_bit(sram_nodes(), 4), std::exp((1 - f) * std::log(1 / 31.8) + f * std::log(1 / 33.55)), 1e-15);
  // below the smallest node no further shrink; above the largest, logic scaling from it
  EXPECT_DOUBLE_EQ(sram_um2_per_bit(sram_nodes(), 1), 1 / 38.0);
  EXPECT_NEAR(sram_um2_per_bit(sram_nodes(), 90), (1 / 1.931) * area_factor(45, 90), 1e-12);
  // SRAM stopped following logic: from 45 nm to 5 nm a bit shrinks less than logic does
  EXPECT_GT(sram_area_factor(45, 5), area_factor(45, 5));
}

// The conventional engine's SRAM cell (45 nm table, 0.5 um^2) and the digital CIM cell ([C6],
// 5 nm) carried by the one table: at 5 nm no conventional bit is denser than a 5 nm bit cell.
TEST(SramNodes, TechTableBitCellsFollowTheTable) {
  const TechTable base = load_tech_table(std::string(KVCIM_SOURCE_DIR) + "/configs/tech/digital_45nm.yaml");
  const NodePoint at5{5, 0.7};
  EXPECT_NEAR(base.areas(at5).bit_cell_um2, 0.5 * 1.931 / 31.8, 1e-12);
  EXPECT_GT(base.areas(at5).bit_cell_um2, 0.021);  // never denser than a 5 nm bit cell
  EXPECT_NEAR(base.areas(at5).lane_um2, 400 * area_factor(45, 5), 1e-9);  // logic stays logic
  const TechTable cim = load_tech_table(std::string(KVCIM_SOURCE_DIR) + "/configs/tech/sram_digital_cim.yaml");
  EXPECT_DOUBLE_EQ(cim.areas(at5).bit_cell_um2, 0.176);
  EXPECT_NEAR(cim.areas({45, 0.9}).bit_cell_um2, 0.176 * 31.8 / 1.931, 1e-9);
}

TEST(SramNodes, BadTablesAreRefusedNamingTheField) {
  using kvcim::test::replaced;
  const std::string good = shipped();
  ASSERT_EQ(refusal(good), "");
  EXPECT_NE(refusal(replaced(good, "node_nm: 28", "node_nm: 50")).find("nodes[1].node_nm"), std::string::npos);
  EXPECT_NE(refusal(replaced(good, "{value: 31.8,", "{value: 90,")).find("macro_mb_per_mm2"), std::string::npos);
  EXPECT_NE(refusal(replaced(good, "{value: 0.021, source:", "{value: 0.021, sauce:")).find("bitcell_um2"),
            std::string::npos);
  EXPECT_NE(refusal(replaced(good, "nodes:", "nodez:")).find("did you mean 'nodes'"), std::string::npos);
  EXPECT_NE(refusal("nodes: []").find("at least two"), std::string::npos);
  EXPECT_NE(refusal("a: [").find("bad.yaml"), std::string::npos);
  EXPECT_NE(refusal("[1]").find("bad.yaml"), std::string::npos);
}
