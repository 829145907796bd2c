// kvcim map: place a model (checkpoint, shape string or preset) onto a hardware spec and report
// capacity, utilisation, write traffic, endurance and analytic energy/latency per token.
#include <iostream>
#include <memory>

#include <optional>

#include "commands.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/error.hpp"
#include "kvcim/io.hpp"
#include "kvcim/mapper/machine.hpp"
#include "kvcim/mapper/report.hpp"
#include "kvcim/mapper/map_job.hpp"

namespace kvcim::cli {

void add_map(CLI::App& app) {
  struct Opts {
    std::string model, shape, preset, hw = mapper::default_hardware_spec_path(), policy, json;
    std::string baseline = "synthetic", idle = "gated";
    long long context = 0;
    double node = 0;  // 0: the CIM macro table's node
    bool fit = false;
    std::optional<double> area_mm2;  // none: no budget
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "map", "Place a model's weights and KV cache onto CIM macros; report capacity and energy per token");
  auto* m = cmd->add_option("--model", o->model, "llama2.c checkpoint or Hugging Face folder (default: the embedded model)");
  auto* s = cmd->add_option("--shape", o->shape,
                            "model shape without weights: dim=..,hidden=..,layers=..,heads=..,"
                            "kv_heads=..,vocab=..,context=..[,head_dim=..]");
  auto* p = cmd->add_option("--preset", o->preset,
                            "named model shape: llama2-7b|13b|70b, llama3-8b|70b, mistral-7b, tinyllama-1.1b, "
                            "stories15m|110m|260k");
  m->excludes(s)->excludes(p);
  s->excludes(p);
  cmd->add_option("--hw", o->hw, "hardware spec (YAML)")->capture_default_str();
  cmd->add_option("--policy", o->policy,
                  "overflow=fail|spill|window,page=N,kv_fraction=F|auto,gqa_sharing=on|off,"
                  "replicas=N,sequences=N,window=TOKENS,sinks=TOKENS,evict=oldest|h2o,granularity=page|token,"
                  "recent=TOKENS");
  cmd->add_option("--context", o->context,
                  "tokens in each sequence's cache (default: the model's context, capped by the "
                  "CIM capacity under overflow=fail)");
  cmd->add_flag("--fit", o->fit,
                "size the CIM arrays for the model: its weights and the KV cache of --context tokens "
                "for every sequence (organization.macros: auto)");
  cmd->add_option("--area-mm2", o->area_mm2,
                  "area budget of the CIM chip (mm2 at the comparison node); implies --fit, and what "
                  "does not fit goes off-chip (default overflow=spill)");
  cmd->add_option("--json", o->json, "write the placement as JSON to this file");
  cmd->add_option("--baseline", o->baseline,
                  "conventional machine beside the spec's synthetic engine: a name of configs/machines "
                  "(kvcim baseline lists them), or synthetic alone")
      ->capture_default_str();
  cmd->add_option("--node", o->node,
                  "technology node (nm) both sides are compared at (default: the CIM macro table's)");
  cmd->add_option("--idle", o->idle,
                  "idle silicon on both sides (storage holding no data, and idle time): gated or leaking")
      ->check(CLI::IsMember({"gated", "leaking"}))
      ->capture_default_str();
  cmd->callback([o] {
    mapper::ModelShape shape;
    if (!o->shape.empty()) shape = mapper::parse_shape(o->shape);
    else if (!o->preset.empty()) shape = mapper::shape_preset(o->preset);
    else shape = mapper::shape_from_checkpoint(o->model.empty() ? cmodel::default_model_path() : o->model);
    mapper::HardwareSpec hw = mapper::load_hardware_spec(o->hw);
    if (o->node != 0) hw.compare_at(o->node, "--node");
    hw.idle_leaks = mapper::idle_leaks_from("map", o->idle);
    // the rules of kvcim.map() too (mapper/map_job.hpp); --context 0 is the default context; an
    // unknown machine fails before any work, a regime beyond its HBM before anything is written
    const mapper::MapResult job = mapper::map_job(
        {.shape = shape, .hw = hw, .policy_text = o->policy, .policy = std::nullopt,
         .context = o->context != 0 ? std::optional<int64_t>(o->context) : std::nullopt, .fit = o->fit,
         .area_mm2 = o->area_mm2, .baseline = o->baseline});
    const mapper::Placement& placement = job.placement;
    const std::string& note = job.note;
    const mapper::MapReport report = mapper::analyse(placement);
    const nlohmann::json j = mapper::to_json(placement, report);  // baseline_machine among its figures
    const std::optional<mapper::MachineReport> machine = mapper::placement_machine(placement);
    const std::string machine_line = machine ? "machine   " + machine->line + "\n" : "";
    if (!o->json.empty()) write_file_atomic(o->json, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    std::cout << note << mapper::summary(placement, report) << machine_line;
    if (!o->json.empty()) std::cout << "wrote " << o->json << "\n";
  });
}

}  // namespace kvcim::cli
