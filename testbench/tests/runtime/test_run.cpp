// The main job end to end on the shipped specs: simulated CIM events equal the mapper's analytic
// count, energy totals equal the sum of their parts, coarse analog ADCs cost accuracy, and the
// report carries its fixed keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/runtime/hardware.hpp"
#include "kvcim/runtime/report.hpp"
#include "kvcim/runtime/run_summary.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/explore.hpp"
#include "kvcim/mapper/report.hpp"
#include "kvcim/runtime/defaults.hpp"
#include "main_job.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;

namespace {

using test::MainJob;

}  // namespace

TEST(Run, SimulatedEventsEqualTheMappersAnalyticCount) {
  for (const char* spec : {"sram_digital.yaml", "sram_analog.yaml", "reram_analog.yaml", "gain_cell_kv.yaml"}) {
    MainJob run(spec, 20);
    GenerationResult r = run.go();
    ASSERT_EQ(r.forward_passes, 20) << spec;
    const mapper::TokenLedgers analytic = mapper::generation_ledgers(*run.placement, 20);
    EXPECT_TRUE(r.simulated == analytic.cim)
        << spec << "\nsimulated: " << r.simulated.counts_json().dump() << "\nanalytic: "
        << analytic.cim.counts_json().dump();
    // the chip's total is what was simulated plus the analytic periphery
    energy::Ledger total = analytic.cim;
    total += analytic.periphery;
    EXPECT_TRUE(r.ledger == total) << spec;
  }
}

TEST(Run, EnergyTotalsEqualTheSumOfTheirParts) {
  MainJob run("sram_digital.yaml", 16);
  run.options.eval_text = "Tom and Lily played with a ball.";
  run.options.eval_tokens = 300;
  GenerationResult r = run.go();
  const nlohmann::json report = run_report(r, run.options, *run.placement, {});
  for (const char* side : {"cim", "conventional"}) {
    const nlohmann::json& e = report["energy"][side];
    double by_component = 0, by_op = 0, by_layer = e["model_level_pj"];
    for (auto& [k, v] : e["breakdown"].items()) by_component += v.get<double>();
    for (auto& [k, v] : e["by_op"].items()) by_op += v.get<double>();
    for (auto& v : e["by_layer"]) by_layer += v.get<double>();
    const double total = e["total_pj"];
    EXPECT_GT(total, 0.0) << side;
    EXPECT_NEAR(by_component, total, 1e-9 * total) << side;
    EXPECT_NEAR(by_op, total, 1e-9 * total) << side;
    EXPECT_NEAR(by_layer, total, 1e-9 * total) << side;
    EXPECT_NEAR(e["per_token_pj"].get<double>() * 16, total, 1e-9 * total) << side;
  }
  // fixed keys scripts read
  EXPECT_EQ(report["schema_version"], kReportSchemaVersion);
  EXPECT_EQ(report["tokens"].size(), 16u);
  EXPECT_EQ(report["reference_tokens"].size(), 16u);
  EXPECT_TRUE(report["accuracy"].contains("top1_agreement"));
  EXPECT_TRUE(report["accuracy"].contains("kl_mean"));
  EXPECT_GT(report["accuracy"]["perplexity"]["cim"].get<double>(), 1.0);
  // CIM keeps weights and KV in the arrays: it must beat fetching them
  EXPECT_GT(report["energy"]["conventional_over_cim"].get<double>(), 1.0);
}

TEST(Run, ThreeBitAdcsMeasurablyLowerAccuracy) {
  auto accuracy = [](int adc_bits) {
    MainJob run("sram_analog.yaml", 32);
    // Bit-serial inputs, 64 rows per conversion and no noise: 8 full-scale ADC bits are lossless
    // here (the shipped spec, calibrated on C7, is neither lossless nor noise-free).
    run.hw.macro.input_bits_per_cycle = 1;
    run.hw.macro.rows_per_cycle = 64;
    run.hw.macro.read_noise_sigma = 0;
    run.hw.macro.adc_bits = adc_bits;
    run.hw.macro.adc_range = cim::AdcRange::full_scale;
    run.hw.validate();
    return run.go().accuracy;
  };
  const AccuracySummary fine = accuracy(8), coarse = accuracy(3);
  EXPECT_GT(coarse.kl_mean, 2 * fine.kl_mean);
  EXPECT_GT(coarse.mean_abs_error, fine.mean_abs_error);
  EXPECT_LE(coarse.top1_agreement, fine.top1_agreement);
}

TEST(Run, ReportIsByteIdenticalRunAfterRunAndWithTwoThreads) {
  auto once = [](int threads) {
    MainJob run("sram_analog.yaml", 12);
    run.options.threads = threads;
    run.options.eval_text = "The cat sat.";
    run.options.eval_tokens = 300;
    GenerationResult r = run.go();
    return run_report(r, run.options, *run.placement, {}).dump();
  };
  const std::string one = once(1);
  EXPECT_EQ(one, once(1));
  EXPECT_EQ(one, once(2));
}

