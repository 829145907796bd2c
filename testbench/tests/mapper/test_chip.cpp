// What a whole chip pays beyond its operations (mapper/chip.hpp): area, floorplan distances,
// wire traffic, leakage and control, each against a hand computation on a small placement.
#include <gtest/gtest.h>

#include <cmath>

#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/chip.hpp"

using namespace kvcim::mapper;
using namespace kvcim::cmodel::energy;

namespace {

HardwareSpec small_hw() {
  HardwareSpec hw = load_hardware_spec(default_hardware_spec_path());
  hw.macro.rows = 16;
  hw.macro.cols = 16;
  hw.macro.rows_per_cycle = 16;
  hw.organization.macros = 128;
  hw.buffer.bytes = 1024;
  hw.digital.units = 4;
  hw.baseline.sram_bytes = 4096;
  hw.baseline.mac_units = 8;
  hw.kv.tokens_per_tile = 8;
  hw.idle_leaks = true;  // the hand counts below charge every built cell (the gated rule: below)
  hw.validate();
  return hw;
}

// dim 16, hidden 32, one layer, 2 heads sharing one KV head, vocab 16
ModelShape small_shape() { return parse_shape("dim=16,hidden=32,layers=1,heads=2,kv_heads=1,vocab=16,context=32"); }

// a quarter of the macros for the KV cache: 32 macros of 256 cells hold 8 tiles of 1024 cells;
// the weights' 80 blocks fit the other 96
Policy half_kv() {
  Policy p;
  p.kv_fraction = 0.25;
  return p;
}

}  // namespace

TEST(Chip, AreaIsCellsTimesTheBitCellCarriedToTheComparisonNode) {
  const HardwareSpec hw = small_hw();
  // the CIM table's bit cell is [C6]'s 0.176 um^2 at 5 nm and the comparison is at 5 nm
  ASSERT_DOUBLE_EQ(hw.comparison.node_nm, 5);
  const double cell = hw.tech.areas(hw.comparison).bit_cell_um2;
  EXPECT_DOUBLE_EQ(cell, 0.176);
  const ChipArea a = cim_area(hw);
  EXPECT_DOUBLE_EQ(a.macros_mm2, 128.0 * 16 * 16 * 0.176 * 1e-6);
  EXPECT_DOUBLE_EQ(a.adcs_mm2, 0.0);  // digital macros
  // the buffer and the lanes are the 45 nm table's, carried to 5 nm: the lanes as logic, the
  // buffer's and the SRAM's cells as SRAM macros (1.931 Mb/mm^2 at 45 nm, 31.8 at 5 nm)
  const double f = area_factor(45, 5), fs = 1.931 / 31.8;
  EXPECT_NEAR(a.buffer_mm2, 1024.0 * 8 * 0.5 * fs * 1e-6, 1e-15);
  EXPECT_NEAR(a.lanes_mm2, 4 * 400 * f * 1e-6, 1e-15);
  const ChipArea b = baseline_area(hw);
  EXPECT_NEAR(b.sram_mm2, 4096.0 * 8 * 0.5 * fs * 1e-6, 1e-15);
  EXPECT_NEAR(b.lanes_mm2, 8 * 400 * f * 1e-6, 1e-15);
  EXPECT_DOUBLE_EQ(a.total_mm2(), a.macros_mm2 + a.adcs_mm2 + a.buffer_mm2 + a.sram_mm2 + a.lanes_mm2 +
                                     a.tile_logic_mm2);
  // compared at 45 nm the same chip is larger
  HardwareSpec at45 = hw;
  at45.compare_at(45, "test");
  EXPECT_GT(cim_area(at45).total_mm2(), a.total_mm2() * 10);
}

