// The macro model's constants (configs/macro_model.yaml: MacroConstants' and Constants' field
// tables) field by field, generated from the tables: a randomly drawn value of every constant
// inside its plausible range, given with its source, and of each held-out error survives
// dict -> struct -> JSON -> struct; a value out of range, of the wrong type or without its source
// is refused naming constants.<name> (or the top-level key). And the shipped file reads back from
// its tree to the same constants.
#include <gtest/gtest.h>

#include "../spec_field_checks.hpp"
#include "kvcim/cmodel/macro_model/macro_components.hpp"

namespace mm = kvcim::cmodel::macro_model;
using nlohmann::json;

namespace kvcim::test {
template <>
FileKind<mm::Constants> file_kind<mm::Constants>() {
  return {&mm::constants_to_json, [](const json& j) { return mm::constants_from_json(j); }, &mm::load_constants, "configs/macro_model.yaml"};
}
}  // namespace kvcim::test

namespace {

TEST(MacroModelFields, EveryConstantRoundTripsWithItsSourceAndRefusesBadValues) {
  kvcim::test::check_every_field<mm::Constants, mm::MacroConstants>(
      "constants", json::json_pointer("/constants"),
      [](const mm::Constants& k) -> const mm::MacroConstants& { return k; });
}

TEST(MacroModelFields, EveryHeldOutErrorRoundTripsAndRefusesBadValues) {
  kvcim::test::check_every_field<mm::Constants, mm::Constants>("", json::json_pointer(""),
                                                               [](const mm::Constants& k) -> const mm::Constants& { return k; });
}

// The shipped file as its tree and back: every constant and its source, the stated uncertainty.
TEST(MacroModelFields, TheShippedFileReadsBackFromItsTree) {
  const mm::Constants& k = mm::shipped_constants();
  const json tree = mm::constants_to_json(k);
  EXPECT_EQ(tree.at("constants").size(), 17u);
  EXPECT_EQ(tree["constants"]["c_wl_ff"]["source"].get<std::string>().rfind("assumption: two access-transistor", 0), 0u);
  EXPECT_EQ(tree["held_out_median_error"], k.held_out_median_error);
  const mm::Constants back = mm::constants_from_json(tree);
  EXPECT_EQ(mm::constants_to_json(back), tree);
  kvcim::for_each_spec_field<mm::MacroConstants>([&](const auto& row) {
    EXPECT_EQ(back.*row.member, k.*row.member) << row.key;
    EXPECT_EQ(back.get(row.key), k.*row.member) << row.key;
  });
  json missing = tree;
  missing["constants"].erase("k_tdc_ff");
  try {
    mm::constants_from_json(missing);
    FAIL() << "accepted";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("constants.k_tdc_ff = (empty): required field is missing: time-to-digital"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
