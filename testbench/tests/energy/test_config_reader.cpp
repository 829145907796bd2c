// The strict YAML reader shared by technology tables and hardware specs.
#include <gtest/gtest.h>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "error_of.hpp"
#include "kvcim/error.hpp"

using namespace kvcim::cmodel::energy;

using kvcim::test::error_of;

TEST(ConfigReader, EditDistanceIsLevenshtein) {
  EXPECT_EQ(edit_distance("", ""), 0);
  EXPECT_EQ(edit_distance("rows", "rows"), 0);
  EXPECT_EQ(edit_distance("rows", "rowz"), 1);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
  EXPECT_EQ(edit_distance("abc", ""), 3);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2);
  EXPECT_EQ(closest_key("colums", {"rows", "cols", "columns_per_adc"}), "cols");
  EXPECT_EQ(closest_key("adc_bit", {"adc_bits", "adc_share", "cell_bits"}), "adc_bits");
}

TEST(ConfigReader, QuantitiesWithUnits) {
  EXPECT_DOUBLE_EQ(*parse_quantity("1.5", Unit::pj), 1.5);
  EXPECT_DOUBLE_EQ(*parse_quantity("1500 fJ", Unit::pj), 1.5);
  EXPECT_DOUBLE_EQ(*parse_quantity("2nJ", Unit::pj), 2000.0);
  EXPECT_DOUBLE_EQ(*parse_quantity("830 ps", Unit::ns), 0.83);
  EXPECT_DOUBLE_EQ(*parse_quantity("2 MiB", Unit::bytes), 2.0 * 1048576);
  EXPECT_DOUBLE_EQ(*parse_quantity("1 GB", Unit::bytes), 1e9);
  EXPECT_FALSE(parse_quantity("1.5 ns", Unit::pj));  // wrong dimension
  EXPECT_FALSE(parse_quantity("1.5 parsecs", Unit::pj));
  EXPECT_FALSE(parse_quantity("fast", Unit::ns));
  EXPECT_FALSE(parse_quantity("3 pJ", Unit::count));
}

TEST(ConfigReader, SectionChecksKeysTypesAndRanges) {
  const YAML::Node n = YAML::Load("rows: 64\nrowz: 3\nname: x\nsize: -4\nflag: maybe\nlist: [1, 2]\n");
  const Section s(n, "spec.yaml", "macro");
  std::string e = error_of([&] { s.check_keys({"rows", "cols", "name", "size", "flag", "list"}); });
  EXPECT_NE(e.find("spec.yaml:2"), std::string::npos) << e;
  EXPECT_NE(e.find("macro.rowz"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'rows'"), std::string::npos) << e;
  EXPECT_EQ(s.get_int("rows", 1, 100), 64);
  e = error_of([&] { s.get_int("rows", 65, 100); });
  EXPECT_NE(e.find("macro.rows = '64'"), std::string::npos) << e;
  e = error_of([&] { s.get_int("name", 0, 10); });
  EXPECT_NE(e.find("expected an integer"), std::string::npos) << e;
  e = error_of([&] { s.get_quantity("size", Unit::bytes); });
  EXPECT_NE(e.find("macro.size = '-4'"), std::string::npos) << e;
  e = error_of([&] { s.get_bool("flag", false); });
  EXPECT_NE(e.find("true or false"), std::string::npos) << e;
  e = error_of([&] { s.get_number("list", 0, 1); });
  EXPECT_NE(e.find("expected a number"), std::string::npos) << e;
  e = error_of([&] { s.get_choice("name", {"digital", "analog"}); });
  EXPECT_NE(e.find("expected one of: digital, analog"), std::string::npos) << e;
  e = error_of([&] { s.get_int("missing", 0, 1); });
  EXPECT_NE(e.find("required"), std::string::npos) << e;
  EXPECT_EQ(s.get_int("missing", 0, 1, 1), 1);
}

TEST(ConfigReader, JsonTextIsAccepted) {
  const YAML::Node n = yaml_from_json_text(R"({"rows": 128, "kind": "analog", "nested": {"a": 1.5}})");
  const Section s(n, "<dict>", "");
  EXPECT_EQ(s.get_int("rows", 1, 1000), 128);
  EXPECT_EQ(s.get_choice("kind", {"digital", "analog"}), 1);
  EXPECT_DOUBLE_EQ(s.child("nested").get_number("a", 0, 2), 1.5);
  EXPECT_THROW(yaml_from_json_text("{\"a\": [1, 2"), kvcim::Error);
}
