// SRAM density by node (cmodel/energy/sram_nodes.hpp): the shipped table is read strictly with
// every value sourced or assumed, memory cells are carried between nodes by its macro densities
// (by hand at table nodes and between them), no bit comes out denser than a 5 nm macro's, and
// an SRAM access is priced from the table's published energies (a bank access at table nodes, between
// them and at another supply, by hand), and bad tables are refused naming the field.
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

namespace {

// Horowitz's 45 nm bank points [H5] fitted by hand: least squares of log E on log bytes.
double horowitz_bank_pj(double bytes) {
  const double x[3] = {std::log(8192.0), std::log(32768.0), std::log(1048576.0)};
  const double y[3] = {std::log(10.0 / 64), std::log(20.0 / 64), std::log(100.0 / 64)};
  const double mx = (x[0] + x[1] + x[2]) / 3, my = (y[0] + y[1] + y[2]) / 3;
  double sxy = 0, sxx = 0;
  for (int i = 0; i < 3; ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  const double b = sxy / sxx;
  return std::exp(my + b * (std::log(bytes) - mx));
}

}  // namespace

// A conventional SRAM bank access and a digital CIM cell write at a node, by hand from the table's
// published figures: [H5] 10 pJ per 64 bits of an 8 KB bank at 45 nm 0.9 V, [M8] 50 pJ per 256 bits
// at 28 nm (0.9 V assumed), smaller nodes carried from 28 nm by sqrt(macro area per bit) and the
// supply as V^2; the bank size by Horowitz's 45 nm curve. Logic scaling would give 0.0553x at 5 nm.
TEST(SramNodes, AnSramBankAccessAtANodeIsTheTablesByHand) {
  const TechTable base = load_tech_table(std::string(KVCIM_SOURCE_DIR) + "/configs/tech/digital_45nm.yaml");
  const double e45 = 10.0 / 64, e28 = 50.0 / 256;  // pJ per bit of an 8 KB bank, both at 0.9 V
  const double c28 = e28 / (0.9 * 0.9);            // its switched capacitance per bit
  auto bank_aj = [&](const NodePoint& at, int64_t bank) {
    return base.costs(CostContext{at, 0, bank}).energy(EventKind::sram_bit);
  };
  // at 28 nm and the table's 0.9 V: a 32 KiB bank is Horowitz's 32 KiB energy x 0.1953 / 0.15625
  EXPECT_NEAR(bank_aj({28, 0.9}, 32768), horowitz_bank_pj(32768) * e28 / e45 * 1e6, 1.0);
  // at 5 nm, 0.7 V: the 28 nm capacitance x sqrt((1 / 31.8) / (1 / 5.260)) x 0.7^2
  const double e5 = c28 * std::sqrt(5.260 / 31.8) * 0.49;
  EXPECT_NEAR(sram_access_pj_per_bit(sram_nodes(), {5, 0.7}, false), e5, 1e-12);
  EXPECT_NEAR(bank_aj({5, 0.7}, 32768), horowitz_bank_pj(32768) * e5 / e45 * 1e6, 1.0);
  EXPECT_NEAR(bank_aj({5, 0.7}, 1 << 20), horowitz_bank_pj(1 << 20) * e5 / e45 * 1e6, 1.0);
  // the supply as V^2 (0.6 V against 0.7 V), not the logic polynomials
  EXPECT_NEAR(double(bank_aj({5, 0.6}, 32768)) / double(bank_aj({5, 0.7}, 32768)), 0.36 / 0.49, 1e-5);
  // between nodes: the capacitance in log-log between 16 nm and 7 nm
  const double c16 = c28 * std::sqrt(5.260 / 9.543), c7 = c28 * std::sqrt(5.260 / 24.74);
  const double f = std::log(10.0 / 16) / std::log(7.0 / 16);
  EXPECT_NEAR(sram_access_pj_per_bit(sram_nodes(), {10, 0.75}, false),
              std::exp((1 - f) * std::log(c16) + f * std::log(c7)) * 0.75 * 0.75, 1e-12);
  // a digital CIM cell written (0.156 pJ at 45 nm, write ~ read) and a buffer bit at 5 nm alike
  const TechTable cim = load_tech_table(std::string(KVCIM_SOURCE_DIR) + "/configs/tech/sram_digital_cim.yaml");
  const Costs c5 = cim.costs(CostContext{{5, 0.7}, 0, 0});
  EXPECT_NEAR(double(c5.energy(EventKind::cell_write)), 0.156 * e5 / e45 * 1e6, 1.0);
  EXPECT_NEAR(double(c5.energy(EventKind::buffer_bit)), 0.156 * e5 / e45 * 1e6, 1.0);
  // logic still follows the device equations
  EXPECT_NEAR(c5.energy_factor[static_cast<int>(EventKind::int8_mac)], energy_factor({45, 0.9}, {5, 0.7}), 1e-12);
  // the derived nodes say they are carried, the published ones cite their rows
  for (const SramNode& n : sram_nodes()) {
    if (n.node_nm == 45 || n.node_nm == 28)
      EXPECT_EQ(n.read_provenance.rfind("source: [", 0), 0u) << n.node_nm;
    else
      EXPECT_NE(n.read_provenance.find("assumption: no published access energy"), std::string::npos) << n.node_nm;
  }
}

TEST(SramNodes, BadAccessEnergiesAreRefusedNamingTheField) {
  using kvcim::test::replaced;
  const std::string good = shipped();
  // the largest node without its access energy: nothing to carry the others from
  const std::string no45 = replaced(good, "    read_pj_per_bit: {value: 0.15625,", "    #");
  EXPECT_NE(refusal(no45).find("nodes[0].read_pj_per_bit = (empty): give read_pj_per_bit, write_pj_per_bit and access_voltage_v together"), std::string::npos) << refusal(no45);
  EXPECT_NE(refusal(replaced(replaced(replaced(good, "    read_pj_per_bit: {value: 0.15625,", "    #"),
                                      "    write_pj_per_bit: {value: 0.15625,", "    #"),
                             "    access_voltage_v: {value: 0.9, source", "    #"))
                .find("the largest node needs its access energy"),
            std::string::npos);
  EXPECT_NE(refusal(replaced(good, "{value: 0.1953125, source", "{value: -0.19, source")).find("nodes[1].read_pj_per_bit"),
            std::string::npos);
  EXPECT_NE(refusal(replaced(good, "{value: 0.15625, assumption", "{value: 0, assumption")).find("write_pj_per_bit"),
            std::string::npos);
  EXPECT_NE(refusal(replaced(good, "{value: 0.9, source", "{value: 9, source")).find("access_voltage_v"),
            std::string::npos);
}
