#include "kvcim/runtime/run_job.hpp"

#include <fstream>
#include <sstream>

#include "kvcim/data_dir.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/machine.hpp"
#include "kvcim/mapper/sizing.hpp"
#include "kvcim/runtime/hardware.hpp"

namespace kvcim::runtime {

int batch_size(const SessionOptions& so, const mapper::Policy& policy) {
  int b = so.sequences;
  if (b < 1) fail("batch", "sequences", std::to_string(b), "expected at least 1");
  auto agree = [&b](int given, const std::string& what) {
    if (given == 1) return;
    if (b != 1 && b != given)
      fail("batch", what, std::to_string(given),
           "disagrees with " + std::to_string(b) + " sequences given elsewhere (the batch, the policy's "
           "sequences and the number of prompts must agree)");
    b = given;
  };
  agree(policy.sequences, "policy sequences");
  agree(static_cast<int>(so.prompts.size()), "prompts");
  return b;
}

RunReport run_job(const cmodel::Checkpoint& ck, const cmodel::Tokenizer& tok,
                  const mapper::HardwareSpec& hw, const mapper::Policy& run_policy,
                  const SessionOptions& run_options, const RunInputs& inputs,
                  const rtl::RtlTiles& rtl_tiles, const std::string& attention_option) {
  // the batch: its sequences' KV tiles placed, its sequences run
  SessionOptions so = run_options;
  mapper::Policy policy = run_policy;
  so.sequences = policy.sequences = batch_size(run_options, run_policy);
  const mapper::Placement placement = place_for_run(ck, hw, policy, so.steps);
  const cmodel::cim::TileParams tile = hw.tile(ck.config.head_dim());
  TileFactory tiles = cmodel_tiles(tile);
  if (so.backends.attention == BackendKind::rtl) {
    // the RTL tile's port writes the next slot only: it cannot overwrite an evicted token's slot
    if (policy.token_window())
      fail(attention_option, "backend", "rtl",
           "the RTL tile cannot overwrite a token's slot (it appends at its next slot only): run policy "
           "granularity=token on the C-model tiles (attention_backend = cim), or use granularity=page");
    if (!rtl_tiles.built())
      fail(attention_option, "backend", "rtl", "this kvcim was built without the RTL (KVCIM_WITH_RTL=OFF)");
    // what the RTL tile cannot be, named by the spec's field
    if (tile.kind != cmodel::cim::TileKind::digital)
      fail(hw.source, "kv.kind", "analog", "the RTL tile is digital: run the analog tile with attention_backend = cim");
    if (tile.kb() != tile.vb())
      fail(hw.source, "kv.k_bits", std::to_string(tile.kb()),
           "the RTL tile stores K and V at one width: kv.k_bits must equal kv.v_bits (" +
               std::to_string(tile.vb()) + ")");
    const std::optional<rtl::RtlTileSource> source = rtl_tiles.find(tile);
    if (!source) {
      std::string built;
      for (const std::string& name : rtl_tiles.available()) built += (built.empty() ? "" : ", ") + name;
      fail(hw.source, "kv", rtl::rtl_config_name(tile) + " (head_dim " + std::to_string(tile.head_dim) + ", " +
                                std::to_string(tile.tokens) + " tokens, " + std::to_string(tile.kv_bits) +
                                "-bit KV, " + std::to_string(tile.prob_bits) + "-bit probabilities, exp_frac " +
                                std::to_string(tile.exp_frac) + ")",
           "no RTL tile is built at these parameters; built: " + built +
               " (configurations: testbench/tests/rtl_configs/rtl_configs.cmake; `make` builds them all)");
    }
    tiles = source->make;
  }
  return make_run_report(run_generation(ck, tok, so, session_hardware(ck, placement, tiles)), so, placement, inputs);
}

RunResult run_job(const cmodel::Checkpoint& ck, const cmodel::Tokenizer& tok, RunChip chip,
                  const SessionOptions& options, const RunInputs& inputs, const rtl::RtlTiles& rtl_tiles,
                  const std::string& attention_option) {
  mapper::HardwareSpec& hw = chip.hw;
  // an unknown machine fails before the run
  const std::optional<mapper::Machine> machine =
      chip.baseline == "synthetic" ? std::nullopt : std::optional(mapper::machine_by_name(chip.baseline));
  if (chip.node_nm) hw.compare_at(*chip.node_nm, "run");
  mapper::request_sizing(hw, chip.fit, chip.area_mm2, "run");
  const mapper::PolicyText policy =
      chip.policy ? mapper::PolicyText{*chip.policy, true} : mapper::parse_policy_text(chip.policy_text);
  std::string note = mapper::fit_if_too_small(hw, ck.config, policy.policy, policy.overflow_named);
  if (machine)  // a batch and context its HBM cannot hold fails before the run
    mapper::machine_step(*machine, ck.config,
                         {std::max<int64_t>(1, batch_size(options, policy.policy)), std::max(1, options.steps),
                          hw.baseline.storage_bits(), hw.baseline.storage_bits()});
  RunReport report = run_job(ck, tok, hw, policy.policy, options, inputs, rtl_tiles, attention_option);
  if (machine) {
    const mapper::MachineRun m =
        mapper::machine_run(*machine, ck.config, report.result.active, hw.baseline.storage_bits());
    report.baseline_machine = m.json;
    report.baseline_machine_line = m.line;
  }
  return {std::move(report), std::move(note)};
}

std::string read_eval_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "file", "unreadable", "cannot open the evaluation text");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string default_eval_text_path() {
  return data_dir() + "/testdata/eval/austen_paragraphs.txt";
}

}  // namespace kvcim::runtime