TEST(Chip, EveryKvTileAddsItsSynthesisedLogicAtTheNand2Area) {
  const HardwareSpec hw = small_hw();  // 8-token tiles, 12-bit probabilities
  const double nand2 = kTileLogicFixedNand2 + kTileLogicPerTokenBitNand2 * 8 * 12;
  EXPECT_DOUBLE_EQ(tile_logic_nand2(hw.kv), nand2);
  // the KV table's NAND2 (NanGate45's NAND2_X1, 0.798 um^2 at 45 nm) carried to 5 nm
  const double gate = 0.798 * area_factor(45, 5);
  EXPECT_NEAR(hw.kv_tech.areas(hw.comparison).nand2_um2, gate, 1e-15);
  EXPECT_DOUBLE_EQ(cim_area(hw).tile_logic_mm2, 0.0);  // the hardware alone: no placement
  const Placement pl = place(small_shape(), hw, half_kv(), 4);
  ASSERT_EQ(pl.kv.tiles, 8);  // 32 KV macros of 256 cells, 1024 cells per tile
  const ChipArea with = cim_area(hw, pl.kv.tiles), without = cim_area(hw);
  EXPECT_NEAR(with.tile_logic_mm2, 8 * nand2 * gate * 1e-6, 1e-15);
  EXPECT_DOUBLE_EQ(with.total_mm2(), without.total_mm2() + with.tile_logic_mm2);
  // the report's conditions hold it, and the iso-area conventional chip grows by its SRAM
  const EnergyConditions c = energy_conditions(hw, pl.kv.tiles);
  EXPECT_EQ(c.kv_tiles, 8);
  EXPECT_DOUBLE_EQ(c.area_tile_logic_mm2, with.tile_logic_mm2);
  EXPECT_DOUBLE_EQ(c.area_cim_mm2, with.total_mm2());
  const double bit_mm2 = hw.baseline_tech.areas(hw.comparison).bit_cell_um2 * 1e-6;
  const int64_t more = iso_area_baseline(hw, pl.kv.tiles).baseline.sram_bytes -
                       iso_area_baseline(hw).baseline.sram_bytes;
  EXPECT_NEAR(static_cast<double>(more), with.tile_logic_mm2 / (8 * bit_mm2), 1.0);
  const EnergyConditions back = energy_conditions_from_json(to_json(c));
  EXPECT_EQ(back.kv_tiles, c.kv_tiles);
  EXPECT_DOUBLE_EQ(back.tile_logic_nand2, c.tile_logic_nand2);
  EXPECT_DOUBLE_EQ(back.area_tile_logic_mm2, c.area_tile_logic_mm2);
}

TEST(Chip, WireBitsOfASmallPlacementEqualAHandCount) {
  const HardwareSpec hw = small_hw();
  const ModelShape shape = small_shape();
  const Placement pl = place(shape, hw, half_kv(), 4);
  // 80 weight macros, and the KV cache at context 4: one stream (one layer, one KV head shared
  // by both query heads) of one 8-token page of 2 x 8 x 8 x 8 cells = 1024 cells = 4 macros each
  ASSERT_EQ(pl.weights.macros_used, 80);
  ASSERT_EQ(pl.kv.streams(), 1);
  ASSERT_EQ(pl.kv.page_cells(), 1024);
  // occupied: 80 + 4 macros; the centre is half of sqrt(84) macros' side away; pitch =
  // sqrt(256 cells x 0.176 um^2)
  const Floorplan f = floorplan(hw, 84, 0);
  const double pitch = std::sqrt(256 * 0.176);
  EXPECT_DOUBLE_EQ(f.macro_pitch_um, pitch);
  EXPECT_DOUBLE_EQ(f.edge_um, pitch * std::sqrt(84.0) / 2);
  // w2: 32 inputs x 16 outputs; a 16-row macro holds 16 rows and 16 cols / 8 slices = 2 outputs
  const MatrixPlacement& w2 = pl.weights.matrices.at(pl.weights.find(Op::ffn_w2, 0));
  ASSERT_EQ(w2.row_tiles, 2);
  ASSERT_EQ(w2.col_tiles, 8);
  ASSERT_EQ(w2.onchip_blocks, w2.blocks());
  const double in = 32.0 * 8 * (f.edge_um + 7 * pitch);      // inputs along 8 column tiles
  const double psum = 16.0 * 2 * 32 * (f.edge_um + pitch / 2);  // 2 row tiles of partial sums
  EXPECT_EQ(matvec_wire_bit_um(w2, hw, f), std::llround(in + psum));
  // and the ledger carries it under the matrix's op
  const TokenLedgers t = token_ledgers(pl);
  EXPECT_EQ(t.periphery.count(0, Op::ffn_w2, EventKind::wire_bit_um), std::llround(in + psum));
  // attention at context 4: one page per stream; K and V in, 2 query heads' q in and output out
  const double kv_bits = 2.0 * 8 * 8, q_bits = 2.0 * 8 * 8, out_bits = 2.0 * 8 * 32;
  EXPECT_EQ(t.periphery.count(0, Op::kv_write, EventKind::wire_bit_um), std::llround(kv_bits * f.edge_um));
  EXPECT_EQ(t.periphery.count(0, Op::attn_scores, EventKind::wire_bit_um), std::llround(q_bits * f.edge_um));
  EXPECT_EQ(t.periphery.count(0, Op::attn_weighted_sum, EventKind::wire_bit_um),
            std::llround(out_bits * f.edge_um));
}

