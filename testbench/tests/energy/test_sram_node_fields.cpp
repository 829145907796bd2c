// The SRAM node table's entries (configs/memory/sram_nodes.yaml, SramNodeEntry's field table)
// field by field, generated from the table: on the largest node and the next, a randomly drawn
// legal value of every row survives dict -> entry -> JSON -> entry with its source; a value out of
// range, of the wrong type or without its source is refused naming nodes[i].<key>. And the shipped
// file's tree reads back to the same nodes, priced the same.
#include <gtest/gtest.h>

#include "../spec_field_checks.hpp"
#include "kvcim/cmodel/energy/sram_nodes.hpp"

using namespace kvcim::cmodel::energy;
using nlohmann::json;

namespace kvcim::test {
template <>
FileKind<SramNodeFile> file_kind<SramNodeFile>() {
  return {&sram_node_file_to_json, [](const json& j) { return sram_node_file_from_json(j); }, &load_sram_node_file, "configs/memory/sram_nodes.yaml"};
}
}  // namespace kvcim::test

namespace {

void check_node(size_t i) {
  kvcim::test::check_every_field<SramNodeFile, SramNodeEntry>(
      "nodes[" + std::to_string(i) + "]", json::json_pointer("/nodes/" + std::to_string(i)),
      [i](const SramNodeFile& f) -> const SramNodeEntry& { return f.nodes.at(i); });
}

TEST(SramNodeFields, EveryFieldOfTheLargestNodeRoundTripsAndRefusesBadValues) { check_node(0); }
TEST(SramNodeFields, EveryFieldOfTheNextNodeRoundTripsAndRefusesBadValues) { check_node(1); }

// The shipped file as its tree and back: the same entries with their sources, priced the same to
// the last bit; a carried node's access energy is not written into the tree.
TEST(SramNodeFields, TheShippedFileReadsBackFromItsTree) {
  const SramNodeFile& f = kvcim::test::SpecDoc<SramNodeFile>::shipped().front();
  const json tree = sram_node_file_to_json(f);
  ASSERT_EQ(tree.at("nodes").size(), f.nodes.size());
  EXPECT_EQ(tree["nodes"][0]["read_pj_per_bit"]["source"].get<std::string>().rfind("[H5]", 0), 0u);
  EXPECT_FALSE(tree["nodes"][2].contains("read_pj_per_bit"));  // 16 nm: carried
  const SramNodeFile back = sram_node_file_from_json(tree);
  EXPECT_EQ(sram_node_file_to_json(back), tree);
  const std::vector<SramNode> a = sram_nodes_of(f), b = sram_nodes_of(back), shipped = sram_nodes();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].read_pj_per_bit, b[i].read_pj_per_bit);
    EXPECT_EQ(a[i].read_pj_per_bit, shipped[i].read_pj_per_bit);
    EXPECT_EQ(a[i].read_provenance, b[i].read_provenance);
    EXPECT_EQ(a[i].macro_mb_per_mm2, shipped[i].macro_mb_per_mm2);
  }
}

}  // namespace
