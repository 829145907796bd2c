// validate() rejects every bad field with a message naming the field; the Macro's operations
// reject bad indices, sizes, weights and inputs the same way, and leave the macro unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "macro_test_util.hpp"

using namespace macro_test;

namespace {

void expect_rejected(const std::function<void(MacroSpec&)>& edit, const std::string& field) {
  MacroSpec s;
  edit(s);
  const std::string msg = error_of([&] { s.validate("spec.yaml"); });
  EXPECT_NE(msg.find("spec.yaml"), std::string::npos) << field << ": " << msg;
  EXPECT_NE(msg.find(field), std::string::npos) << field << ": " << msg;
  EXPECT_NE(error_of([&] { Macro m(s); }), "") << field;
}

}  // namespace

// Up to 16 weight bits are valid for the analytic event model (published INT12 macros), but the
// bit-accurate Macro holds int8 mirrors and refuses more than 8.
TEST(MacroValidate, WideWeightsAreAnalyticOnly) {
  MacroSpec s;
  s.cols = 256;
  s.weight_bits = 12;
  EXPECT_NO_THROW(s.validate("x"));
  EXPECT_EQ(compute_events(s, 4, 2).shift_add_ops, 2 * (12 * 8 - 1));
  const std::string msg = error_of([&] { Macro m(s); });
  EXPECT_NE(msg.find("weight_bits"), std::string::npos) << msg;
}

TEST(MacroValidate, DefaultSpecIsValid) {
  MacroSpec s;
  EXPECT_NO_THROW(s.validate("x"));
  s.kind = MacroKind::analog;
  EXPECT_NO_THROW(s.validate("x"));
}

TEST(MacroValidate, EachBadFieldIsNamed) {
  expect_rejected([](MacroSpec& s) { s.rows = 0; }, "rows");
  expect_rejected([](MacroSpec& s) { s.cols = -3; }, "cols");
  expect_rejected([](MacroSpec& s) { s.cols = 7; }, "cols");  // fewer than one weight's 8 slices
  expect_rejected([](MacroSpec& s) { s.cell_bits = 0; }, "cell_bits");
  expect_rejected([](MacroSpec& s) { s.cell_bits = 5; }, "cell_bits");
  expect_rejected([](MacroSpec& s) { s.weight_bits = 1; }, "weight_bits");
  expect_rejected([](MacroSpec& s) { s.weight_bits = 17; }, "weight_bits");
  expect_rejected([](MacroSpec& s) { s.input_bits = 1; }, "input_bits");  // signed needs 2
  expect_rejected([](MacroSpec& s) { s.input_bits = 17; }, "input_bits");
  expect_rejected([](MacroSpec& s) { s.input_bits_per_cycle = 0; }, "input_bits_per_cycle");
  expect_rejected([](MacroSpec& s) { s.input_bits = 4; s.input_bits_per_cycle = 5; },
                  "input_bits_per_cycle");
  expect_rejected([](MacroSpec& s) { s.rows_per_cycle = 0; }, "rows_per_cycle");
  expect_rejected([](MacroSpec& s) { s.rows_per_cycle = 65; }, "rows_per_cycle");
  expect_rejected([](MacroSpec& s) { s.adc_bits = 0; }, "adc_bits");
  expect_rejected([](MacroSpec& s) { s.adc_share = 0; }, "adc_share");
  expect_rejected([](MacroSpec& s) { s.adc_share = 65; }, "adc_share");
  expect_rejected([](MacroSpec& s) { s.adc_clip = 0.0; }, "adc_clip");
  expect_rejected([](MacroSpec& s) { s.adc_clip = 1.5; }, "adc_clip");
  expect_rejected([](MacroSpec& s) { s.adc_clip = std::nan(""); }, "adc_clip");
  expect_rejected([](MacroSpec& s) { s.kind = MacroKind::analog; s.cell_noise_sigma = -1; },
                  "cell_noise_sigma");
  expect_rejected([](MacroSpec& s) { s.kind = MacroKind::analog; s.read_noise_sigma = INFINITY; },
                  "read_noise_sigma");
  expect_rejected([](MacroSpec& s) { s.cell_noise_sigma = 0.1; }, "cell_noise_sigma");  // digital
  expect_rejected([](MacroSpec& s) { s.kind = static_cast<MacroKind>(7); }, "kind");
  expect_rejected([](MacroSpec& s) { s.encoding = static_cast<WeightEncoding>(7); }, "encoding");
  expect_rejected([](MacroSpec& s) { s.adc_range = static_cast<AdcRange>(7); }, "adc_range");
  MacroSpec u;
  u.input_signed = false;
  u.input_bits = 1;
  EXPECT_NO_THROW(u.validate("x"));  // unsigned 1-bit inputs are fine
}

TEST(MacroValidate, OperationsRejectBadArgumentsAndKeepState) {
  MacroSpec s;
  s.rows = 8;
  s.rows_per_cycle = 8;
  s.cols = 16;  // 2 weights per row
  s.weight_bits = 4;
  s.cols = 8;   // 4 slices per weight: 2 weights per row
  Macro m(s);
  m.write(1, 1, -8);
  EXPECT_NE(error_of([&] { m.write(8, 0, 1); }).find("row"), std::string::npos);
  EXPECT_NE(error_of([&] { m.write(0, 2, 1); }).find("out"), std::string::npos);
  EXPECT_NE(error_of([&] { m.write(0, 0, 8); }).find("w"), std::string::npos);
  EXPECT_NE(error_of([&] { m.write(0, 0, -9); }).find("-9"), std::string::npos);
  const int8_t bad[4] = {1, 2, 99, 3};
  EXPECT_NE(error_of([&] { m.write_column_group(1, bad, 4); }).find("w[2]"), std::string::npos);
  EXPECT_EQ(m.read(1, 1), -8) << "a rejected write must not change any cell";
  EXPECT_EQ(m.read(0, 1), 0);
  EXPECT_NE(error_of([&] { m.write_block(bad, 9, 1); }).find("n_rows"), std::string::npos);
  EXPECT_NE(error_of([&] { m.write_row(0, bad, 3); }).find("n_out"), std::string::npos);
  int32_t x[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t y[2];
  EXPECT_NE(error_of([&] { m.compute(x, 9, y, 2); }).find("n_rows"), std::string::npos);
  EXPECT_NE(error_of([&] { m.compute(x, 8, y, 3); }).find("n_out"), std::string::npos);
  x[5] = 128;
  EXPECT_NE(error_of([&] { m.compute(x, 8, y, 2); }).find("x[5]"), std::string::npos);
  EXPECT_NE(error_of([&] { m.compute_reference(x, 8, y, 2); }).find("x[5]"), std::string::npos);
  EXPECT_NE(error_of([&] { m.compute(nullptr, 8, y, 2); }).find("x"), std::string::npos);
  EXPECT_NE(error_of([&] { compute_events(s, 9, 1); }).find("n_rows"), std::string::npos);
  EXPECT_NE(error_of([&] { write_events(s, 1, -1); }).find("n_out"), std::string::npos);
  s.encoding = WeightEncoding::differential;  // magnitude of W-1 bits: -8 is out of range
  Macro d(s);
  EXPECT_NE(error_of([&] { d.write(0, 0, -8); }).find("-8"), std::string::npos);
  EXPECT_NO_THROW(d.write(0, 0, -7));
}