TEST(Chip, LeakageIsCellsTimesLatencyAndControlIsOneCyclePerOperation) {
  const HardwareSpec hw = small_hw();
  const ModelShape shape = small_shape();
  const Placement pl = place(shape, hw, half_kv(), 4);
  const TokenLedgers t = token_ledgers(pl);
  const double latency = cim_latency(shape, hw, pl.policy, pl.weights, pl.kv, 4).total_ns();
  ASSERT_GT(latency, 0);
  // 128 macros of 256 one-bit cells = 4 KiB, and the 1 KiB buffer
  EXPECT_DOUBLE_EQ(cim_kib(hw), 5.0);
  EXPECT_EQ(t.periphery.count(kModelLevel, Op::chip, EventKind::leak_kib_ns), std::llround(5.0 * latency));
  EXPECT_EQ(t.periphery.count(kModelLevel, Op::chip, EventKind::leak_lane_ns), std::llround(4 * latency));
  int64_t ops = 0;
  for (const Ledger* l : {&t.cim, &t.periphery})
    for (EventKind k : {EventKind::int8_mac, EventKind::fp16_mac, EventKind::int32_add,
                        EventKind::int32_mul, EventKind::fp32_add, EventKind::fp32_mul})
      ops += l->count(k);
  ops += 4 * (t.cim.count(EventKind::exp_op) + t.periphery.count(EventKind::exp_op));
  EXPECT_GT(ops, 0);
  EXPECT_EQ(t.periphery.count(kModelLevel, Op::chip, EventKind::lane_cycle), ops);
  // the energy of leakage is the hand product: KiB x ns x the table's cost at the node
  const Costs c = hw.costs();
  const Breakdown b = t.periphery.cost(c);
  EXPECT_EQ(b.component_energy_aj[static_cast<int>(Component::leakage)],
            std::llround(5.0 * latency) * c.energy(EventKind::leak_kib_ns) +
                std::llround(4 * latency) * c.energy(EventKind::leak_lane_ns));
}

TEST(Chip, TheConventionalTokenAddsItsWiresLeakageAndControl) {
  const HardwareSpec hw = small_hw();
  const ModelShape shape = small_shape();
  const Ledger plain = baseline_ledger(shape.config, 3, hw.baseline);
  const Ledger full = conventional_ledger(shape, hw, 3);
  // the model's int8 weights (q, o 16x16; k, v 16x8; w1, w2, w3 16x32; classifier 16x16: 2560
  // bytes) and 4 tokens' K and V (2 x 4 x 8 bytes) occupy 2624 bytes of the 4096-byte SRAM
  const Floorplan f = floorplan(hw, 0, 2624);
  EXPECT_DOUBLE_EQ(f.sram_edge_um, std::sqrt(2624.0 * 8 * hw.baseline_tech.areas(hw.comparison).bit_cell_um2) / 2);
  // every SRAM bit travels half the SRAM side, under the op that read it
  for (Op op : {Op::q_proj, Op::ffn_w2, Op::attn_scores})
    EXPECT_EQ(full.count(0, op, EventKind::wire_bit_um),
              std::llround(static_cast<double>(plain.count(0, op, EventKind::sram_bit)) * f.sram_edge_um));
  const double latency = baseline_latency(plain, hw.baseline_costs(), hw.baseline).bound_ns();
  EXPECT_EQ(full.count(kModelLevel, Op::chip, EventKind::leak_kib_ns), std::llround(5.0 * latency));
  EXPECT_EQ(full.count(kModelLevel, Op::chip, EventKind::leak_lane_ns), std::llround(8 * latency));
  // nothing else changed
  EXPECT_EQ(full.count(EventKind::sram_bit), plain.count(EventKind::sram_bit));
  EXPECT_EQ(full.count(EventKind::int8_mac), plain.count(EventKind::int8_mac));
}

