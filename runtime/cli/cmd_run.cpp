// kvcim run: the main job. A whole generation on CIM (per operation class: reference, cim or rtl)
// beside the float reference: texts, accuracy, energy per token against conventional compute,
// and the mapping; --json writes the whole report.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "kvcim/error.hpp"
#include "kvcim/io.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/sizing.hpp"
#include "kvcim/mapper/policy.hpp"
#include "kvcim/runtime/defaults.hpp"
#include "kvcim/runtime/html_report.hpp"
#include "kvcim/runtime/report.hpp"
#include "kvcim/runtime/run_job.hpp"
#ifdef KVCIM_HAVE_RTL
#include "kvcim/testbench/rtl_tile.hpp"
#endif

namespace kvcim::cli {

using namespace kvcim::cmodel;
using namespace kvcim::runtime;
using nlohmann::json;

namespace {

// Wraps text at `width` columns, breaking at spaces, honouring newlines.
std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line, word;
  auto flush_word = [&] {
    if (line.size() + word.size() > width && !line.empty()) {
      lines.push_back(line);
      line.clear();
    }
    line += word;
    word.clear();
  };
  for (char ch : text) {
    if (ch == '\n') {
      flush_word();
      lines.push_back(line);
      line.clear();
    } else {
      word += ch;
      if (ch == ' ') flush_word();
    }
  }
  flush_word();
  if (!line.empty()) lines.push_back(line);
  return lines;
}

void print_side_by_side(const std::string& left, const std::string& right) {
  const size_t w = 48;
  auto l = wrap(left, w), r = wrap(right, w);
  std::printf("%-*s | %s\n", int(w), "reference (float32)", "CIM");
  std::printf("%s-+-%s\n", std::string(w, '-').c_str(), std::string(w, '-').c_str());
  for (size_t i = 0; i < std::max(l.size(), r.size()); ++i)
    std::printf("%-*s | %s\n", int(w), i < l.size() ? l[i].c_str() : "", i < r.size() ? r[i].c_str() : "");
}

std::string si(double pj) {
  char buf[32];
  if (pj >= 1e6) std::snprintf(buf, sizeof buf, "%.3f uJ", pj * 1e-6);
  else if (pj >= 1e3) std::snprintf(buf, sizeof buf, "%.3f nJ", pj * 1e-3);
  else std::snprintf(buf, sizeof buf, "%.3f pJ", pj);
  return buf;
}

// "v ± h" with h the interval's half-width, or "v [lo, hi]" when the interval is lopsided (one
// side more than 1.5 times the other, as KL's can be), the value and the ends in the formats given.
std::string with_interval(const json& i, const char* value_format, const char* width_format) {
  const double v = i["value"], lo = i["ci_low"], hi = i["ci_high"];
  const double below = v - lo, above = hi - v;
  char buf[96];
  if (std::max(below, above) <= 1.5 * std::min(below, above) || std::max(below, above) == 0.0) {
    const std::string f = std::string(value_format) + " \u00b1 " + width_format;
    std::snprintf(buf, sizeof buf, f.c_str(), v, (hi - lo) / 2);
  } else {
    const std::string f = std::string(value_format) + " [" + width_format + ", " + width_format + "]";
    std::snprintf(buf, sizeof buf, f.c_str(), v, lo, hi);
  }
  return buf;
}

// 10240 -> "10,240"
std::string thousands(long long n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

void print_evaluation(const json& ev) {
  if (ev.is_null()) {
    std::printf("  no evaluation (--eval-text ''): perplexity not measured\n");
    return;
  }
  std::printf("  evaluation: %s tokens in %d sequences (teacher-forced, seed %llu; 95%% intervals)\n",
              thousands(ev["tokens"].get<long long>()).c_str(), ev["sequences"].get<int>(),
              ev["seed"].get<unsigned long long>());
  std::printf("  KL mean %s nats   top-1 %s   \u0394NLL %s nats/token\n",
              with_interval(ev["kl_mean"], "%.3g", "%.2g").c_str(),
              with_interval(ev["top1_agreement"], "%.4f", "%.4f").c_str(),
              with_interval(ev["delta_nll"], "%+.4f", "%.4f").c_str());
  std::printf("  perplexity reference %s, CIM %s\n",
              with_interval(ev["perplexity_reference"], "%.3f", "%.3f").c_str(),
              with_interval(ev["perplexity_cim"], "%.3f", "%.3f").c_str());
}

std::string bank_text(double bytes) {
  char buf[32];
  if (bytes >= 1 << 20) std::snprintf(buf, sizeof buf, "%.3g MiB", bytes / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%.3g KiB", bytes / 1024);
  return buf;
}

// a figure that was not computed (null in the report) prints as nan
double or_nan(const json& j) { return j.is_number() ? j.get<double>() : std::nan(""); }

void print_report(const json& r) {
  std::printf("\n");
  print_side_by_side(r["text"]["reference"].get<std::string>(), r["text"]["cim"].get<std::string>());
  const json& batch = r["batch"];
  const int sequences = batch["sequences"].get<int>();
  if (sequences > 1) {
    std::printf("\nbatch of %d sequences decoding together (sequence 0 above; every text in --json)\n", sequences);
    int b = 0;
    for (const json& s : batch["per_sequence"])
      std::printf("  %d: seed %llu, %zu tokens, top-1 %.4f, KL mean %.3g nats, prompt \"%s\"\n", b++,
                  s["seed"].get<unsigned long long>(), s["tokens"].size(),
                  s["accuracy"]["top1_agreement"].get<double>(), s["accuracy"]["kl_mean"].get<double>(),
                  s["prompt"].get<std::string>().c_str());
  }
  const json& a = r["accuracy"];
  std::printf("\naccuracy of CIM against the float reference fed the same tokens (%d forward passes of the generation)\n",
              a["steps"].get<int>());
  std::printf("  top-1 agreement %.4f   KL mean %.3g nats (max %.3g)   logit error max %.4f mean %.4f\n",
              a["top1_agreement"].get<double>(), a["kl_mean"].get<double>(), a["kl_max"].get<double>(),
              a["max_abs_logit_error"].get<double>(), a["mean_abs_logit_error"].get<double>());
  print_evaluation(a["evaluation"]);
  const json& e = r["energy"];
  const json &cim = e["cim"], &conv = e["conventional"];
  std::printf("\nenergy per token (%d forward passes; %s vs %s)\n", e["forward_passes"].get<int>(),
              r["spec"]["technology"].get<std::string>().c_str(),
              r["spec"]["baseline_technology"].get<std::string>().c_str());
  std::printf("  %-12s %16s %16s\n", "component", "CIM", "conventional");
  for (auto it = cim["breakdown"].begin(); it != cim["breakdown"].end(); ++it) {
    const double c = it.value().get<double>() / e["forward_passes"].get<double>();
    const double v = conv["breakdown"][it.key()].get<double>() / e["forward_passes"].get<double>();
    std::printf("  %-12s %16s %16s\n", it.key().c_str(), si(c).c_str(), si(v).c_str());
  }
  std::printf("  %-12s %16s %16s\n", "total", si(cim["per_token_pj"].get<double>()).c_str(),
              si(conv["per_token_pj"].get<double>()).c_str());
  const json& cond = e["conditions"];
  std::printf("  conventional / CIM = %.2fx   (both at %g nm; conventional SRAM in %s banks; every term above;\n"
              "                                 averaged over positions 0..%d%s)\n",
              or_nan(e["conventional_over_cim"]), cond["node_nm"].get<double>(),
              bank_text(cond["baseline"]["sram_bank_bytes"].get<double>()).c_str(),
              cond["context"]["positions"].get<int>() - 1,
              sequences > 1 ? (" of " + std::to_string(sequences) + " sequences, weights fetched once per step").c_str()
                            : "");
  std::printf("  iso-area: %.2fx   (a conventional chip of the CIM chip's %.3g mm2, its SRAM %s)\n",
              or_nan(e["conventional_over_cim_iso_area"]), cond["area_mm2"]["cim"].get<double>(),
              bank_text(cond["baseline"]["iso_area_sram_bytes"].get<double>()).c_str());
  std::printf("  weights written into the macros once: %s\n", si(e["weight_load_pj"].get<double>()).c_str());
  std::printf("conditions of the energy figures\n");
  for (const std::string& line : mapper::conditions_lines(cond)) std::printf("  %s\n", line.c_str());
  const json& m = r["mapping"];
  std::printf("\nmapping on %s: %lld of %lld macros used (%lld weights, %lld KV), utilisation %.3f,\n"
              "  longest context that fits %lld tokens, %lld KV cell writes per token,\n"
              "  latency bound %.1f ns per token\n",
              r["spec"]["name"].get<std::string>().c_str(), m["macros_used"].get<long long>(),
              m["macros_total"].get<long long>(), m["weight_macros"].get<long long>(),
              m["kv_macros_used"].get<long long>(), m["utilization"].get<double>(),
              m["max_context_tokens"].get<long long>(), m["kv_cell_writes_per_token"].get<long long>(),
              m["latency_bound_ns_per_token"].get<double>());
  if (sequences > 1)
    std::printf("  a step of %d sequences: %.0f tokens/s CIM, %.0f tokens/s conventional (latency bounds)\n",
                sequences, or_nan(m["tokens_per_s_cim"]), or_nan(m["tokens_per_s_conventional"]));
}

}  // namespace

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
    double node = 0;  // 0: the CIM macro table's node
    bool fit = false;
    std::optional<double> area_mm2;  // none: no budget
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
  cmd->add_option("--threads", o->threads, "1 or 2: the float shadows beside the CIM pass")
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
    mapper::HardwareSpec hw = mapper::load_hardware_spec(o->hw);
    if (o->node != 0) hw.compare_at(o->node, "--node");
    mapper::request_sizing(hw, o->fit, o->area_mm2, "--area-mm2");
    const mapper::Policy policy = mapper::parse_policy(o->policy);
    const Checkpoint ck = load_checkpoint(o->model);
    const std::string note = mapper::fit_if_too_small(hw, ck.config, o->policy);
    if (!note.empty()) std::cout << note;
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
    std::optional<RtlTileSource> rtl;
#ifdef KVCIM_HAVE_RTL
    rtl = RtlTileSource{testbench::RtlTile().params(), [] { return std::make_unique<testbench::RtlTile>(); }};
#endif
    const json report = run_job(ck, tok, hw, policy, so, {o->model, tok_path, o->hw, o->eval_text_path},
                                rtl, "--attention-backend");
    // every output made before any is written, then all or none of them written
    std::vector<std::pair<std::string, std::string>> files;
    if (!o->json_out.empty())
      files.emplace_back(o->json_out, report.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!o->html_out.empty()) files.emplace_back(o->html_out, html_report(report));
    print_report(report);
    write_files_atomic(files);
  });
}

}  // namespace kvcim::cli
