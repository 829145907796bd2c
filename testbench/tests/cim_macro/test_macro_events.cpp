// Event counts on small cases, worked out by hand in the comments, for the formulas
// (compute_events / write_events), the reference simulation and the fast path alike.
#include <gtest/gtest.h>

#include "macro_test_util.hpp"

using namespace macro_test;

namespace {

// rows 4, rows_per_cycle 2, 2-bit weights on 1-bit cells (two's complement: a magnitude slice and
// the sign slice, S = 2), signed 2-bit inputs bit-serial (a magnitude cycle and the sign cycle,
// T = 2). A compute on 3 rows and 2 outputs: row groups {0,1} and {2} (G = 2), C = 4 columns.
MacroSpec small_spec(MacroKind kind) {
  MacroSpec base;
  base.kind = kind;
  base.cell_bits = 1;
  base.input_bits_per_cycle = 1;
  base.adc_share = 3;
  return with_geometry(base, {.rows = 4, .rows_per_cycle = 2, .cols = 8, .weight_bits = 2,
                              .input_bits = 2, .adc_bits = 4});
}

MacroEvents measure(const MacroSpec& s, bool reference) {
  Macro m(s);
  const int8_t w[6] = {1, -1, -2, 0, 1, 1};
  m.write_block(w, 3, 2);
  m.reset_events();
  const int32_t x[3] = {1, -2, -1};
  int64_t y[2];
  if (reference)
    m.compute_reference(x, 3, y, 2);
  else
    m.compute(x, 3, y, 2);
  // exact: y0 = 1*1 + -2*-2 + -1*1 = 4; y1 = 1*-1 + 0 + -1*1 = -2 (every path here is lossless)
  EXPECT_EQ(y[0], 4);
  EXPECT_EQ(y[1], -2);
  return m.events();
}

// The formulas and the reference simulation (and the fast path too when `fast` is set) all give e.
void expect_counted_events(const MacroSpec& s, const MacroEvents& e, bool fast) {
  EXPECT_EQ(compute_events(s, 3, 2), e);
  EXPECT_EQ(measure(s, true), e);
  if (fast) {
    EXPECT_EQ(measure(s, false), e);
  }
}

}  // namespace

TEST(MacroEvents, DigitalSmallCaseByHand) {
  MacroEvents e;
  e.row_activations = 3 * 2;   // 3 rows driven in each of 2 input cycles
  e.column_reads = 4 * 2 * 2;  // 4 columns x 2 cycles x 2 row groups
  e.adc_conversions = 0;
  // adder tree: group {0,1} needs 1 add, group {2} none: 4 columns x 2 cycles x 1 = 8;
  // accumulating group 2 onto group 1: 4 x 2 x 1 = 8
  e.adder_ops = 16;
  e.shift_add_ops = 2 * (2 * 2 - 1);  // per output, S*T = 4 partial sums combined by 3 steps
  e.cycles = 2 * 2;                    // one adder-tree pass per (cycle, group)
  const MacroSpec s = small_spec(MacroKind::digital);
  expect_counted_events(s, e, true);
}

TEST(MacroEvents, AnalogSmallCaseByHand) {
  MacroEvents e;
  e.row_activations = 6;
  e.column_reads = 16;
  e.adc_conversions = 16;  // one per column read
  e.adder_ops = 8;         // only the group accumulation; no adder tree
  e.shift_add_ops = 6;
  // adc_share 3: ADC 0 serves columns 0..2 (3 conversions), ADC 1 column 3: 3 cycles per step
  e.cycles = 2 * 2 * 3;
  MacroSpec s = small_spec(MacroKind::analog);
  expect_counted_events(s, e, true);
  // adc_share 8 (one ADC for the whole macro) but only 4 columns used: 4 conversions per step.
  s.adc_share = 8;
  e.cycles = 2 * 2 * 4;
  expect_counted_events(s, e, false);
  // adc_share 1: every column has its own ADC, one conversion time per step.
  s.adc_share = 1;
  e.cycles = 2 * 2;
  expect_counted_events(s, e, false);
}

