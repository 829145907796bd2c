// kvcim run: the main job. A whole generation on CIM (per operation class: reference, cim or rtl)
// beside the float reference: texts, accuracy, energy per token against conventional compute,
// and the mapping; --json writes the whole report.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "kvcim/error.hpp"
#include "kvcim/io.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/policy.hpp"
#include "kvcim/runtime/defaults.hpp"
#include "kvcim/runtime/html_report.hpp"
#include "kvcim/runtime/report.hpp"
#include "kvcim/runtime/run_job.hpp"
#include "kvcim/runtime/run_summary.hpp"

namespace kvcim::cli {

using namespace kvcim::cmodel;
using namespace kvcim::runtime;
using nlohmann::json;

void add_run(CLI::App& app) {
  struct Opts {
    std::string model = default_model_path(), tokenizer;
    std::string hw = mapper::default_hardware_spec_path(), policy;
    // the defaults are kvcim.run()'s too (runtime/defaults.hpp)
    std::vector<std::string> prompts{RunDefaults::prompt};
    std::string eval_text, json_out, html_out;
    int batch = 1;
    std::string eval_text_path = default_eval_text_path();
    int steps = RunDefaults::steps;
    int eval_tokens = RunDefaults::eval_tokens;
    std::string attention = RunDefaults::backend, linear = RunDefaults::backend;
    uint64_t seed = RunDefaults::seed;
    float temperature = RunDefaults::temperature, top_p = RunDefaults::top_p;
    bool quiet = false;
    int threads = RunDefaults::threads;
    std::optional<double> node;  // none: the CIM macro table's node
    bool fit = false;
    std::optional<double> area_mm2;  // none: no budget
    std::string baseline = "synthetic", idle = "gated";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("run", "A whole generation on CIM beside the float reference: accuracy and energy");
  cmd->add_option("--model", o->model, "model: llama2.c checkpoint file or Hugging Face folder (config.json + safetensors)")->capture_default_str();
  cmd->add_option("--tokenizer", o->tokenizer, "tokenizer: llama2.c .bin or tokenizer.json (default: the model folder's tokenizer.json, else the embedded tok512)");
  cmd->add_option("--hw", o->hw, "hardware spec (YAML)")->capture_default_str();
  cmd->add_option("--policy", o->policy, "mapping policy, e.g. page=32,kv_fraction=0.5");
  cmd->add_option("--prompt", o->prompts, "prompt text; several (one per --prompt) decode as a batch")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->default_str(RunDefaults::prompt);
  cmd->add_option("--batch", o->batch,
                  "sequences decoding together (= --policy sequences=B); sequence b gets prompt b (cycling) "
                  "and sampler seed --seed + b")
      ->capture_default_str();
  cmd->add_option("--steps", o->steps, "forward passes, prompt included")->capture_default_str();
  cmd->add_option("--attention-backend", o->attention, "reference | cim | rtl")->capture_default_str();
  cmd->add_option("--linear-backend", o->linear, "reference | cim")->capture_default_str();
  cmd->add_option("--eval-text", o->eval_text_path,
                  "evaluation text, added to the sampled tokens ('' skips the evaluation)")
      ->capture_default_str();
  cmd->add_option("--eval-tokens", o->eval_tokens,
                  "tokens sampled from the reference for the evaluation (besides --eval-text)")
      ->capture_default_str();
  cmd->add_option("--json", o->json_out, "write the whole report as JSON");
  cmd->add_option("--html", o->html_out,
                  "write the report as one self-contained HTML page with charts (docs/report.md)");
  cmd->add_option("--seed", o->seed, "sampler seed")->capture_default_str();
  cmd->add_option("--temperature", o->temperature, "0 = greedy")->capture_default_str();
  add_top_p_option(cmd, o->top_p);
  cmd->add_flag("--quiet", o->quiet, "no progress on the terminal");
  cmd->add_option("--node", o->node,
                  "technology node (nm) both sides are compared at (default: the CIM macro table's)");
  cmd->add_flag("--fit", o->fit,
                "size the CIM chip for the model, its context and sequences (organization.macros: auto)");
  cmd->add_option("--area-mm2", o->area_mm2,
                  "area budget of the CIM chip (mm2 at the comparison node); implies --fit");
  cmd->add_option("--baseline", o->baseline,
                  "conventional machine beside the spec's synthetic engine: a name of configs/machines "
                  "(kvcim baseline lists them), or synthetic alone")
      ->capture_default_str();
  cmd->add_option("--idle", o->idle,
                  "idle silicon on both sides (storage holding no data): gated (leaks nothing) or leaking")
      ->check(CLI::IsMember({"gated", "leaking"}))
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "1 or 2: threads the run uses at most (results do not depend on it)")
      ->check(CLI::Range(1, 2))->capture_default_str();
  cmd->callback([o] {
    // the outputs first: an unwritable path fails now, not after the run
    if (!o->json_out.empty()) check_writable(o->json_out);
    if (!o->html_out.empty()) check_writable(o->html_out);
    SessionOptions so;
    so.prompts = o->prompts;
    so.sequences = o->batch;
    so.steps = o->steps;
    so.seed = o->seed;
    so.temperature = o->temperature;
    so.top_p = o->top_p;
    so.threads = o->threads;
    so.eval_tokens = o->eval_tokens;
    so.backends = parse_backends("--linear-backend", o->linear, "--attention-backend", o->attention);
    if (!o->eval_text_path.empty()) so.eval_text = read_eval_text(o->eval_text_path);
    // the chip as asked: composed by run_job, as for kvcim.run()
    mapper::HardwareSpec hw = mapper::load_hardware_spec(o->hw);
    hw.idle_leaks = mapper::idle_leaks_from("run", o->idle);
    RunChip chip{.hw = std::move(hw), .policy_text = o->policy, .policy = std::nullopt,
                 .node_nm = o->node, .fit = o->fit, .area_mm2 = o->area_mm2,
                 .baseline = o->baseline};
    // read-only: the evaluation streams the reference's floats (Residency::read_only)
    const Checkpoint ck = load_checkpoint(o->model, Residency::read_only);
    const std::string tok_path = o->tokenizer.empty() ? tokenizer_path_for(o->model) : o->tokenizer;
    const Tokenizer tok = Tokenizer::load(tok_path, ck.config.vocab_size);
    // progress on an interactive terminal, unless --quiet
    const bool show = !o->quiet && ::isatty(2);
    const auto start = std::chrono::steady_clock::now();
    if (show)
      so.progress = [start](int done, int total) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double rate = done / std::max(s, 1e-9);
        std::fprintf(stderr, "\r  %d/%d tokens  %.1f tokens/s  %.1f s left   ", done, total, rate,
                     (total - done) / std::max(rate, 1e-9));
        if (done == total) std::fprintf(stderr, "\n");
      };
    if (show)
      so.eval_progress = [](int done, int total) {
        std::fprintf(stderr, "\r  evaluation: %d/%d tokens   ", done, total);
        if (done == total) std::fprintf(stderr, "\n");
      };
    // a tile the table lacks is built on first use (a progress line unless --quiet)
    const rtl::RtlTiles rtl_tiles(linked_rtl_tile(), rtl::RtlTiles::rtl_module_dirs(), rtl_build_options(o->quiet));
    const RunResult job = run_job(ck, tok, std::move(chip), so, {o->model, tok_path, o->hw, o->eval_text_path},
                                  rtl_tiles, "--attention-backend");
    const RunReport& report = job.report;
    // every output made before any is written, then all or none of them written
    std::vector<std::pair<std::string, std::string>> files;
    if (!o->json_out.empty() || !o->html_out.empty()) {
      const json j = to_json(report);
      if (!o->json_out.empty())
        files.emplace_back(o->json_out, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
      if (!o->html_out.empty()) files.emplace_back(o->html_out, html_report(j));
    }
    std::fputs((job.note + run_summary(report)).c_str(), stdout);
    write_files_atomic(files);
  });
}

}  // namespace kvcim::cli
