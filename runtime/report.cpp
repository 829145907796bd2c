#include "kvcim/runtime/report.hpp"

#include <algorithm>

#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/batch.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/dies.hpp"
#include "kvcim/mapper/macro_map.hpp"
#include "kvcim/mapper/policy.hpp"
#include "kvcim/mapper/report.hpp"

namespace kvcim::runtime {

using namespace kvcim::cmodel;
using nlohmann::json;

json energy_json(const energy::Breakdown& b, int tokens) {
  json by_component = json::object(), by_op = json::object(), by_layer = json::array();
  for (energy::Component c : energy::all_components())
    by_component[std::string(energy::name(c))] = b.component_energy_aj[static_cast<int>(c)] * 1e-6;
  for (energy::Op op : energy::all_ops())
    by_op[std::string(energy::name(op))] = b.op_energy_aj[static_cast<int>(op)] * 1e-6;
  for (size_t l = 0; l + 1 < b.layer_energy_aj.size(); ++l) by_layer.push_back(b.layer_energy_aj[l] * 1e-6);
  const double n = std::max(1, tokens);
  return {{"total_pj", b.energy_pj()},
          {"per_token_pj", b.energy_pj() / n},
          {"breakdown", by_component},
          {"by_op", by_op},
          {"by_layer", by_layer},
          {"model_level_pj", b.layer_energy_aj.empty() ? json(nullptr) : json(b.layer_energy_aj.back() * 1e-6)},
          {"latency_ns", b.latency_ns()},
          {"per_token_latency_ns", b.latency_ns() / n}};
}

namespace {

// Per step: the accuracy of the step, and the KV cache the step attended over (every token so
// far, in pages: kv_pages of all streams, kv_occupancy = kv_pages / the KV page slots on chip).
json steps_json(const std::vector<StepAccuracy>& steps, const mapper::KvLayout& kv) {
  json pos = json::array(), agree = json::array(), kl = json::array(), mx = json::array(),
       mean = json::array(), margin = json::array(), kv_tokens = json::array(),
       kv_pages = json::array(), kv_occupancy = json::array();
  for (const StepAccuracy& s : steps) {
    const int64_t tokens = int64_t{s.pos} + 1;
    const int64_t pages = kv.tokens_per_page > 0
                              ? kv.streams() * ((tokens + kv.tokens_per_page - 1) / kv.tokens_per_page)
                              : 0;
    kv_tokens.push_back(tokens);
    kv_pages.push_back(pages);
    kv_occupancy.push_back(kv.slots() > 0 ? json(double(pages) / double(kv.slots())) : json(nullptr));
    pos.push_back(s.pos);
    agree.push_back(s.top1_agree);
    kl.push_back(s.kl);
    mx.push_back(s.max_abs_error);
    mean.push_back(s.mean_abs_error);
    margin.push_back(s.reference_margin);
  }
  return {{"position", pos}, {"top1_agree", agree}, {"kl", kl}, {"max_abs_error", mx},
          {"mean_abs_error", mean}, {"reference_margin", margin}, {"kv_tokens", kv_tokens},
          {"kv_pages", kv_pages}, {"kv_occupancy", kv_occupancy}};
}

// Every sequence of the batch (one for a single run): its prompt and seed, tokens, texts and
// accuracy (the report's own tokens, text and steps are sequence 0's).
json batch_json(const GenerationResult& r, const mapper::KvLayout& kv) {
  json seqs = json::array();
  for (const SequenceResult& s : r.sequences)
    seqs.push_back({{"prompt", s.prompt}, {"seed", s.seed}, {"prompt_tokens", s.prompt_tokens},
                    {"tokens", s.tokens}, {"reference_tokens", s.reference_tokens},
                    {"text", {{"cim", s.text}, {"reference", s.reference_text}}},
                    {"accuracy", {{"top1_agreement", s.accuracy.top1_agreement}, {"kl_mean", s.accuracy.kl_mean},
                                  {"kl_max", s.accuracy.kl_max}, {"steps", s.accuracy.steps}}},
                    {"steps", steps_json(s.steps, kv)}});
  return {{"sequences", static_cast<int>(r.sequences.size())}, {"active_per_position", r.active},
          {"per_sequence", seqs}};
}

json interval_json(const Interval& i) {
  return {{"value", i.value}, {"ci_low", i.low}, {"ci_high", i.high}};
}

// The statistics of a set of sequences, with their intervals.
json statistics_json(const EvalStatistics& e) {
  return {{"tokens", e.tokens},
          {"sequences", e.sequences},
          {"interval_block_tokens", e.interval_block_tokens},
          {"kl_mean", interval_json(e.kl_mean)},
          {"top1_agreement", interval_json(e.top1_agreement)},
          {"delta_nll", interval_json(e.delta_nll)},
          {"nll_reference", interval_json(e.nll_reference)},
          {"nll_cim", interval_json(e.nll_cim)},
          {"perplexity_reference", interval_json(e.perplexity_reference)},
          {"perplexity_cim", interval_json(e.perplexity_cim)}};
}

// The evaluation (null when none ran): its corpus, the statistics of the sampled sequences with
// their intervals (at the top), those of the human-written text apart (`text`, null without
// one), and the per-token arrays they come from, so that any other statistic can be computed
// from the report.
json evaluation_json(const GenerationResult& r, const SessionOptions& o) {
  if (!r.evaluation) return nullptr;
  const Evaluation& e = *r.evaluation;
  const TokenScores& t = e.scores;
  json j = statistics_json(e);
  j.update(json{{"method", "teacher-forced"},
                {"tokens", e.all_tokens},
                {"sequences", e.all_sequences},
                {"sampled_tokens", e.tokens},
                {"sampled_sequences", e.sequences},
                {"text_tokens", e.text_tokens},
                {"text", e.text ? statistics_json(*e.text) : json(nullptr)},
                {"prompts", r.eval_prompts},
                {"seed", o.eval_seed},
                {"sampling", {{"temperature", 1.0}, {"top_p", 1.0}}},
                {"bootstrap", {{"method", "expanded percentile"}, {"resample", "sequences"},
                               {"resamples", e.bootstrap.resamples}, {"confidence", e.bootstrap.confidence},
                               {"seed", e.bootstrap.seed}}},
                {"sequence_starts", t.sequence_starts},
                {"per_token", {{"nll_reference", t.nll_reference}, {"nll_cim", t.nll_cim}, {"kl", t.kl},
                               {"top1_agree", t.top1_agree}}}});
  return j;
}

// Perplexity on the human-written text when there is one (on sampled text it is the reference's
// own entropy), else on the sampled sequences; null without an evaluation.
json perplexity_json(const GenerationResult& r) {
  if (!r.evaluation) return {{"eval_tokens", 0}, {"on", nullptr}, {"reference", nullptr}, {"cim", nullptr}};
  const Evaluation& e = *r.evaluation;
  const EvalStatistics& s = e.text ? *e.text : e;
  return {{"eval_tokens", s.tokens}, {"on", e.text ? "text" : "sampled"},
          {"reference", s.perplexity_reference.value}, {"cim", s.perplexity_cim.value}};
}

}  // namespace

RunReport make_run_report(GenerationResult result, const SessionOptions& options,
                          const mapper::Placement& placement, const RunInputs& inputs) {
  // (a Placement has no empty state: every member named, the costed ones filled in below)
  RunReport rep{inputs, options, placement, std::move(result), {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  const GenerationResult& r = rep.result;
  const mapper::HardwareSpec& hw = placement.hw;
  const energy::Costs cim_costs = hw.costs(), kv_costs = hw.kv_costs();
  rep.cim = r.ledger.cost(cim_costs, &kv_costs);
  rep.conventional = r.conventional.cost(hw.baseline_costs());
  rep.weight_load = r.load_ledger.cost(cim_costs);
  const mapper::HardwareSpec iso = mapper::iso_area_baseline(hw, placement.kv.tiles);
  energy::Ledger iso_ledger(placement.shape.config.n_layers);
  for (size_t pos = 0; pos < r.active.size(); ++pos)
    iso_ledger += mapper::conventional_step_ledger(placement.shape, iso, static_cast<int64_t>(pos) + 1, r.active[pos]);
  rep.conventional_iso_area = iso_ledger.cost(iso.baseline_costs());
  rep.comparison = mapper::compare(placement);
  if (rep.cim.energy_aj > 0) {  // a ratio over no CIM energy is not computed
    rep.conventional_over_cim = double(rep.conventional.energy_aj) / double(rep.cim.energy_aj);
    if (rep.comparison.iso_area_conventional_pj)  // only when both chips hold the same data
      rep.conventional_over_cim_iso_area = double(rep.conventional_iso_area.energy_aj) / double(rep.cim.energy_aj);
  }
  rep.conditions = mapper::energy_conditions(hw, placement.kv.tiles);
  rep.figures = mapper::figures(placement);
  rep.cim_band = mapper::macro_energy_band(rep.cim, rep.cim.energy_pj() / std::max(1, rep.result.forward_passes), hw);
  return rep;
}

json run_report(const GenerationResult& r, const SessionOptions& o, const mapper::Placement& p,
                const RunInputs& in) {
  return to_json(make_run_report(r, o, p, in));
}

json to_json(const RunReport& rep) {
  const GenerationResult& r = rep.result;
  const SessionOptions& o = rep.options;
  const mapper::Placement& p = rep.placement;
  const mapper::HardwareSpec& hw = p.hw;
  const RunInputs& in = rep.inputs;
  const mapper::Figures& f = rep.figures;
  auto ratio = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  json report;
  report["schema_version"] = kReportSchemaVersion;
  report["versions"] = {{"kvcim", KVCIM_VERSION}, {"report_schema", kReportSchemaVersion}};
  report["inputs"] = {{"model", in.model_path}, {"tokenizer", in.tokenizer_path},
                      {"hardware", in.hardware_path}, {"eval_text", in.eval_text_path}};
  report["options"] = {{"prompt", o.prompts.front()}, {"steps", o.steps},
                       {"linear_backend", name(o.backends.linear)},
                       {"attention_backend", name(o.backends.attention)},
                       {"temperature", o.temperature}, {"top_p", o.top_p},
                       // (not the thread count: the report is byte-identical with 1 or 2)
                       {"policy", mapper::to_string(p.policy)},
                       {"evaluation", !o.eval_text.empty()},
                       {"eval_tokens", o.eval_text.empty() ? json(nullptr) : json(o.eval_tokens)}};
  report["seeds"] = {{"sampler", o.seed}, {"macro_noise", hw.macro.seed}};
  report["spec"] = mapper::hardware_report_json(hw);
  report["tokens"] = r.tokens;
  report["reference_tokens"] = r.reference_tokens;
  report["prompt_tokens"] = r.prompt_tokens;
  report["text"] = {{"cim", r.text}, {"reference", r.reference_text}};
  report["accuracy"] = {{"top1_agreement", r.accuracy.top1_agreement},
                        {"kl_mean", r.accuracy.kl_mean},
                        {"kl_max", r.accuracy.kl_max},
                        {"max_abs_logit_error", r.accuracy.max_abs_error},
                        {"mean_abs_logit_error", r.accuracy.mean_abs_error},
                        {"steps", r.accuracy.steps},
                        {"perplexity", perplexity_json(r)},
                        {"evaluation", evaluation_json(r, o)}};
  report["steps"] = steps_json(r.steps, p.kv);
  report["batch"] = batch_json(r, p.kv);
  json energy = {{"cim", energy_json(rep.cim, r.forward_passes)},
                 {"conventional", energy_json(rep.conventional, r.forward_passes)},
                 {"forward_passes", r.forward_passes},
                 {"weight_load_pj", rep.weight_load.energy_pj()}};
  energy["conventional_over_cim"] = ratio(rep.conventional_over_cim);
  energy["cim_band_per_token"] = mapper::to_json(rep.cim_band);
  energy["conventional_iso_area"] = energy_json(rep.conventional_iso_area, r.forward_passes);
  energy["conventional_over_cim_iso_area"] = ratio(rep.conventional_over_cim_iso_area);
  // what the figures assume: one node, the tables and factors, SRAM banks, terms, areas, context
  energy["conditions"] = mapper::to_json(rep.conditions);
  const int positions = rep.positions();
  energy["conditions"]["context"] = {
      {"positions", positions},
      {"sequences", o.sequences},
      {"averaged_over", "every position 0.." + std::to_string(positions - 1) + ", the prompt included" +
                            (o.sequences > 1 ? ", of every sequence of the batch (weights fetched once per step)"
                                             : "")}};
  energy["simulated_events"] = r.simulated.counts_json();
  if (!rep.baseline_machine.is_null()) energy["baseline_machine"] = rep.baseline_machine;
  report["energy"] = energy;
  report["comparison"] = mapper::to_json(rep.comparison);
  // the mapper's figures under the keys `kvcim map --json` gives them, the page placed and the macro map
  json mapping = mapper::figures_json(f);
  mapping["kv"]["tokens_per_page"] = p.kv.tokens_per_page;
  mapping["macro_map"] = mapper::macro_map_json(p);
  mapping["dies"] = mapper::to_json(mapper::with_idle_links(mapper::plan_dies(p), p.hw, f.latency_ns_cim, f.sequences), p.hw);
  report["mapping"] = mapping;
  return report;
}

}  // namespace kvcim::runtime
