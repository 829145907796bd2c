// --attention-backend rtl and cim are interchangeable: the Verilated tile and the C-model tile
// give identical integers, hence identical logits, tokens and event counts, on a real generation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <typeinfo>

#include "error_of.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/runtime/run_job.hpp"
#include "kvcim/runtime/hardware.hpp"
#include "kvcim/rtl/rtl_tile.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;
using kvcim::cmodel::cim::TileParams;

TEST(RtlBackend, SameTokensLogitsAndEventsAsTheCModel) {
  const Checkpoint ck = read_checkpoint(test::model_path());
  const Tokenizer tok = Tokenizer::load(test::tokenizer_path(), 512);
  const mapper::HardwareSpec hw = mapper::load_hardware_spec(mapper::default_hardware_spec_path());
  SessionOptions o;
  o.steps = 20;
  o.backends = {BackendKind::cim, BackendKind::cim};
  o.eval_text = "Lily saw a big dog.";
  o.eval_tokens = 100;  // the Verilated tile is slow: a short evaluation
  const mapper::Placement p = place_for_run(ck, hw, mapper::Policy{}, o.steps);
  const GenerationResult c = run_generation(ck, tok, o, session_hardware(ck, p, cmodel_tiles(hw.tile(8))));
  o.backends.attention = BackendKind::rtl;
  const GenerationResult r = run_generation(
      ck, tok, o, session_hardware(ck, p, [] { return std::make_unique<rtl::RtlTile>(); }));
  EXPECT_EQ(r.tokens, c.tokens);
  ASSERT_EQ(r.steps.size(), c.steps.size());
  for (size_t i = 0; i < r.steps.size(); ++i) {
    // identical integers out of the tile give bit-identical logits, hence identical errors
    EXPECT_EQ(r.steps[i].max_abs_error, c.steps[i].max_abs_error) << "step " << i;
    EXPECT_EQ(r.steps[i].kl, c.steps[i].kl) << "step " << i;
  }
  ASSERT_TRUE(r.evaluation && c.evaluation);
  EXPECT_EQ(r.evaluation->scores.nll_cim, c.evaluation->scores.nll_cim);
  EXPECT_TRUE(r.simulated == c.simulated) << r.simulated.counts_json().dump() << "\n" << c.simulated.counts_json().dump();
  EXPECT_GT(r.simulated.count(energy::Op::attn_scores, energy::EventKind::column_read), 0);
}

namespace {

std::optional<rtl::RtlTileSource> linked_tile() {
  return rtl::RtlTileSource{rtl::RtlTile::built_params(), [] { return std::make_unique<rtl::RtlTile>(); }};
}

// The default spec with a tile of `tokens` tokens, `kv_bits`-bit K/V and `prob_bits`-bit P.
mapper::HardwareSpec spec_with_tile(int tokens, int kv_bits, int prob_bits) {
  nlohmann::json j = mapper::hardware_spec_to_json(mapper::load_hardware_spec(mapper::default_hardware_spec_path()));
  j["kv"]["tokens_per_tile"] = tokens;
  j["kv"]["prob_bits"] = prob_bits;
  j["precision"]["kv_bits"] = kv_bits;
  return mapper::hardware_spec_from_json(j);
}

}  // namespace

// Another configuration of the table, loaded as a module (kvcim_rtl_tile_hd8_t32_kv2_p8.so beside
// the test), runs the generation exactly as the C-model tile at its parameters does.
TEST(RtlBackend, AModuleConfigurationRunsLikeTheCModel) {
  const Checkpoint ck = read_checkpoint(test::model_path());
  const Tokenizer tok = Tokenizer::load(test::tokenizer_path(), 512);
  const mapper::HardwareSpec hw = spec_with_tile(32, 2, 8);
  const rtl::RtlTiles tiles(linked_tile());
  const std::optional<rtl::RtlTileSource> module = tiles.find(hw.tile(ck.config.head_dim()));
  ASSERT_TRUE(module) << "kvcim_rtl_tile_hd8_t32_kv2_p8.so not found in the test's folder";
  EXPECT_EQ(module->params, hw.tile(8));
  {
    const std::unique_ptr<cmodel::cim::AttentionTile> t = module->make();
    const cmodel::cim::AttentionTile& tile = *t;
    EXPECT_NE(std::string(typeid(tile).name()).find("RtlTile"), std::string::npos) << typeid(tile).name();
    EXPECT_EQ(t->params(), hw.tile(8));  // the Verilated model's own parameters
  }
  SessionOptions o;
  o.steps = 40;  // two tiles per stream
  o.backends = {BackendKind::cim, BackendKind::cim};
  o.eval_text = "";
  const RunReport c = run_job(ck, tok, hw, mapper::Policy{}, o, {}, tiles, "attention");
  o.backends.attention = BackendKind::rtl;
  const RunReport r = run_job(ck, tok, hw, mapper::Policy{}, o, {}, tiles, "attention");
  EXPECT_EQ(r.result.tokens, c.result.tokens);
  ASSERT_EQ(r.result.steps.size(), c.result.steps.size());
  for (size_t i = 0; i < r.result.steps.size(); ++i) EXPECT_EQ(r.result.steps[i].kl, c.result.steps[i].kl) << i;
  EXPECT_TRUE(r.result.simulated == c.result.simulated);
  // and it is not the linked tile: the default configuration refuses these parameters
  EXPECT_FALSE(rtl::RtlTile::built_params() == hw.tile(8));
}

// A spec no configuration matches is refused naming every configuration there is; a file that is
// not a kvcim module is refused naming the file.
TEST(RtlBackend, UnbuiltConfigurationsAndForeignFilesAreNamed) {
  const Checkpoint ck = read_checkpoint(test::model_path());
  const Tokenizer tok = Tokenizer::load(test::tokenizer_path(), 512);
  const mapper::HardwareSpec hw = spec_with_tile(16, 8, 12);
  SessionOptions o;
  o.steps = 8;
  o.eval_text = "";
  o.backends = {BackendKind::cim, BackendKind::rtl};
  const std::string e = kvcim::test::error_of([&] { run_job(ck, tok, hw, mapper::Policy{}, o, {}, rtl::RtlTiles(linked_tile()), "attention"); });
  EXPECT_NE(e.find("hd8_t16_kv8_p12"), std::string::npos) << e;
  for (const char* built : {"hd8_t64_kv8_p12 (linked)", "hd8_t32_kv2_p8", "hd48_t128_kv8_p16", "hd64_t64_kv4_p12"})
    EXPECT_NE(e.find(built), std::string::npos) << built << ": " << e;
  const std::string dir = (std::filesystem::temp_directory_path() / ("kvcim_rtl_mod_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/kvcim_rtl_tile_hd8_t16_kv8_p12.so") << "not a shared object";
  const rtl::RtlTiles foreign(linked_tile(), {dir});
  EXPECT_EQ(foreign.available(), (std::vector<std::string>{"hd8_t64_kv8_p12 (linked)", "hd8_t16_kv8_p12"}));
  const std::string f = kvcim::test::error_of([&] { foreign.find(hw.tile(8)); });
  EXPECT_NE(f.find(dir + "/kvcim_rtl_tile_hd8_t16_kv8_p12.so: module"), std::string::npos) << f;
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(rtl::RtlTiles(std::nullopt).find(TileParams{}));  // a build without the RTL has none
}
