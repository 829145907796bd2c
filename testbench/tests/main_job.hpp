// The embedded model, and the main job on one of the shipped hardware specs, as the runtime tests
// set them up (test_run, test_evaluation, test_session, test_explain).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/runtime/hardware.hpp"
#include "kvcim/runtime/report.hpp"
#include "test_paths.hpp"

namespace kvcim::test {

struct EmbeddedModel {
  cmodel::Checkpoint ck = cmodel::read_checkpoint(model_path());
  cmodel::Tokenizer tok = cmodel::Tokenizer::load(tokenizer_path(), 512);
};

// The model on configs/hw/<spec>: go() places it for options.steps and runs the generation.
struct MainJob : EmbeddedModel {
  mapper::HardwareSpec hw;
  runtime::SessionOptions options;
  std::unique_ptr<mapper::Placement> placement;
  std::optional<cmodel::cim::TileParams> tile;  // instead of hw.tile(): parameters no table prices

  explicit MainJob(const std::string& spec, int steps = 24) {
    hw = mapper::load_hardware_spec(source_dir() + "/configs/hw/" + spec);
    options.steps = steps;
  }
  runtime::GenerationResult go() {
    placement = std::make_unique<mapper::Placement>(runtime::place_for_run(ck, hw, mapper::Policy{}, options.steps));
    return runtime::run_generation(
        ck, tok, options,
        runtime::session_hardware(ck, *placement, runtime::cmodel_tiles(tile ? *tile : hw.tile(ck.config.head_dim()))));
  }
  nlohmann::json report() {
    const runtime::GenerationResult r = go();
    return runtime::run_report(r, options, *placement, {});
  }
};

}  // namespace kvcim::test
