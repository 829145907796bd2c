// A machine file's field table (mapper/machine.hpp), field by field, generated from the table
// (spec_field_checks.hpp): for every field of every shipped machine file, a randomly drawn legal
// value survives tree -> Machine -> JSON -> Machine; a value out of range or of the wrong type is
// refused naming the field. And the file form: machine_file_to_json is the parser's inverse,
// provenance included, and a dict that breaks the file's rules is refused as the file would be.
#include <gtest/gtest.h>

#include "kvcim/error.hpp"
#include "kvcim/mapper/machine.hpp"
#include "../spec_field_checks.hpp"

using namespace kvcim;
using namespace kvcim::mapper;
using nlohmann::json;

namespace kvcim::test {
// A machine file: a document of sourced rows, every field {value: V, source: "..."} (or assumption:).
template <>
FileKind<Machine> file_kind<Machine>() {
  return {&machine_file_to_json, [](const json& j) { return machine_file_from_json(j); }, &load_machine, "configs/machines/*.yaml"};
}
}  // namespace kvcim::test

namespace {

std::string machine_refusal(const json& j) {
  try {
    machine_file_from_json(j);
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(MachineFields, EveryMachineFieldRoundTripsAndRefusesBadValues) {
  kvcim::test::check_every_top_field<Machine>();
}

// The tree is the file: every field's value and its provenance, name and description; read back,
// the same machine (and the same tree).
TEST(MachineFields, TheFileFormIsTheParsersInverse) {
  for (const std::string& name : machine_names()) {
    SCOPED_TRACE(name);
    const Machine m = machine_by_name(name);
    const json j = machine_file_to_json(m);
    EXPECT_EQ(j.at("name"), m.name);
    EXPECT_EQ(j.at("description"), m.description);
    const auto provenance = provenance_of(m);
    EXPECT_EQ(provenance.size(), std::tuple_size_v<decltype(spec_fields(&m))>);  // every field sourced
    EXPECT_EQ(j.size(), 2 + provenance.size());
    for (const auto& [key, text] : provenance) {
      const json& f = j.at(key);
      ASSERT_EQ(f.size(), 2u) << key;
      const std::string which = f.contains("source") ? "source" : "assumption";
      EXPECT_EQ(which + ": " + f.at(which).get<std::string>(), text) << key;
    }
    EXPECT_EQ(j.at("tdp_w").at("value"), m.tdp_w);
    const Machine back = machine_file_from_json(j, "<dict>");
    EXPECT_EQ(back.source, "<dict>");
    EXPECT_EQ(differing_fields(back, m), std::vector<std::string>{});
    EXPECT_EQ(provenance_of(back), provenance);
    EXPECT_EQ(machine_file_to_json(back), j);
  }
}

// A dict is held to the file's rules: a field without its source, a source that is a word, a board
// whose idle and active power reach its TDP, an unknown key; each refused naming the key.
TEST(MachineFields, ADictIsRefusedAsTheFileWouldBe) {
  const json good = machine_file_to_json(machine_by_name("h100-sxm"));
  ASSERT_EQ(machine_refusal(good), "(accepted)");
  json j = good;
  j["tdp_w"].erase("source");
  EXPECT_NE(machine_refusal(j).find(": tdp_w.value = '700.0': give exactly one of source:"), std::string::npos)
      << machine_refusal(j);
  j = good;
  j["tdp_w"]["source"] = "datasheet";
  EXPECT_NE(machine_refusal(j).find("tdp_w.source = 'datasheet': state the citation"), std::string::npos) << machine_refusal(j);
  j = good;
  j["idle_power_w"]["value"] = 650;
  EXPECT_NE(machine_refusal(j).find("active_power_w"), std::string::npos) << machine_refusal(j);
  j = good;
  j["tdp_watts"] = j["tdp_w"];
  EXPECT_NE(machine_refusal(j).find("unknown key; expected one of: node_nm,"), std::string::npos) << machine_refusal(j);
  EXPECT_NE(machine_refusal(j).find(", name, description (closest: 'tdp_w')"), std::string::npos) << machine_refusal(j);
  j = good;
  j.erase("l1_pj_per_bit");
  EXPECT_NE(machine_refusal(j).find("l1_pj_per_bit"), std::string::npos) << machine_refusal(j);
  EXPECT_NE(machine_refusal(json::array({1})).find("expected a mapping of machine fields"), std::string::npos);
}

}  // namespace