TEST(MacroEvents, OffsetEncodingAddsTheInputSum) {
  // offset, 2-bit weights on 1-bit cells: S = ceil(2/1) = 2 as before. The input sum over 3 rows
  // takes 2 adds; each output subtracts 2^(W-1) * sum(x): one shift-add more per output.
  MacroSpec s = small_spec(MacroKind::digital);
  s.encoding = WeightEncoding::offset;
  MacroEvents e;
  e.row_activations = 6;
  e.column_reads = 16;
  e.adder_ops = 16 + 2;
  e.shift_add_ops = 6 + 2;
  e.cycles = 4;
  expect_counted_events(s, e, true);
}

TEST(MacroEvents, GeometryFormulasByHand) {
  MacroSpec s;
  s.weight_bits = 8;
  s.cell_bits = 2;
  s.input_bits = 8;
  s.input_bits_per_cycle = 2;
  s.encoding = WeightEncoding::twos_complement;
  EXPECT_EQ(s.slices_per_weight(), 1 + 4);  // sign + 7 bits in 2-bit cells (4 slices)
  EXPECT_EQ(s.input_cycles(), 1 + 4);       // sign cycle + 7 bits 2 at a time
  s.encoding = WeightEncoding::offset;
  EXPECT_EQ(s.slices_per_weight(), 4);      // 8 bits in 2-bit cells
  s.encoding = WeightEncoding::differential;
  EXPECT_EQ(s.slices_per_weight(), 2 * 4);  // 7-bit magnitude, twice
  s.input_signed = false;
  s.input_bits = 12;
  s.input_bits_per_cycle = 5;
  EXPECT_EQ(s.input_cycles(), 3);           // ceil(12/5)
  s.cols = 64;
  EXPECT_EQ(s.weights_per_row(), 8);        // 64 / 8
  s.rows_per_cycle = 16;
  EXPECT_EQ(s.row_groups(33), 3);
  s.cell_bits = 1;
  s.encoding = WeightEncoding::twos_complement;
  s.input_signed = true;
  s.input_bits = 8;
  s.input_bits_per_cycle = 1;
  EXPECT_EQ(s.slices_per_weight(), 8);      // 1-bit cells, bit-serial: the familiar W and B
  EXPECT_EQ(s.input_cycles(), 8);
}

TEST(MacroEvents, WritesCountBitsAndRows) {
  MacroSpec s = small_spec(MacroKind::digital);  // S = 2 slices of 1 bit
  Macro m(s);
  const int8_t w[6] = {1, -1, -2, 0, 1, 1};
  m.write_block(w, 3, 2);
  MacroEvents e;
  e.cell_writes = 3 * 2 * 2 * 1;  // rows x outputs x slices x cell_bits
  e.cycles = 3;                   // one wordline per cycle
  EXPECT_EQ(m.events(), e);
  EXPECT_EQ(write_events(s, 3, 2), e);
  m.reset_events();
  m.write_row(1, w, 2);  // 4 bits in one cycle
  m.write_column_group(1, w, 3);  // 6 bits over 3 cycles
  m.write(0, 0, 1);  // 2 bits, 1 cycle
  EXPECT_EQ(m.events().cell_writes, 4 + 6 + 2);
  EXPECT_EQ(m.events().cycles, 1 + 3 + 1);
  EXPECT_EQ(m.events().column_reads, 0);

  s.cell_bits = 4;
  s.weight_bits = 8;
  s.cols = 16;
  s.encoding = WeightEncoding::offset;  // 2 slices of 4 bits
  EXPECT_EQ(write_events(s, 4, 2).cell_writes, 4 * 2 * 2 * 4);
}

TEST(MacroEvents, EventsAccumulateAndEmptyComputesCountNothing) {
  const MacroSpec s = small_spec(MacroKind::analog);
  Macro m(s);
  const int32_t x[3] = {1, 1, 1};
  int64_t y[2] = {7, 7};
  m.compute(x, 3, y, 2);
  m.compute(x, 3, y, 2);
  MacroEvents twice = compute_events(s, 3, 2);
  twice += compute_events(s, 3, 2);
  EXPECT_EQ(m.events(), twice);
  m.reset_events();
  m.compute(x, 0, y, 2);
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(m.events(), MacroEvents{});
  EXPECT_EQ(compute_events(s, 3, 0), MacroEvents{});
}
