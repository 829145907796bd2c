// kvcim explain: the story of one prompt through the model, measured (see runtime/explain.hpp).
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "kvcim/io.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/runtime/explain.hpp"

namespace kvcim::cli {

using namespace kvcim::cmodel;
using nlohmann::json;

namespace {

std::string quoted(const std::string& piece) { return "'" + piece + "'"; }

void print_explain(const json& e, int shown_steps) {
  std::printf("1. A language model predicts the next token from the tokens before it.\n");
  int n = 0;
  for (const auto& p : e["predictions"]) {
    if (n++ >= shown_steps) {
      std::printf("   ... (%zu positions in all; --json has every one)\n", e["predictions"].size());
      break;
    }
    std::printf("   \"%s\" ->", p["text_so_far"].get<std::string>().c_str());
    for (const auto& c : p["candidates"])
      std::printf(" %s %.2f", quoted(c["piece"]).c_str(), c["probability"].get<double>());
    std::printf("   chosen %s\n", quoted(p["chosen_piece"]).c_str());
  }
  std::printf("\n2. Text becomes token ids:\n  ");
  for (const auto& t : e["tokens"]) std::printf(" %s=%d", quoted(t["piece"]).c_str(), t["id"].get<int>());
  std::printf("\n\n3. Ids become vectors (embeddings); tokens of related meaning sit close:\n");
  for (const auto& v : e["vectors"]) {
    std::printf("   %s: %d numbers, norm %.2f; nearest:", quoted(v["piece"]).c_str(), v["size"].get<int>(),
                v["norm"].get<double>());
    for (const auto& nb : v["nearest"]) std::printf(" %s (%.2f)", quoted(nb["piece"]).c_str(), nb["cosine"].get<double>());
    std::printf("\n");
  }
  const json& notes = e["kv_notes"];
  std::printf("\n4. Every token leaves key/value notes that later tokens look back at. The last token %s\n"
              "   (position %d) weighted most, head-averaged:\n",
              quoted(notes["token"]).c_str(), notes["position"].get<int>());
  for (const auto& l : notes["layers"]) {
    std::printf("   layer %d:", l["layer"].get<int>());
    for (const auto& t : l["top"])
      std::printf("  %s@%d %.2f", quoted(t["piece"]).c_str(), t["position"].get<int>(), t["weight"].get<double>());
    std::printf("\n");
  }
  const json& steps = e["kv_cache"]["steps"];
  std::printf("\n5. The KV cache keeps those notes so they are not recomputed:\n");
  std::printf("   %8s %16s %16s %14s %14s\n", "position", "MACs cached", "MACs no cache", "time cached", "time no cache");
  double mc = 0, mn = 0, tc = 0, tn = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const json& s = steps[i];
    mc += s["macs_cached"].get<double>(), mn += s["macs_without_cache"].get<double>();
    tc += s["seconds_cached"].get<double>(), tn += s["seconds_without_cache"].get<double>();
    if (i % std::max<size_t>(1, steps.size() / 6) == 0 || i + 1 == steps.size())
      std::printf("   %8d %16lld %16lld %11.3f ms %11.3f ms\n", s["position"].get<int>(),
                  s["macs_cached"].get<long long>(), s["macs_without_cache"].get<long long>(),
                  s["seconds_cached"].get<double>() * 1e3, s["seconds_without_cache"].get<double>() * 1e3);
  }
  std::printf("   in all: %.3g MACs and %.2f ms with the cache, %.3g MACs and %.2f ms without (%.1fx)\n",
              mc, tc * 1e3, mn, tn * 1e3, mn / std::max(mc, 1.0));
  std::printf("   (with the cache each step costs a constant plus a term linear in the context;\n"
              "    without it, each step recomputes every earlier position: quadratic)\n");
  std::printf("\n6. But the cache grows with the context, and moving data, not arithmetic, costs energy:\n");
  std::printf("   KV cache: %lld bytes per token at fp16 (%lld at fp32)\n",
              e["kv_cache"]["bytes_per_token_fp16"].get<long long>(), e["kv_cache"]["bytes_per_token_fp32"].get<long long>());
  const json& costs = e["costs"]["steps"];
  if (!costs.empty() && costs[0].contains("conventional")) {
    std::printf("   %8s %12s %12s %10s | %12s %12s | %12s %12s\n", "position", "weight B", "KV B", "MACs",
                "conv move pJ", "conv comp pJ", "CIM move pJ", "CIM comp pJ");
    for (size_t i = 0; i < costs.size(); ++i) {
      if (!(i % std::max<size_t>(1, costs.size() / 6) == 0 || i + 1 == costs.size())) continue;
      const json& c = costs[i];
      std::printf("   %8d %12lld %12lld %10lld | %12.0f %12.0f | %12.0f %12.0f\n", c["position"].get<int>(),
                  c["weight_bytes_moved"].get<long long>(), c["kv_bytes_moved"].get<long long>(),
                  c["macs"].get<long long>(), c["conventional"]["moving_pj"].get<double>(),
                  c["conventional"]["computing_pj"].get<double>(), c["cim"]["moving_pj"].get<double>(),
                  c["cim"]["computing_pj"].get<double>());
    }
    std::printf("   So compute where the data sits: CIM (%s) keeps weights and KV in the arrays.\n",
                e["costs"]["hardware"]["name"].get<std::string>().c_str());
  }
}

}  // namespace