// K/V widths and layout reach the runtime's quantisation: 4-bit K and V cost accuracy against 8;
// per-channel K (KIVI) beats per-token K at 4 bits; at 8 bits a per-token run is the default one.
TEST(Run, KvBitsAndKScaleReachTheRuntime) {
  auto accuracy = [](int bits, mapper::KScale scale) {
    MainJob run("sram_digital.yaml", 32);
    run.hw.kv.k_bits = run.hw.kv.v_bits = bits;
    run.hw.kv.k_scale = scale;
    run.hw.validate();
    return run.go().accuracy;
  };
  const AccuracySummary t8 = accuracy(8, mapper::KScale::token);
  const AccuracySummary t4 = accuracy(4, mapper::KScale::token), c4 = accuracy(4, mapper::KScale::channel);
  EXPECT_GT(t4.kl_mean, 2 * t8.kl_mean);
  EXPECT_LT(c4.kl_mean, t4.kl_mean);
  // per-channel K at 8 bits is as good as per-token (better on the evaluation: 0.0027 vs 0.0067)
  const AccuracySummary c8 = accuracy(8, mapper::KScale::channel);
  EXPECT_LT(c8.kl_mean, 2 * t8.kl_mean) << c8.kl_mean << " vs " << t8.kl_mean;
  EXPECT_GE(c8.top1_agreement, t8.top1_agreement - 0.05);
  MainJob plain("sram_digital.yaml", 32);
  EXPECT_EQ(plain.go().accuracy.kl_mean, t8.kl_mean);
}

// The analog KV tile: lossless settings give the digital tile's run exactly; the shipped noisy
// spec is reproducible for its seed and changes with it.
TEST(Run, AnalogKvTileLosslessEqualsDigitalAndNoiseIsSeeded) {
  MainJob digital("sram_digital.yaml", 24);
  const AccuracySummary d = digital.go().accuracy;
  MainJob lossless("gain_cell_kv.yaml", 24);
  cim::TileParams t = lossless.hw.tile(8);
  t.cell_bits = 8;
  t.adc_bits = 24;  // the C model takes it (the table prices up to 10): step 1, no clipping
  t.adc_range = cim::AdcRange::full_scale;
  t.cell_noise_sigma = t.read_noise_sigma = 0;
  lossless.tile = t;
  const AccuracySummary l = lossless.go().accuracy;
  EXPECT_EQ(l.kl_mean, d.kl_mean);
  EXPECT_EQ(l.top1_agreement, d.top1_agreement);
  auto noisy = [](uint64_t seed) {
    MainJob run("gain_cell_kv.yaml", 24);
    run.hw.kv.seed = seed;
    return run.go().accuracy.kl_mean;
  };
  EXPECT_EQ(noisy(1), noisy(1));
  EXPECT_NE(noisy(1), noisy(2));
}

// The JSON and the terminal summary are both written from the typed report: the summary's figures
// are the struct's (not read back from the JSON), and the conditions read back from a saved report
// give the same lines as the struct they were written from.
TEST(Run, JsonAndSummaryAreWrittenFromOneTypedReport) {
  MainJob run("sram_digital.yaml", 12);
  run.options.eval_text = "Tom and Lily played with a ball. They were happy and laughed all day long.";
  run.options.eval_tokens = 1200;
  GenerationResult generated = run.go();  // (makes run.placement)
  const RunReport rep = make_run_report(std::move(generated), run.options, *run.placement, {});
  const nlohmann::json j = to_json(rep);
  ASSERT_TRUE(rep.conventional_over_cim.has_value());
  EXPECT_EQ(j["energy"]["conventional_over_cim"].get<double>(), *rep.conventional_over_cim);
  EXPECT_EQ(j["energy"]["cim"]["total_pj"].get<double>(), rep.cim.energy_pj());
  EXPECT_EQ(j["mapping"]["macros_used"].get<int64_t>(), rep.figures.macros_used);
  EXPECT_EQ(j["accuracy"]["evaluation"]["tokens"].get<int>(), rep.result.evaluation->all_tokens);
  EXPECT_EQ(j["accuracy"]["evaluation"]["sampled_tokens"].get<int>(), rep.result.evaluation->tokens);
  const std::string text = run_summary(rep);
  char ratio[64];
  std::snprintf(ratio, sizeof ratio, "conventional / CIM = %.2fx", *rep.conventional_over_cim);
  EXPECT_NE(text.find(ratio), std::string::npos) << text;
  // over a thousand evaluation tokens, printed with a thousands separator
  ASSERT_GE(rep.result.evaluation->tokens, 1000);
  const std::string n = std::to_string(rep.result.evaluation->tokens);
  const std::string grouped = n.substr(0, n.size() - 3) + "," + n.substr(n.size() - 3);
  EXPECT_NE(text.find("(95% intervals): " + grouped + " tokens sampled"), std::string::npos) << text;
  EXPECT_NE(text.find(rep.result.reference_text.substr(0, 20)), std::string::npos);
  const std::vector<std::string> lines = mapper::conditions_lines(rep.conditions);
  EXPECT_EQ(mapper::conditions_lines(mapper::energy_conditions_from_json(j["energy"]["conditions"])), lines);
  for (const std::string& line : lines) EXPECT_NE(text.find(line), std::string::npos) << line;
  nlohmann::json broken = j["energy"]["conditions"];
  broken.erase("tables");
  EXPECT_THROW(mapper::energy_conditions_from_json(broken), kvcim::Error);
}

