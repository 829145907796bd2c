// The spec's field tables (kvcim/spec_fields.hpp), field by field, generated from the tables:
// for every row of every section of a hardware spec (its top level among them) and of a macro
// file, a randomly drawn legal value (a path: a shipped file) survives YAML/dict -> struct -> JSON
// -> struct; a value out of range, of the wrong type, a missing file, or a field that does not
// apply to the section's kind is refused with a message naming the section and key
// (spec_field_checks.hpp).
#include <gtest/gtest.h>

#include "../spec_field_checks.hpp"
#include "kvcim/cmodel/macro_model/macro_desc.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/spec_fields_json.hpp"

using namespace kvcim;
using namespace kvcim::mapper;
using nlohmann::json;
namespace mm = kvcim::cmodel::macro_model;

namespace kvcim::test {
// The two kinds of spec file: a document's tree, the document read back from one, the shipped ones.
template <>
FileKind<HardwareSpec> file_kind<HardwareSpec>() {
  return {&hardware_spec_to_json, [](const json& j) { return hardware_spec_from_json(j); }, &load_hardware_spec, "configs/hw/*.yaml"};
}
template <>
FileKind<mm::MacroFile> file_kind<mm::MacroFile>() {
  return {&mm::macro_file_to_json, [](const json& j) { return mm::macro_file_from_json(j); }, &mm::load_macro_file, "configs/macros/*.yaml"};
}
}  // namespace kvcim::test

namespace {

using kvcim::test::check_every_field;

TEST(SpecFields, EveryTopLevelFieldRoundTripsAndRefusesBadValues) { kvcim::test::check_every_top_field<HardwareSpec>(); }
TEST(SpecFields, EveryMacroFieldRoundTripsAndRefusesBadValues) { check_every_field("macro", &HardwareSpec::macro); }
TEST(SpecFields, EveryOrganizationFieldRoundTripsAndRefusesBadValues) {
  check_every_field("organization", &HardwareSpec::organization);
}
TEST(SpecFields, EveryKvFieldRoundTripsAndRefusesBadValues) { check_every_field("kv", &HardwareSpec::kv); }
TEST(SpecFields, EveryPrecisionFieldRoundTripsAndRefusesBadValues) {
  check_every_field("precision", &HardwareSpec::precision);
}
TEST(SpecFields, EveryBaselineFieldRoundTripsAndRefusesBadValues) {
  check_every_field("baseline", &HardwareSpec::baseline);
}
TEST(SpecFields, EveryComparisonFieldRoundTripsAndRefusesBadValues) {
  check_every_field("comparison", &HardwareSpec::comparison);
}
TEST(SpecFields, EveryBufferFieldRoundTripsAndRefusesBadValues) { check_every_field("buffer", &HardwareSpec::buffer); }
TEST(SpecFields, EveryOffchipFieldRoundTripsAndRefusesBadValues) { check_every_field("offchip", &HardwareSpec::offchip); }
TEST(SpecFields, EveryDigitalFieldRoundTripsAndRefusesBadValues) { check_every_field("digital", &HardwareSpec::digital); }
TEST(SpecFields, EveryDieFieldRoundTripsAndRefusesBadValues) { check_every_field("die", &HardwareSpec::die); }
TEST(SpecFields, EveryLinkFieldRoundTripsAndRefusesBadValues) { check_every_field("link", &HardwareSpec::link); }

TEST(SpecFields, EveryMacroFileMacroFieldRoundTripsAndRefusesBadValues) {
  check_every_field<mm::MacroFile>("macro", &mm::MacroFile::desc);
}
TEST(SpecFields, EveryMacroFilePublishedFieldRoundTripsAndRefusesBadValues) {
  check_every_field<mm::MacroFile>("published", &mm::MacroFile::published);
}

// The kv section's analog fields reach the tile by key: every shared row, set to a value of its
// own, arrives in HardwareSpec::tile.
TEST(SpecFields, TheTileGetsEveryAnalogFieldOfTheKvSection) {
  HardwareSpec hw = load_hardware_spec(std::string(KVCIM_SOURCE_DIR) + "/configs/hw/gain_cell_kv.yaml");
  ASSERT_EQ(hw.kv.kind, cmodel::cim::TileKind::analog);
  int shared = 0;
  for_each_spec_field<KvSpec>([&](const auto& row) {
    if (row.kinds == kAllKinds) return;
    auto& v = hw.kv.*row.member;
    using T = std::remove_cvref_t<decltype(v)>;
    if constexpr (std::is_same_v<T, bool>) v = !v;
    else if constexpr (std::is_enum_v<T>) v = static_cast<T>((static_cast<int>(v) + 1) % row.choices.size());
    else if constexpr (std::is_arithmetic_v<T>) v = static_cast<T>(row.lo + (row.hi - row.lo) / 3);
  });
  const cmodel::cim::TileParams p = hw.tile(8);
  for_each_spec_field<KvSpec>([&](const auto& row) {
    if (row.kinds == kAllKinds) return;
    for_each_spec_field<cmodel::cim::TileParams>([&](const auto& t) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(p.*t.member)>,
                                   std::remove_cvref_t<decltype(hw.kv.*row.member)>>)
        if (std::string_view(t.key) == row.key) {
          ++shared;
          EXPECT_TRUE(p.*t.member == hw.kv.*row.member) << row.key;
        }
    });
  });
  EXPECT_GE(shared, 15);
}

// check_fields holds a struct's values to the same ranges (after a program set them).
TEST(SpecFields, CheckFieldsNamesTheFieldAndItsRange) {
  KvSpec k;
  k.kind = cmodel::cim::TileKind::analog;
  k.adc_bits = 40;
  try {
    check_fields(k, "spec", "kv.");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "spec: kv.adc_bits = 40: expected an integer in [2, 30]");
  }
  k.kind = cmodel::cim::TileKind::digital;  // the analog rows do not apply
  EXPECT_NO_THROW(check_fields(k, "spec", "kv."));
}

}  // namespace
