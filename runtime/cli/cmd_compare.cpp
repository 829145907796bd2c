// kvcim compare: CIM against the conventional engine over batches and contexts, one markdown
// table (each cell: both at their best throughput with EDP, at equal throughput, iso-area where
// both chips hold the same data; mapper/compare.hpp). The README's headline is its output.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/mapper/compare.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/shape.hpp"
#include "kvcim/runtime/defaults.hpp"
#include "kvcim/text.hpp"

namespace kvcim::cli {

namespace {
// "1,8,64" -> {1, 8, 64}; one line naming the option and the item otherwise
std::vector<int64_t> parse_counts(const std::string& option, const char* what, const std::string& text, int64_t most) {
  std::vector<int64_t> out;
  for (const std::string& item : split(text, ',')) {
    const int64_t v = parse_integer(item).value_or(0);
    if (v < 1 || v > most)
      fail(option, what, "'" + item + "'",
           "expected positive integers (at most " + std::to_string(most) + ") separated by commas");
    out.push_back(v);
  }
  return out;
}
}  // namespace

void add_compare(CLI::App& app) {
  struct Opts {
    std::string model, preset, hw = mapper::default_hardware_spec_path(), batches = "1,8,64", contexts, idle = "gated";
    double node = 0;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "compare", "CIM against the conventional engine over batches and contexts (markdown): each at its best "
                 "throughput with energy x delay, at equal throughput, iso-area where both hold the same data");
  auto* m = cmd->add_option("--model", o->model, "llama2.c checkpoint or Hugging Face folder (default: the embedded model)");
  cmd->add_option("--preset", o->preset, "named model shape instead (kvcim map --preset)")->excludes(m);
  cmd->add_option("--hw", o->hw, "hardware spec (YAML); the chip is sized for every cell")->capture_default_str();
  cmd->add_option("--batches", o->batches, "sequences decoding together, comma-separated")->capture_default_str();
  cmd->add_option("--contexts", o->contexts,
                  "tokens in every sequence's cache, comma-separated (default: the default run's steps and the "
                  "model's context)");
  cmd->add_option("--node", o->node, "technology node (nm) both sides are compared at (default: the CIM macro table's)");
  cmd->add_option("--idle", o->idle, "idle silicon on both sides: gated or leaking")
      ->check(CLI::IsMember({"gated", "leaking"}))
      ->capture_default_str();
  cmd->callback([o] {
    const std::vector<int64_t> batches = parse_counts("--batches", "batch", o->batches, 65536);  // a policy's sequences
    mapper::ModelShape shape = o->preset.empty()
                                   ? mapper::shape_from_checkpoint(o->model.empty() ? cmodel::default_model_path() : o->model)
                                   : mapper::shape_preset(o->preset);
    const std::vector<int64_t> contexts =
        o->contexts.empty() ? std::vector<int64_t>{runtime::RunDefaults::steps, shape.config.seq_len}
                            : parse_counts("--contexts", "context", o->contexts, int64_t{1} << 26);
    if (o->model.empty() && o->preset.empty()) shape.name = "the embedded model (stories260K)";
    mapper::HardwareSpec hw = mapper::load_hardware_spec(o->hw);
    if (o->node != 0) hw.compare_at(o->node, "--node");
    hw.idle_leaks = o->idle == "leaking";
    std::cout << mapper::headline_markdown(shape, hw, batches, contexts);
  });
}

}  // namespace kvcim::cli