TEST(Chip, OneComparisonNodeForBothSides) {
  HardwareSpec hw = load_hardware_spec(default_hardware_spec_path());
  // default: the macro table's node and supply
  EXPECT_EQ(hw.comparison, (NodePoint{5, 0.7}));
  // a node a table was measured at takes that table's supply; another node its nominal one
  hw.compare_at(45, "test");
  EXPECT_EQ(hw.comparison, (NodePoint{45, 0.9}));
  hw.compare_at(28, "test");
  EXPECT_DOUBLE_EQ(hw.comparison.voltage_v, nominal_voltage(28));
  try {
    hw.compare_at(1, "--node");
    FAIL() << "accepted 1 nm";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("--node"), std::string::npos) << e.what();
  }
  // the spec may name it; both sides' costs are then made there
  const HardwareSpec at45 = hardware_spec_from_text(
      "name: t\ntechnology: ../tech/sram_digital_cim.yaml\n"
      "macro: {kind: digital, rows: 256, cols: 256}\norganization: {macros: 64}\n"
      "precision: {weight_bits: 8, activation_bits: 8, kv_bits: 8}\n"
      "baseline: {mac: int8, sram: 1 MiB, technology: ../tech/digital_45nm.yaml}\n"
      "comparison: {node_nm: 45}\n");
  EXPECT_EQ(at45.comparison, (NodePoint{45, 0.9}));
  EXPECT_EQ(at45.costs().target, at45.comparison);
  EXPECT_EQ(at45.baseline_costs().target, at45.comparison);
  EXPECT_EQ(at45.kv_costs().target, at45.comparison);
  // at 45 nm the baseline's own values are unscaled and the 5 nm macro's are carried up
  EXPECT_EQ(at45.baseline_costs().energy(EventKind::int8_mac), 230'000);
  EXPECT_NEAR(at45.costs().energy(EventKind::adder_op), 492 / energy_factor(NodePoint{45, 0.9}, NodePoint{5, 0.7}), 1.0);
}

TEST(Chip, OneTokenOfAOneLayerModelAtOneNodeEqualsTheHandProduct) {
  // dim 4, 2 heads sharing one KV head, hidden 6, vocab 5, int8, all from HBM (no SRAM): at
  // position 2 the baseline does 164 MACs (test_baseline's hand count); priced at 5 nm every
  // logic value is the 45 nm one times the one factor, HBM is not scaled
  HardwareSpec hw = load_hardware_spec(default_hardware_spec_path());
  hw.baseline.sram_bytes = 0;
  const ModelShape shape = parse_shape("dim=4,hidden=6,layers=1,heads=2,kv_heads=1,vocab=5,context=8");
  const Ledger l = conventional_ledger(shape, hw, 2);
  const double f = energy_factor(NodePoint{45, 0.9}, NodePoint{5, 0.7});
  const Costs c = hw.baseline_costs();
  EXPECT_EQ(l.count(EventKind::int8_mac), 164);
  EXPECT_EQ(c.energy(EventKind::int8_mac), std::llround(0.23 * f * 1e6));
  EXPECT_EQ(c.energy(EventKind::hbm_bit), 3'590'000);
  EXPECT_EQ(c.energy(EventKind::fp32_mul), std::llround(3.7 * f * 1e6));
  EXPECT_EQ(c.energy(EventKind::exp_op), std::llround(18.4 * f * 1e6));
  EXPECT_EQ(c.energy(EventKind::wire_bit_um), std::llround(0.00012 * (0.49 / 0.81) * 1e6));
  const Breakdown b = l.cost(c);
  EXPECT_EQ(b.component_energy_aj[static_cast<int>(Component::offchip)], int64_t{1280} * 3'590'000);
  EXPECT_EQ(b.kind_energy_aj[static_cast<int>(EventKind::int8_mac)], 164 * std::llround(0.23 * f * 1e6));
  int64_t hand = 0;
  for (EventKind k : all_event_kinds()) hand += l.count(k) * c.energy(k);
  EXPECT_EQ(b.energy_aj, hand);
  // no SRAM: no SRAM bits, no wires from it, and 1280 HBM bits as at 45 nm
  EXPECT_EQ(l.count(EventKind::sram_bit), 0);
  EXPECT_EQ(l.count(EventKind::wire_bit_um), 0);
  EXPECT_EQ(l.count(EventKind::hbm_bit), 1280);
}

