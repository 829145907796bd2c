// --attention-backend rtl and cim are interchangeable: the Verilated tile and the C-model tile
// give identical integers, hence identical logits, tokens and event counts, on a real generation.
#include <gtest/gtest.h>

#include "kvcim/mapper/hardware.hpp"
#include "kvcim/runtime/hardware.hpp"
#include "kvcim/testbench/rtl_tile.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;

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
      ck, tok, o, session_hardware(ck, p, [] { return std::make_unique<testbench::RtlTile>(); }));
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
