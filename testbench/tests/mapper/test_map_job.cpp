// The job `kvcim map` and kvcim.map() share (mapper/map_job.hpp): the policy as text or as a
// Policy places alike; an area budget spills what does not fit unless the text names an
// overflow; a fixed spec too small for the weights is sized for them, with a note; the default
// context is capped by the CIM capacity only on a chip not sized for the model.
#include <gtest/gtest.h>

#include "kvcim/error.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/map_job.hpp"
#include "kvcim/mapper/report.hpp"
#include "shipped_spec.hpp"

using namespace kvcim::mapper;
using kvcim::test::shipped;

namespace {

MapRequest request(const char* preset, const char* spec) {
  MapRequest r;
  r.shape = shape_preset(preset);
  r.hw = shipped(spec);
  return r;
}

std::string placed(const MapResult& m) { return to_json(m.placement, analyse(m.placement)).dump(); }

}  // namespace

TEST(MapJob, PolicyAsTextOrAsPolicyPlacesAlike) {
  MapRequest text = request("stories15m", "sram_digital");
  text.policy_text = "page=32,overflow=spill,kv_fraction=0.25";
  text.context = 200;
  MapRequest object = text;
  object.policy_text.clear();
  object.policy = parse_policy(text.policy_text);
  EXPECT_EQ(placed(map_job(text)), placed(map_job(object)));
}

TEST(MapJob, AreaBudgetSpillsUnlessTheOverflowIsNamed) {
  MapRequest r = request("llama2-7b", "sram_digital");
  r.context = 1024;
  r.area_mm2 = 50.0;
  const MapResult spilled = map_job(r);
  EXPECT_EQ(spilled.placement.policy.overflow, KvOverflow::spill);
  EXPECT_LT(figures(spilled.placement).weights_onchip_fraction, 1.0);
  r.policy_text = "overflow=fail";
  EXPECT_THROW(map_job(r), kvcim::Error);  // the KV cache of 1024 tokens does not fit the budget
}

TEST(MapJob, TooSmallFixedSpecIsSizedWithANoteAndTheDefaultContextIsTheModels) {
  const MapResult m = map_job(request("llama2-7b", "sram_digital"));
  EXPECT_FALSE(m.note.empty());
  EXPECT_EQ(m.placement.context, shape_preset("llama2-7b").config.seq_len);
  EXPECT_EQ(figures(m.placement).weights_onchip_fraction, 1.0);
  // the embedded model fits the fixed spec: no note; the chip built holds the weights and the
  // KV of its context, not the spec's every macro
  const MapResult small = map_job(request("stories260k", "sram_digital"));
  EXPECT_TRUE(small.note.empty());
  EXPECT_EQ(small.placement.context, 512);
  EXPECT_LT(small.placement.hw.organization.macros, shipped("sram_digital").organization.macros);
  EXPECT_GE(figures(small.placement).max_context_tokens, 512);
  EXPECT_LE(figures(small.placement).max_context_tokens, 1.25 * 512);
}

TEST(MapJob, AnOverflowNamedKeepsATooSmallFixedSpec) {
  for (const char* text : {"overflow=spill", "spill,page=64"}) {
    SCOPED_TRACE(text);
    MapRequest r = request("llama2-7b", "sram_digital");
    r.policy_text = text;
    r.context = 64;
    const MapResult m = map_job(r);
    EXPECT_TRUE(m.note.empty());
    EXPECT_EQ(m.placement.hw.organization.macros, shipped("sram_digital").organization.macros);
  }
  // text naming no overflow is sized, as no text
  MapRequest r = request("llama2-7b", "sram_digital");
  r.policy_text = "page=64";
  EXPECT_FALSE(map_job(r).note.empty());
}

TEST(MapJob, BadContextNamesTheField) {
  MapRequest r = request("stories260k", "sram_digital");
  r.context = -1;
  try {
    map_job(r);
    FAIL() << "no error";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("context = -1"), std::string::npos) << e.what();
  }
}
