// Dies and links (mapper/dies.hpp): a placement cut into dies within the reticle (or wafer) limit,
// and the activations crossing every die boundary, counted by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/batch.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/dies.hpp"
#include "kvcim/text.hpp"
#include "kvcim/mapper/map_job.hpp"
#include "kvcim/mapper/report.hpp"
#include "shipped_spec.hpp"
#include "spec_text.hpp"

using namespace kvcim::mapper;
namespace energy = kvcim::cmodel::energy;
using energy::EventKind;
using kvcim::test::replaced;
using kvcim::test::shipped;

namespace {

std::string spec_file(const std::string& name) {
  std::ifstream in(shipped_config_dir() + "/hw/" + name + ".yaml");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// full_cim (sized for the model) with whole tiles of one macro (no idle macros from rounding)
// and the given reticle.
HardwareSpec full_cim_with_reticle(double reticle_mm2) {
  std::string text = replaced(spec_file("full_cim"), "macros_per_tile: 8", "macros_per_tile: 1");
  text = replaced(text, "reticle_mm2: 858 ", "reticle_mm2: " + std::to_string(reticle_mm2) + " ");
  return hardware_spec_from_text(text, shipped_config_dir() + "/hw", "full_cim (test)");
}

// Two layers of the embedded model's shape: per layer q 2, k 1, v 1, o 2, w1 6, w3 6, w2 2 weight
// macros on 256 x 256 one-bit cells at 8-bit weights; 128 tokens of KV per stream: 4 streams per
// layer x 2 pages of 64 tokens = 8 tiles of 8 x 64 x 16 cells = one macro per layer.
const char* kShape = "dim=64,hidden=172,layers=2,heads=8,kv_heads=4,vocab=512,context=128";

Placement placed_on(const HardwareSpec& hw) { return place(parse_shape(kShape), hw, Policy{}, 128); }

struct DieAreas {
  double macro = 0, kv_macro = 0, spread = 1;  // own areas and die area per own area
};
DieAreas areas_of(const Placement& p) {
  const ChipArea c = cim_area(p.hw, p.kv.tiles);
  DieAreas a;
  a.macro = (c.macros_mm2 + c.adcs_mm2) / static_cast<double>(p.hw.organization.macros);
  a.kv_macro = a.macro + c.tile_logic_mm2 / static_cast<double>(p.kv.macros);
  a.spread = c.total_mm2() / (a.macro * static_cast<double>(p.hw.organization.macros) + c.tile_logic_mm2);
  return a;
}

int64_t link_bits(const TokenLedgers& t) { return t.total().count(EventKind::die_link_bit); }

}  // namespace

TEST(Dies, TwoDieSplitCarriesTheHiddenStateOnce) {
  // sizes first, on one die
  const Placement one = placed_on(full_cim_with_reticle(858));
  ASSERT_EQ(one.kv.macros, 2);
  ASSERT_EQ(one.hw.organization.macros, 2 * (20 + 1) + 16);  // two layers, the classifier
  const DieAreas a = areas_of(one);
  // a reticle that holds layer 1 with the classifier (36 macros and a KV macro) but not both layers
  const double reticle = (36.5 * a.macro + a.kv_macro) * a.spread;
  const Placement p = placed_on(full_cim_with_reticle(reticle));
  const DiePlan plan = plan_dies(p);
  ASSERT_EQ(plan.dies.size(), 2u);
  EXPECT_EQ(plan.dies[0].weight_macros, 20);
  EXPECT_EQ(plan.dies[0].kv_macros, 1);
  EXPECT_EQ(plan.dies[1].weight_macros, 36);
  // by hand: layer 0's output, the hidden state of 64 values at 8-bit activations, crosses once
  ASSERT_EQ(plan.cuts.size(), 1u);
  EXPECT_EQ(plan.cuts[0].layer, 1);
  EXPECT_DOUBLE_EQ(plan.cuts[0].bits_per_token, 64 * 8);
  EXPECT_EQ(link_bits(token_ledgers(p)), 64 * 8);
  EXPECT_EQ(link_bits(token_ledgers(one)), 0);
  // energy at the link's 0.25 pJ/bit, latency 2 ns + 512 bits at 1317 GB/s
  EXPECT_NEAR(plan.link_energy_pj, 512 * 0.25, 1e-9);
  EXPECT_NEAR(figures(p).latency.link_ns, 2 + 512 / (8 * 1317.0), 1e-9);
  EXPECT_EQ(figures(one).latency.link_ns, 0);
  // each die within the reticle; together the chip's area
  EXPECT_LE(plan.dies[0].area_mm2, reticle);
  EXPECT_LE(plan.dies[1].area_mm2, reticle);
  EXPECT_NEAR(plan.dies[0].area_mm2 + plan.dies[1].area_mm2, cim_area(p.hw, p.kv.tiles).total_mm2(), 1e-9);
}

// Idle link power under the idle rule, by hand: the two-die split has one link; gated, it sleeps
// between crossings and draws nothing; leaking, it draws the default 0.1 x 0.25 pJ/bit x 1,317 GB/s
// = 263.4 mW over the whole token (and over the whole step of a batch), as other leakage does.
TEST(Dies, AnIdleLinkDrawsItsPowerOnlyWhenIdleSiliconLeaks) {
  const Placement one = placed_on(full_cim_with_reticle(858));
  const DieAreas a = areas_of(one);
  Placement p = placed_on(full_cim_with_reticle((36.5 * a.macro + a.kv_macro) * a.spread));
  ASSERT_EQ(plan_dies(p).dies.size(), 2u);
  auto idle_ns = [](const energy::Ledger& l) { return l.count(EventKind::link_idle_ns); };
  EXPECT_EQ(idle_ns(token_ledgers(p).total()), 0);  // gated (the default)
  p.hw.idle_leaks = true;
  const TokenLedgers t = token_ledgers(p);
  const kvcim::mapper::LatencyBound lb = cim_latency(p.shape, p.hw, p.policy, p.weights, p.kv, p.context);
  EXPECT_EQ(t.leaking_links, 1);
  EXPECT_EQ(idle_ns(t.total()), std::llround(lb.total_ns()));
  EXPECT_EQ(p.hw.costs().energy(EventKind::link_idle_ns), std::llround(0.1 * 0.25 * 1317 * 8 * 1e6));  // aJ per ns
  // the leaking chip's energy exceeds the gated one's by that much and the macros' leakage
  Placement gated = p;
  gated.hw.idle_leaks = false;
  const double link_pj = static_cast<double>(std::llround(lb.total_ns())) * 263.4;
  EXPECT_NEAR(t.periphery.cost(p.hw.costs()).energy_pj() - token_ledgers(gated).periphery.cost(gated.hw.costs()).energy_pj(),
              link_pj + (cim_kib(p.hw) - cim_kib(gated.hw)) * lb.total_ns() *
                            static_cast<double>(p.hw.costs().energy(EventKind::leak_kib_ns)) * 1e-6,
              1e-3 * link_pj);
  // a step of four sequences: the link idles over the whole step
  Policy four;
  four.sequences = 4;
  const StepFigures s = cim_step(t, lb, p.hw, four);
  EXPECT_EQ(idle_ns(cim_step_periphery(t, lb, p.hw, four, 4)), std::llround(s.step_ns));
  // the report's links line and dies JSON say what the ledgers charge, per token
  const DiePlan idle = with_idle_links(plan_dies(p), p.hw, s.step_ns, 4);
  EXPECT_EQ(idle.idle_links, 1);
  EXPECT_NEAR(idle.link_idle_pj_per_token,
              static_cast<double>(idle_ns(cim_step_periphery(t, lb, p.hw, four, 4))) * 263.4 / 4, 1e-3 * link_pj);
  const DiePlan alone = with_idle_links(plan_dies(p), p.hw, lb.total_ns(), 1);
  EXPECT_NEAR(alone.link_idle_pj_per_token, link_pj, 1e-3 * link_pj);
  EXPECT_DOUBLE_EQ(to_json(alone, p.hw)["link_idle_pj_per_token"].get<double>(), alone.link_idle_pj_per_token);
  const std::string line = dies_summary(alone, p.hw);
  EXPECT_NE(line.find("idle " + kvcim::formatted("%.4g", alone.link_idle_pj_per_token) + " pJ/token (1 link"),
            std::string::npos) << line;
  const DiePlan asleep = with_idle_links(plan_dies(gated), gated.hw, lb.total_ns(), 1);
  EXPECT_EQ(asleep.link_idle_pj_per_token, 0);
  EXPECT_NE(dies_summary(asleep, gated.hw).find("the links sleep between crossings"), std::string::npos);
  // one die has no link to draw anything
  Placement mono = one;
  mono.hw.idle_leaks = true;
  EXPECT_EQ(idle_ns(token_ledgers(mono).total()), 0);
}

// Cuts inside layers, matrices and the KV cache: each carries what the token has made before it
// and needs after it, counted here from the rules of docs/mapper.md ("Dies").
TEST(Dies, CutsInsideLayersCarryTheLiveActivations) {
  const Placement one = placed_on(full_cim_with_reticle(858));
  const DieAreas a = areas_of(one);
  const double reticle = std::max(5.5 * a.macro, 1.2 * a.kv_macro) * a.spread;
  const Placement p = placed_on(full_cim_with_reticle(reticle));
  const DiePlan plan = plan_dies(p);
  ASSERT_GT(plan.cuts.size(), 6u);
  const double ab = 8, X = 64 * ab, Q = 8 * 8 * ab, K = 32 * 8, V = 32 * 8, H = 172 * ab;
  const int W = 32;  // outputs per macro: 256 columns / 8 slices
  auto touched = [&](int64_t blocks, int col_tiles, int n_out) {
    return static_cast<double>(std::min<int64_t>(std::min<int64_t>(blocks, col_tiles) * W, n_out)) * 32;
  };
  bool inside_matrix = false, inside_kv = false;
  double sum = 0;
  for (const DieCut& c : plan.cuts) {
    SCOPED_TRACE("layer " + std::to_string(c.layer) + " item " + std::to_string(c.item) + " before " +
                 std::to_string(c.units_before));
    const int64_t u = c.units_before;
    double expect = 0;
    if (c.layer == 2) {
      expect = X + touched(u, 16, 512);  // the classifier: 1 row tile x 16 column tiles
    } else {
      switch (static_cast<DieItem>(c.item)) {
        case DieItem::q: expect = X + touched(u, 2, 64); break;
        case DieItem::k: expect = X + Q + touched(u, 1, 32); break;
        case DieItem::v: expect = X + Q + K + touched(u, 1, 32); break;
        case DieItem::kv: expect = X + Q + K + V; break;  // one KV macro: never cut through
        case DieItem::o: expect = X + Q + touched(u, 2, 64); break;
        case DieItem::w1: expect = X + touched(u, 6, 172); break;
        case DieItem::w3: expect = X + H + touched(u, 6, 172); break;
        case DieItem::w2: expect = X + H + touched(u, 2, 64); break;
      }
      inside_matrix |= u > 0;
      inside_kv |= static_cast<DieItem>(c.item) == DieItem::kv;
    }
    EXPECT_DOUBLE_EQ(c.bits_per_token, expect);
    sum += expect;
  }
  EXPECT_TRUE(inside_matrix);
  EXPECT_TRUE(inside_kv);
  EXPECT_EQ(link_bits(token_ledgers(p)), static_cast<int64_t>(sum));
  double area = 0;
  int64_t macros = 0;
  for (const Die& d : plan.dies) {
    EXPECT_LE(d.area_mm2, reticle * (1 + 1e-12));
    area += d.area_mm2;
    macros += d.macros();
  }
  EXPECT_EQ(macros, p.hw.organization.macros);
  EXPECT_NEAR(area, cim_area(p.hw, p.kv.tiles).total_mm2(), 1e-9);
}

TEST(Dies, AStreamCutThroughItsPagesSendsItsPartialOutput) {
  // 2 sequences at 192 tokens: 2 x 2 layers x 4 streams x 3 pages = 48 tiles, 8 per macro: 3 KV
  // macros per layer for its 8 streams. A cut after 1 of them: 2 streams done (their outputs
  // cross), 6 to come (their inputs cross), the third cut through its pages (its partial output
  // crosses too); per token, over the 2 sequences.
  const ModelShape shape = parse_shape(kShape);
  Policy policy;
  policy.sequences = 2;
  const Placement p = place(shape, full_cim_with_reticle(858), policy, 192);
  ASSERT_EQ(p.kv.macros, 6);
  const double X = 64 * 8, in = 2 * 8 * 8 + 8 * (8 + 8), out = 2 * 8 * 8, part = 2 * 8 * 32;
  const int kv = static_cast<int>(DieItem::kv);
  EXPECT_DOUBLE_EQ(live_bits_per_token(shape, p.hw, p.weights, p.kv, 0, kv, 1), (2 * X + 2 * out + 6 * in + part) / 2);
  EXPECT_DOUBLE_EQ(live_bits_per_token(shape, p.hw, p.weights, p.kv, 0, kv, 0), X + 4 * in);
  EXPECT_DOUBLE_EQ(live_bits_per_token(shape, p.hw, p.weights, p.kv, 1, kv, 2),
                   (2 * X + 5 * out + 3 * in + part) / 2);  // 16 / 3 = 5 done, the sixth cut through
}

TEST(Dies, OneDieIsTheMonolithicChip) {
  const Placement p = place(shape_preset("stories260k"), shipped("sram_digital"), Policy{}, 512);
  const DiePlan plan = plan_dies(p);
  ASSERT_EQ(plan.dies.size(), 1u);
  EXPECT_TRUE(plan.cuts.empty());
  EXPECT_EQ(plan.dies[0].macros(), p.hw.organization.macros);
  EXPECT_NEAR(plan.dies[0].area_mm2, cim_area(p.hw, p.kv.tiles).total_mm2(), 1e-12);
  EXPECT_EQ(link_bits(token_ledgers(p)), 0);
}

// The targets: every real model on every shipped spec, as `kvcim map` maps it, on dies each within
// the limit, its links priced.
TEST(Dies, RealModelsFitTheLimitOnEveryShippedSpec) {
  for (const char* spec : {"sram_digital", "sram_analog", "reram_analog", "gain_cell_kv", "full_cim",
                           "attention_only", "weights_only", "wafer_scale"}) {
    for (const char* model : {"llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "mistral-7b"}) {
      SCOPED_TRACE(std::string(spec) + " " + model);
      MapRequest r;
      r.shape = shape_preset(model);
      r.hw = shipped(spec);
      const Placement p = map_job(r).placement;
      const DiePlan plan = plan_dies(p);
      ASSERT_FALSE(plan.dies.empty());
      EXPECT_EQ(plan.limit_mm2, std::string(spec) == "wafer_scale" ? 46225 : 858);
      for (const Die& d : plan.dies) EXPECT_LE(d.area_mm2, plan.limit_mm2 * (1 + 1e-12));
      const nlohmann::json j = figures_json(p, analyse(p));
      EXPECT_EQ(j["dies"]["count"], plan.dies.size());
      if (plan.dies.size() > 1) {
        EXPECT_GT(j["dies"]["link_energy_pj_per_token"].get<double>(), 0);
        EXPECT_GT(j["dies"]["link_latency_ns_per_token"].get<double>(), 0);
      }
    }
  }
}

TEST(Dies, WaferScaleIsOneDieUpToTheWafer) {
  MapRequest r;
  r.shape = shape_preset("llama2-7b");
  r.hw = shipped("wafer_scale");
  const Placement p = map_job(r).placement;
  const DiePlan plan = plan_dies(p);
  EXPECT_TRUE(plan.wafer_scale);
  ASSERT_EQ(plan.dies.size(), 1u);  // ~1.1e4 mm2 on one 46,225 mm2 wafer
  EXPECT_GT(plan.dies[0].area_mm2, 858);
}

TEST(Dies, BadPackagesAreRefusedNamingTheField) {
  const std::string text = spec_file("sram_digital");
  auto error = [&](const std::string& from, const std::string& to) {
    try {
      hardware_spec_from_text(replaced(text, from, to), shipped_config_dir() + "/hw");
    } catch (const kvcim::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("reticle_mm2: 858 ", "reticle_mm2: 50000 ").find("larger than the wafer"), std::string::npos);
  EXPECT_NE(error("reticle_mm2: 858 ", "reticle_mm2: 0 ").find("reticle_mm2"), std::string::npos);
  EXPECT_NE(error("reticle_mm2: 858 ", "reticle_mm2: -3 ").find("reticle_mm2"), std::string::npos);
  EXPECT_NE(error("wafer_mm2: 46225 ", "wafer_mm2: 90000 ").find("wafer_mm2"), std::string::npos);
  EXPECT_NE(error("energy_pj_per_bit: 0.25 ", "# ").find("energy_pj_per_bit"), std::string::npos);
  EXPECT_NE(error("bandwidth_gb_s: 1317 ", "# ").find("bandwidth_gb_s"), std::string::npos);
  // a die smaller than one macro: refused when the placement is cut into dies
  const std::string tiny = replaced(text, "reticle_mm2: 858 ", "reticle_mm2: 0.001 ");
  const HardwareSpec hw = hardware_spec_from_text(tiny, shipped_config_dir() + "/hw");
  try {
    place(shape_preset("stories260k"), hw, Policy{}, 64);
    ADD_FAILURE() << "a die smaller than one macro was accepted";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("die.reticle_mm2"), std::string::npos) << e.what();
  }
}