// One rule for idle silicon on both sides: switching it from gated to leaking adds, on the
// conventional side, the SRAM beyond the weights and KV it holds, and on the CIM side the built
// macros holding no data, each leaking over its own token time (counted by hand here).
TEST(Chip, IdleLeakageChangesBothSidesByTheHandComputedAmounts) {
  const HardwareSpec spec = load_hardware_spec(default_hardware_spec_path());
  const ModelShape shape = shape_preset("stories260k");
  const Placement gated = place(shape, spec, Policy{}, 100);
  HardwareSpec leaking_spec = spec;
  leaking_spec.idle_leaks = true;
  const Placement leaking = place(shape, leaking_spec, Policy{}, 100);
  // the embedded model: 259,328 int8 weights; 100 tokens x K and V x 32 wide x 5 layers
  const double data = 259328 + 2.0 * 100 * 32 * 5;
  const double idle_sram_kib = (8.0 * 1024 * 1024 - data) / 1024;  // of the spec's 8 MiB
  const Costs bc = spec.baseline_costs();
  const Ledger cg = conventional_ledger(shape, gated.hw, 99), cl = conventional_ledger(shape, leaking.hw, 99);
  const double conv_ns = baseline_latency(cg, bc, spec.baseline).bound_ns();
  EXPECT_NEAR(static_cast<double>(cl.count(EventKind::leak_kib_ns) - cg.count(EventKind::leak_kib_ns)),
              idle_sram_kib * conv_ns, 1.0);
  EXPECT_NEAR(cl.cost(bc).energy_pj() - cg.cost(bc).energy_pj(),
              idle_sram_kib * conv_ns * static_cast<double>(bc.energy(EventKind::leak_kib_ns)) * 1e-6,
              1e-6 * cl.cost(bc).energy_pj());
  // CIM: 116 weight macros + 5 KV macros in a chip of 128 (whole tiles of 8): 7 idle macros of
  // 256 x 256 one-bit cells = 8 KiB each
  EXPECT_EQ(gated.hw.idle_macros, 7);
  const TokenLedgers tg = token_ledgers(gated), tl = token_ledgers(leaking);
  const double cim_ns = figures(gated).latency_ns_cim;
  const Costs cc = spec.costs(), kc = spec.kv_costs();
  EXPECT_NEAR(static_cast<double>(tl.periphery.count(EventKind::leak_kib_ns) - tg.periphery.count(EventKind::leak_kib_ns)),
              7 * 8.0 * cim_ns, 1.0);
  EXPECT_NEAR(tl.total().cost(cc, &kc).energy_pj() - tg.total().cost(cc, &kc).energy_pj(),
              7 * 8.0 * cim_ns * static_cast<double>(cc.energy(EventKind::leak_kib_ns)) * 1e-6,
              1e-6 * tl.total().cost(cc, &kc).energy_pj());
  // the rule is stated on the conditions line of both reports
  const std::vector<std::string> lines = conditions_lines(energy_conditions(gated.hw, gated.kv.tiles));
  EXPECT_NE(lines.back().find("gated"), std::string::npos);
  EXPECT_NE(conditions_lines(energy_conditions(leaking.hw, leaking.kv.tiles)).back().find("leaking"), std::string::npos);
}
