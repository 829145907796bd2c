// The design-space enumerator: every valid grid point, each with the same figures a direct
// placement gives; invalid points counted, not visited.
#include <gtest/gtest.h>

#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/explore.hpp"

using namespace kvcim::mapper;

namespace {
HardwareSpec base_with(HardwareSpec hw, int64_t macros) {
  hw.organization.macros = macros;
  return hw;
}
}  // namespace

TEST(Explore, VisitsEveryValidPointWithTheFiguresOfADirectPlacement) {
  const HardwareSpec base = load_hardware_spec(std::string(KVCIM_SOURCE_DIR) + "/configs/hw/sram_analog.yaml");
  const ModelShape shape = shape_preset("stories260k");
  DesignRanges r;
  r.rows = {64, 256};
  r.cols = {4, 128, 256};   // 4 columns cannot hold an 8-slice weight: invalid
  r.cell_bits = {1, 2};
  r.adc_bits = {6, 8, 11};  // the table has no 11-bit ADC: invalid
  r.macros = {200, 1024};
  r.tokens_per_page = {16, 48, 64};  // 48 does not divide 64: invalid
  r.overflow = {KvOverflow::fail, KvOverflow::spill};
  r.context = 256;
  EnumerationStats st;
  const auto points = enumerate_designs(shape, base, Policy{}, r, &st);
  EXPECT_EQ(st.combinations, 2 * 3 * 2 * 3 * 2 * 3 * 2);
  EXPECT_EQ(st.valid + st.invalid, st.combinations);
  EXPECT_EQ(static_cast<int64_t>(points.size()), st.valid);
  // valid: rows 2 x cols {128, 256} x cells 2 x adc {6, 8} x macros 2 x pages {16, 64} x 2
  // policies, minus the points without KV capacity under fail (checked below)
  int64_t expect_valid = 0;
  for (const auto& p : points) {
    ASSERT_NE(p.cols, 4);
    ASSERT_NE(p.adc_bits, 11);
    ASSERT_NE(p.tokens_per_page, 48);
    ++expect_valid;
  }
  EXPECT_LE(expect_valid, 2 * 2 * 2 * 2 * 2 * 2 * 2);
  // Compare a sample with a direct placement.
  for (size_t i = 0; i < points.size(); i += 7) {
    const DesignPoint& d = points[i];
    HardwareSpec hw = base;
    hw.macro.rows = d.rows;
    hw.macro.cols = d.cols;
    hw.macro.cell_bits = d.cell_bits;
    hw.macro.adc_bits = d.adc_bits;
    hw.macro.rows_per_cycle = std::min(base.macro.rows_per_cycle, d.rows);
    hw.organization.macros = d.macros;
    Policy p;
    p.tokens_per_page = d.tokens_per_page;
    p.overflow = d.overflow;
    const Figures f = figures(place(shape, hw, p, d.context_evaluated));
    SCOPED_TRACE("point " + std::to_string(i));
    EXPECT_EQ(f.macros_used, d.figures.macros_used);
    EXPECT_EQ(f.max_context_tokens, d.figures.max_context_tokens);
    EXPECT_EQ(f.kv_cell_writes_per_token, d.figures.kv_cell_writes_per_token);
    EXPECT_DOUBLE_EQ(f.utilization, d.figures.utilization);
    EXPECT_NEAR(f.energy_pj_cim, d.figures.energy_pj_cim, 1e-9 * f.energy_pj_cim);
    EXPECT_NEAR(f.energy_pj_conventional, d.figures.energy_pj_conventional, 1e-9 * f.energy_pj_conventional);
    EXPECT_DOUBLE_EQ(f.latency_ns_cim, d.figures.latency_ns_cim);
    EXPECT_EQ(d.fits, d.overflow != KvOverflow::fail || f.max_context_tokens >= 256);
    const auto j = to_json(d);
    EXPECT_EQ(j["macros_used"].get<int64_t>(), d.figures.macros_used);
  }
  // A design with fewer macros never holds more context.
  for (const auto& a : points)
    for (const auto& b : points)
      if (a.rows == b.rows && a.cols == b.cols && a.cell_bits == b.cell_bits && a.adc_bits == b.adc_bits &&
          a.tokens_per_page == b.tokens_per_page && a.overflow == b.overflow && a.macros < b.macros) {
        ASSERT_LE(a.figures.max_context_tokens, b.figures.max_context_tokens);
      }
}

TEST(Explore, DigitalMacrosIgnoreAdcBits) {
  const HardwareSpec base = load_hardware_spec(default_hardware_spec_path());
  DesignRanges r;
  r.adc_bits = {4, 6, 8};
  r.macros = {1024};
  EnumerationStats st;
  const auto points = enumerate_designs(shape_preset("stories260k"), base, Policy{}, r, &st);
  EXPECT_EQ(st.combinations, 1);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].adc_bits, 0);
}

TEST(Explore, IsoAreaGivesEachPointAConventionalChipOfItsOwnArea) {
  const HardwareSpec base = load_hardware_spec(std::string(KVCIM_SOURCE_DIR) + "/configs/hw/sram_digital.yaml");
  const ModelShape shape = shape_preset("stories260k");
  DesignRanges r;
  // 120 macros hold 64 tokens beside the weights (116 macros); 1024 hold all 512, and the chip
  // built for them has the 136 macros the KV of 512 tokens needs (KV sized to the work)
  r.macros = {120, 1024};
  r.context = 512;
  const auto fixed = enumerate_designs(shape, base, Policy{}, r);
  r.iso_area = true;
  const auto iso = enumerate_designs(shape, base, Policy{}, r);
  ASSERT_EQ(fixed.size(), 2u);
  ASSERT_EQ(iso.size(), 2u);
  for (size_t i = 0; i < iso.size(); ++i) {
    // the same CIM design, the same CIM figures
    EXPECT_DOUBLE_EQ(iso[i].figures.energy_pj_cim, fixed[i].figures.energy_pj_cim);
    EXPECT_DOUBLE_EQ(iso[i].area_mm2_cim, fixed[i].area_mm2_cim);
    // iso-area: the conventional chip is as large as the CIM chip (to a byte of SRAM)
    EXPECT_NEAR(iso[i].area_mm2_conventional, iso[i].area_mm2_cim, 1e-6 * iso[i].area_mm2_cim);
    // the fixed baseline keeps the spec's 8 MiB whatever the CIM chip's size
    EXPECT_DOUBLE_EQ(fixed[i].area_mm2_conventional, fixed[0].area_mm2_conventional);
    const HardwareSpec built = base_with(base, iso[i].figures.macros_total);
    EXPECT_DOUBLE_EQ(iso[i].figures.energy_pj_conventional,
                     baseline_figures(shape, iso_area_baseline(built, iso[i].figures.kv_tiles),
                                      iso[i].context_evaluated).energy_pj);
    // its area holds the logic of every KV tile of the point
    EXPECT_GT(iso[i].figures.kv_tiles, 0);
    EXPECT_DOUBLE_EQ(iso[i].area_mm2_cim,
                     cim_area(built, iso[i].figures.kv_tiles).total_mm2());
  }
  EXPECT_EQ(iso[0].figures.macros_total, 120);
  EXPECT_EQ(iso[1].figures.macros_total, 136);
  // a larger CIM chip gets a larger conventional chip
  EXPECT_GT(iso[1].area_mm2_conventional, iso[0].area_mm2_conventional);
}
