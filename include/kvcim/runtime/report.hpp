// The report of a run: typed (RunReport), and as JSON (schema_version 1). Fixed keys that scripts read:
//   schema_version; tokens, reference_tokens (ids each run fed, prompt included);
//   accuracy.top1_agreement, accuracy.kl_mean; energy.cim and energy.conventional, each with
//   total_pj, per_token_pj and a breakdown object (pJ per component) whose values sum to total_pj.
// accuracy.perplexity: {eval_tokens, on, reference, cim}: on the human-written text (on "text")
//   when there is one, else on the sampled sequences ("sampled"); reference and cim null
//   (eval_tokens 0, on null) when no evaluation ran, never 0.
// accuracy.evaluation: null when no evaluation ran; else the teacher-forced evaluation
//   (docs/accuracy.md): tokens, sequences (all), sampled_tokens, sampled_sequences, text_tokens,
//   prompts, seed, sampling, bootstrap {method, resample, resamples, confidence, seed}; kl_mean,
//   top1_agreement, delta_nll (nll_cim - nll_reference, paired), nll_reference, nll_cim,
//   perplexity_reference, perplexity_cim, each {value, ci_low, ci_high} (a 95% interval), of the
//   sampled sequences, and interval_block_tokens (0: the intervals resample sequences; else, below
//   4 sequences, blocks of that many tokens); text: the same statistics with tokens and sequences, of the human-written
//   text (null without one); sequence_starts (index of each sequence's first token, sampled ones
//   first); per_token {nll_reference, nll_cim, kl, top1_agree} arrays (nats).
// accuracy.top1_agreement/kl_mean/kl_max/... stay the generation's per-step figures.
// options: prompt, steps, backends, temperature, top_p, policy, evaluation (bool), eval_tokens
//   (null without an evaluation). steps: per-step arrays, the accuracy's and the KV cache's
//   (kv_tokens, kv_pages, kv_occupancy = pages / mapping.kv_page_slots). mapping.macro_map:
//   {role, utilization, truncated} per macro (mapper::macro_map_json). A figure that was not
//   computed is null, never 0. The same report as a page: html_report.hpp (docs/report.md).
// batch: {sequences, active_per_position, per_sequence: [{prompt, seed, prompt_tokens, tokens,
//   reference_tokens, text {cim, reference}, accuracy {top1_agreement, kl_mean, kl_max, steps},
//   steps}]}; with a batch, tokens, text and steps are sequence 0's, accuracy is over every
//   sequence's steps and energy per token over all of them (docs/mapper.md, "A batch in kvcim run").
// Besides: the texts, per-step accuracy arrays, energy by operation and layer,
// latency, the weight-load energy, the mapping figures, the spec, the seeds and the versions.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kvcim/cmodel/energy/ledger.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/compare.hpp"
#include "kvcim/mapper/macro_pricing.hpp"
#include "kvcim/mapper/placement.hpp"
#include "kvcim/runtime/session.hpp"

namespace kvcim::runtime {

inline constexpr int kReportSchemaVersion = 1;

// total_pj, per_token_pj, breakdown (component -> pJ), by_op, by_layer, latency_ns, per_token_latency_ns.
nlohmann::json energy_json(const cmodel::energy::Breakdown& b, int tokens);

struct RunInputs {
  std::string model_path, tokenizer_path, hardware_path, eval_text_path;
};

// The report of a run, typed: what ran, and its ledgers costed once. The JSON (to_json), the
// terminal summary (run_summary.hpp) and Python's Report (the JSON) are all written from it.
struct RunReport {
  RunInputs inputs;
  SessionOptions options;
  mapper::Placement placement;  // placement.hw is the spec
  GenerationResult result;
  cmodel::energy::Breakdown cim, conventional, weight_load;
  // the conventional engine at the CIM chip's area (its SRAM grown or shrunk to match), over the
  // same positions: the iso-area comparison (its ratio null when the chips hold different data)
  cmodel::energy::Breakdown conventional_iso_area;
  // conventional / CIM energy; empty (null in JSON, never 0) when the CIM side spent nothing
  std::optional<double> conventional_over_cim, conventional_over_cim_iso_area;
  mapper::EnergyConditions conditions;
  mapper::Figures figures;
  // best and equal throughput, EDP and iso-area at the run's last context (mapper/compare.hpp):
  // what kvcim map reports for the same workload, under the same names
  mapper::Comparison comparison;
  // a named machine beside the synthetic engine (run_job, --baseline); null and "" without one
  nlohmann::json baseline_machine;
  std::string baseline_machine_line;
  // the component macro model's uncertainty on the CIM energy per token (mapper::EnergyBand)
  mapper::EnergyBand cim_band;
  int positions() const { return static_cast<int>(result.active.size()); }
};

RunReport make_run_report(GenerationResult result, const SessionOptions& options,
                          const mapper::Placement& placement, const RunInputs& inputs);
nlohmann::json to_json(const RunReport& report);
// to_json(make_run_report(...)).
nlohmann::json run_report(const GenerationResult& result, const SessionOptions& options,
                          const mapper::Placement& placement, const RunInputs& inputs);

}  // namespace kvcim::runtime