TEST(Run, TheDefaultRunsChipHoldsTheModelWithKvCapacityAtMostAQuarterAboveItsNeed) {
  // the chip `kvcim run` builds with no options: the default spec, the default steps
  MainJob run("sram_digital.yaml", RunDefaults::steps);
  const mapper::Placement p = place_for_run(run.ck, run.hw, mapper::Policy{}, RunDefaults::steps);
  const mapper::Figures f = mapper::figures(p);
  EXPECT_EQ(f.weights_onchip_fraction, 1.0);
  EXPECT_EQ(f.weight_blocks_offchip, 0);
  // KV capacity: the tokens every stream holds in CIM, against the run's context
  EXPECT_GE(f.max_context_tokens, RunDefaults::steps);
  EXPECT_LE(f.max_context_tokens, 1.25 * RunDefaults::steps) << f.max_context_tokens << " tokens of KV per sequence";
  const double slots_tokens = static_cast<double>(p.kv.slots()) * p.kv.tokens_per_page;
  const double needed = static_cast<double>(p.kv.streams()) * RunDefaults::steps;
  EXPECT_LE(slots_tokens, 1.25 * needed) << "KV slots of the chip against what the run fills";
  // no macro beyond the whole tile the weights and KV round up to
  EXPECT_LT(p.hw.organization.macros - f.weight_macros - f.kv_macros_reserved, p.hw.organization.macros_per_tile);
}

TEST(Run, ComparisonIsTheMappersForTheSameWorkload) {
  MainJob run("sram_digital.yaml", 12);
  run.options.eval_text.clear();
  const nlohmann::json report = run.report();
  const mapper::MapReport map = mapper::analyse(*run.placement);
  EXPECT_EQ(report["comparison"], mapper::figures_json(*run.placement, map)["comparison"]);
  EXPECT_EQ(report["comparison"]["conditions"]["context"].get<int64_t>(), 12);
}

// One figure, one key: `kvcim map --json`, the run report's `mapping` and the explorer's design
// points hold every figure of mapper::figures_json under its key with its value, and nothing else
// but their own fields (a figure under a second name fails).
TEST(Run, FiguresHaveOneKeyInEveryOutput) {
  MainJob run("sram_digital.yaml", 8);
  GenerationResult generated = run.go();
  const RunReport rep = make_run_report(std::move(generated), run.options, *run.placement, {});
  const nlohmann::json figures = mapper::figures_json(rep.figures).flatten();
  ASSERT_GT(figures.size(), 30u);
  mapper::DesignPoint d;
  d.figures = rep.figures;
  const nlohmann::json map = mapper::to_json(*run.placement, mapper::analyse(*run.placement)).flatten();
  const nlohmann::json mapping = to_json(rep)["mapping"].flatten();
  const nlohmann::json point = mapper::to_json(d).flatten();
  for (const nlohmann::json* out : {&map, &mapping, &point})
    for (const auto& [path, v] : figures.items()) {
      ASSERT_TRUE(out->contains(path)) << path;
      EXPECT_EQ((*out)[path], v) << path;
    }
  auto only_figures_and = [&](const nlohmann::json& out, const std::vector<std::string>& own) {
    for (const auto& item : out.items()) {
      const std::string& path = item.key();
      // a field of its own: the key itself, or under a folder ("/macro_map/")
      const bool mine = std::any_of(own.begin(), own.end(), [&](const std::string& p) {
        return path == p || (p.back() == '/' && path.rfind(p, 0) == 0);
      });
      EXPECT_TRUE(figures.contains(path) || mine) << path << " is not a figure's key";
    }
  };
  only_figures_and(mapping, {"/kv/tokens_per_page", "/macro_map/", "/dies/"});
  only_figures_and(point, {"/rows", "/cols", "/cell_bits", "/adc_bits", "/macros", "/tokens_per_page", "/overflow",
                           "/fits", "/context", "/area_mm2/"});
  // per layer, the energy under the same key as the token's
  const nlohmann::json layer = mapper::to_json(*run.placement, mapper::analyse(*run.placement))["layers"].at(0);
  EXPECT_TRUE(layer.contains("energy_per_token_pj") && layer["energy_per_token_pj"].contains("cim")) << layer.dump();
}
