// kvcim map: place a model (checkpoint, shape string or preset) onto a hardware spec and report
// capacity, utilisation, write traffic, endurance and analytic energy/latency per token.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/error.hpp"
#include "kvcim/io.hpp"
#include "kvcim/mapper/report.hpp"
#include "kvcim/mapper/sizing.hpp"

namespace kvcim::cli {

void add_map(CLI::App& app) {
  struct Opts {
    std::string model, shape, preset, hw = mapper::default_hardware_spec_path(), policy, json;
    long long context = 0;
    double node = 0;  // 0: the CIM macro table's node
    bool fit = false;
    double area_mm2 = -1;  // -1: no budget given
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "map", "Place a model's weights and KV cache onto CIM macros; report capacity and energy per token");
  auto* m = cmd->add_option("--model", o->model, "llama2.c checkpoint or Hugging Face folder (default: the embedded model)");
  auto* s = cmd->add_option("--shape", o->shape,
                            "model shape without weights: dim=..,hidden=..,layers=..,heads=..,"
                            "kv_heads=..,vocab=..,context=..");
  auto* p = cmd->add_option("--preset", o->preset,
                            "named model shape: llama2-7b|13b|70b, llama3-8b|70b, mistral-7b, tinyllama-1.1b, "
                            "stories15m|110m|260k");
  m->excludes(s)->excludes(p);
  s->excludes(p);
  cmd->add_option("--hw", o->hw, "hardware spec (YAML)")->capture_default_str();
  cmd->add_option("--policy", o->policy,
                  "overflow=fail|spill|window,page=N,kv_fraction=F|auto,gqa_sharing=on|off,"
                  "replicas=N,sequences=N,window=TOKENS");
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
  cmd->add_option("--node", o->node,
                  "technology node (nm) both sides are compared at (default: the CIM macro table's)");
  cmd->callback([o] {
    mapper::ModelShape shape;
    if (!o->shape.empty()) shape = mapper::parse_shape(o->shape);
    else if (!o->preset.empty()) shape = mapper::shape_preset(o->preset);
    else shape = mapper::shape_from_checkpoint(o->model.empty() ? cmodel::default_model_path() : o->model);
    mapper::HardwareSpec hw = mapper::load_hardware_spec(o->hw);
    if (o->node != 0) hw.compare_at(o->node, "--node");
    if (o->area_mm2 != -1) {
      if (!(o->area_mm2 > 0))
        fail("--area-mm2", "area_mm2", std::to_string(o->area_mm2), "expected a positive area in mm2");
      mapper::macros_within_area(hw, o->area_mm2, "--area-mm2");  // smaller than one macro: error
      hw.organization.area_mm2 = o->area_mm2;
    }
    int64_t context = o->context;
    if (context < 0) fail("--context", "context", std::to_string(context), "expected a positive token count");
    // A budget spills what does not fit unless the policy says otherwise.
    mapper::Policy base;
    if (hw.organization.area_mm2 > 0) base.overflow = mapper::KvOverflow::spill;
    mapper::Policy policy = mapper::parse_policy(o->policy, base);
    mapper::Policy spill_base = base;
    spill_base.overflow = mapper::KvOverflow::spill;
    base.overflow = mapper::KvOverflow::window;
    // the policy names an overflow when the result does not depend on the default
    const bool overflow_given = mapper::parse_policy(o->policy, base).overflow ==
                                mapper::parse_policy(o->policy, spill_base).overflow;
    std::string note;
    bool fit = o->fit || hw.organization.macros_auto || hw.organization.area_mm2 > 0;
    // A model larger than a fixed spec, with no overflow policy asked for: size the chip for it
    // (docs/mapper.md, "Chips sized for the model") rather than fail or spill nearly everything.
    if (!fit && !overflow_given && hw.organization.weights == mapper::Home::cim &&
        mapper::weight_macros_needed(shape.config, hw.macro, policy.replicas) > hw.organization.macros) {
      fit = true;
      note = "note      the " + std::to_string(hw.organization.macros) + " macros of " + hw.name +
             " do not hold the model's weights: sized the chip for the model (--fit); "
             "--policy overflow=spill keeps the spec's size\n";
    }
    if (fit) hw.organization.macros_auto = true;
    if (context == 0) {
      context = shape.config.seq_len;
      if (!fit && mapper::effective_policy(hw, policy).overflow == mapper::KvOverflow::fail) {
        const mapper::Placement empty = mapper::place(shape, hw, policy, 0);
        const int64_t fits = empty.kv.pages_per_stream() * empty.kv.tokens_per_page;
        if (fits == 0)
          fail("--hw", "KV capacity", "0 tokens",
               "no KV page fits beside the weights (policy overflow=fail); use --fit, --policy "
               "overflow=spill, kv_fraction=..., or a spec with more macros");
        context = std::min(context, fits);
      }
    }
    const mapper::Placement placement = mapper::place(shape, hw, policy, context);
    const mapper::MapReport report = mapper::analyse(placement);
    if (!o->json.empty()) write_file_atomic(o->json, mapper::to_json(placement, report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    std::cout << note << mapper::summary(placement, report);
    if (!o->json.empty()) std::cout << "wrote " << o->json << "\n";
  });
}

}  // namespace kvcim::cli