void add_explain(CLI::App& app) {
  struct Opts {
    std::string model = default_model_path(), tokenizer;
    std::string hw = mapper::default_hardware_spec_path(), json_out;
    runtime::ExplainOptions ex;
    int shown = 8;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("explain", "The story of one prompt through the model, measured");
  cmd->add_option("--model", o->model, "model: llama2.c checkpoint file or Hugging Face folder (config.json + safetensors)")->capture_default_str();
  cmd->add_option("--tokenizer", o->tokenizer, "tokenizer: llama2.c .bin or tokenizer.json (default: the model folder's tokenizer.json, else the embedded tok512)");
  cmd->add_option("--prompt", o->ex.prompt, "prompt text")->capture_default_str();
  cmd->add_option("--steps", o->ex.steps, "forward passes, prompt included")->capture_default_str();
  cmd->add_option("--hw", o->hw, "hardware spec for the CIM side")->capture_default_str();
  cmd->add_option("--json", o->json_out, "write everything as JSON");
  cmd->callback([o] {
    const Checkpoint ck = load_checkpoint(o->model);
    const Tokenizer tok = Tokenizer::load(
        o->tokenizer.empty() ? tokenizer_path_for(o->model) : o->tokenizer, ck.config.vocab_size);
    const mapper::HardwareSpec hw = mapper::load_hardware_spec(o->hw);
    const mapper::ModelShape shape{ck.path, ck.config};
    mapper::Policy policy;
    policy.overflow = mapper::KvOverflow::spill;  // explain any context: spilled pages are costed off-chip
    const mapper::Placement p = mapper::place(shape, hw, policy, o->ex.steps);
    runtime::ExplainEnergy en;
    en.conventional_step_ledger = [&p](int pos) { return mapper::conventional_ledger(p.shape, p.hw, pos); };
    en.conventional_costs = hw.baseline_costs();
    en.cim_step_ledger = [&p](int pos) {
      return mapper::token_ledgers(p.shape, p.hw, p.policy, p.weights, p.kv, pos + 1).total();
    };
    en.cim_costs = hw.costs();
    en.hardware = {{"name", hw.name}, {"technology", hw.tech.name}, {"baseline_technology", hw.baseline_tech.name}};
    const json e = runtime::explain(ck, tok, o->ex, en);
    print_explain(e, o->shown);
    if (!o->json_out.empty()) write_file_atomic(o->json_out, e.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  });
}

}  // namespace kvcim::cli
