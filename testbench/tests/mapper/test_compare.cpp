// CIM against the conventional engine as design points (mapper/compare.hpp): each side at its
// best is its latency bound, EDP is energy x step time by hand, equal throughput is equal, the
// faster side's idle energy is the idle rule's by hand, and iso-area is refused when the two
// chips hold different data.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/compare.hpp"
#include "kvcim/mapper/map_job.hpp"
#include "kvcim/mapper/report.hpp"
#include "shipped_spec.hpp"

using namespace kvcim::mapper;
using kvcim::test::shipped;
namespace energy = kvcim::cmodel::energy;

namespace {

const char* kTiny = "dim=64,hidden=128,layers=2,heads=4,kv_heads=4,vocab=64,context=64";

Placement placed(const ModelShape& shape, HardwareSpec hw, int64_t context, int sequences, bool leaking = false) {
  hw.idle_leaks = leaking;
  Policy policy;
  policy.sequences = sequences;
  return map_job({.shape = shape, .hw = hw, .policy_text = "", .policy = policy, .context = context, .fit = true,
                  .area_mm2 = std::nullopt})
      .placement;
}

void expect_rel(double a, double b, double rel, const char* what) {
  EXPECT_LE(std::abs(a - b), rel * std::max(std::abs(a), std::abs(b))) << what << ": " << a << " vs " << b;
}

}  // namespace

TEST(Compare, EachAtItsBestIsItsLatencyBoundAndEdpIsEnergyTimesStep) {
  const Placement p = placed(parse_shape(kTiny), shipped("sram_digital"), 16, 1);
  const Figures f = figures(p);
  const Comparison c = compare(p);
  EXPECT_EQ(c.best_cim.energy_pj_per_token, f.energy_pj_cim);
  EXPECT_EQ(c.best_cim.step_ns, f.latency_ns_cim);
  EXPECT_EQ(c.best_conventional.energy_pj_per_token, f.energy_pj_conventional);
  EXPECT_EQ(c.best_conventional.step_ns, f.latency_ns_conventional);
  // by hand: pJ x ns x 1e-9 = pJ s
  expect_rel(c.best_cim.edp_pj_s, f.energy_pj_cim * f.latency_ns_cim * 1e-9, 1e-12, "CIM EDP");
  expect_rel(c.best_conventional.edp_pj_s, f.energy_pj_conventional * f.latency_ns_conventional * 1e-9, 1e-12,
             "conventional EDP");
  expect_rel(c.best_edp_ratio(), (f.energy_pj_conventional * f.latency_ns_conventional) / (f.energy_pj_cim * f.latency_ns_cim),
             1e-12, "EDP ratio");
  expect_rel(c.best_cim.tokens_per_s, 1e9 / f.latency_ns_cim, 1e-12, "CIM tokens/s");
  EXPECT_EQ(c.best_cim.idle_pj_per_token, 0.0);
  EXPECT_EQ(c.best_conventional.idle_pj_per_token, 0.0);
}

TEST(Compare, EqualThroughputIsEqualAndTheFasterSideIsNoDearerThanIdlingAtItsSupply) {
  std::set<std::string> set_by;
  struct Case { const char* shape; const char* spec; int64_t context; int sequences; };
  for (const Case& k : {Case{kTiny, "sram_digital", 16, 1}, Case{"stories260k", "sram_digital", 64, 1},
                        Case{"stories260k", "sram_digital", 512, 64}, Case{"llama2-7b", "full_cim", 512, 8},
                        Case{"llama2-7b", "full_cim", 4096, 64}}) {
    SCOPED_TRACE(std::string(k.shape) + " " + k.spec + " context " + std::to_string(k.context) + " batch " +
                 std::to_string(k.sequences));
    const ModelShape shape = std::string(k.shape).find('=') != std::string::npos ? parse_shape(k.shape) : shape_preset(k.shape);
    const Placement p = placed(shape, shipped(k.spec), k.context, k.sequences);
    const Comparison c = compare(p);
    set_by.insert(c.equal_set_by);
    expect_rel(c.equal_cim.tokens_per_s, c.equal_conventional.tokens_per_s, 1e-12, "equal tokens/s");
    expect_rel(c.equal_cim.step_ns, c.equal_conventional.step_ns, 1e-12, "equal step");
    const bool cim_slower = c.equal_set_by == "cim";
    const SidePoint& slow_best = cim_slower ? c.best_cim : c.best_conventional;
    const SidePoint& fast_best = cim_slower ? c.best_conventional : c.best_cim;
    const SidePoint& slow = cim_slower ? c.equal_cim : c.equal_conventional;
    const SidePoint& fast = cim_slower ? c.equal_conventional : c.equal_cim;
    EXPECT_GE(fast_best.tokens_per_s, slow_best.tokens_per_s);
    EXPECT_EQ(c.equal_tokens_per_s, slow_best.tokens_per_s);
    EXPECT_EQ(slow.energy_pj_per_token, slow_best.energy_pj_per_token);  // the slower side as it is
    EXPECT_LE(fast.active_ns, fast.step_ns * (1 + 1e-12));
    for (const SidePoint* s : {&slow, &fast})  // EDP over the whole step, idle included
      expect_rel(s->edp_pj_s, s->energy_pj_per_token * s->step_ns * 1e-9, 1e-12, "equal-throughput EDP");
    EXPECT_LE(fast.voltage_v, c.at.voltage_v + 1e-12);
    EXPECT_GE(fast.voltage_v, kMinSupplyFraction * c.at.voltage_v - 1e-12);
    // the faster side's working part is its own figure at the supply chosen
    HardwareSpec at = p.hw;
    at.comparison.voltage_v = fast.voltage_v;
    const BaselineFigures b = baseline_figures(p.shape, at, p.context, k.sequences);
    const Figures f = figures(p.shape, at, p.policy, p.weights, p.kv, p.context, &b);
    expect_rel(fast.energy_pj_per_token - fast.idle_pj_per_token, cim_slower ? b.energy_pj : f.energy_pj_cim, 1e-12,
               "working pJ at the supply chosen");
    expect_rel(fast.active_ns, cim_slower ? b.latency_ns : f.latency_ns_cim, 1e-12, "working ns at the supply chosen");
    // the search includes the comparison supply: never dearer than working at it and idling
    const double idle_at_v0 = (fast.step_ns - fast_best.active_ns) / static_cast<double>(c.sequences);
    // (10 W of idle power bounds every chip here: Llama-2-7B on full_cim holding 64 x 4096 tokens
    // of KV leaks 1.6 W idle at 0.49 V)
    EXPECT_LE(fast.energy_pj_per_token, fast_best.energy_pj_per_token + idle_at_v0 * 1e4 /* generous pJ/ns bound */);
    // a lower supply is chosen only where it pays: at it, working costs less than at v0
    if (fast.voltage_v < c.at.voltage_v - 1e-9) {
      EXPECT_LT(fast.energy_pj_per_token - fast.idle_pj_per_token, fast_best.energy_pj_per_token);
    }
    expect_rel(c.equal_energy_ratio(), c.equal_conventional.energy_pj_per_token / c.equal_cim.energy_pj_per_token, 1e-15,
               "ratio");
  }
  EXPECT_EQ(set_by.size(), 2u) << "the cases cover a slower CIM chip and a slower conventional engine";
}

TEST(Compare, IdleTimeLeaksByTheIdleRuleByHand) {
  // the embedded model at its run's context: the conventional engine is the faster side
  for (bool leaking : {false, true}) {
    SCOPED_TRACE(leaking ? "leaking" : "gated");
    const Placement p = placed(shape_preset("stories260k"), shipped("sram_digital"), 64, 1, leaking);
    const Comparison c = compare(p);
    ASSERT_EQ(c.equal_set_by, "cim");
    const SidePoint& s = c.equal_conventional;
    HardwareSpec at = p.hw;
    at.comparison.voltage_v = s.voltage_v;
    const energy::Costs costs = at.baseline_costs();
    const double kib = baseline_kib(at, baseline_data_bytes(p.shape.config, at, p.context, 1));
    const double lanes = leaking ? static_cast<double>(at.baseline.mac_units) : 0.0;
    const double aj_per_ns = kib * static_cast<double>(costs.energy(energy::EventKind::leak_kib_ns)) +
                             lanes * static_cast<double>(costs.energy(energy::EventKind::leak_lane_ns));
    ASSERT_GT(s.step_ns, s.active_ns);
    expect_rel(s.idle_pj_per_token, aj_per_ns * 1e-6 * (s.step_ns - s.active_ns), 1e-12, "idle pJ");
    // the working part at that supply is the engine's own figure there
    const BaselineFigures b = baseline_figures(p.shape, at, p.context, 1);
    expect_rel(s.energy_pj_per_token - s.idle_pj_per_token, b.energy_pj, 1e-12, "working pJ");
    expect_rel(s.active_ns, b.latency_ns, 1e-12, "working ns");
  }
}

TEST(Compare, IsoAreaOnlyWhenBothChipsHoldTheSameData) {
  // the embedded model: CIM holds everything and so does the SRAM of a chip its size
  const Placement same = placed(shape_preset("stories260k"), shipped("sram_digital"), 64, 1);
  const Comparison c = compare(same);
  ASSERT_TRUE(c.iso_area_conventional_pj.has_value()) << c.iso_area_why_not;
  EXPECT_EQ(*c.iso_area_conventional_pj,
            baseline_figures(same.shape, iso_area_baseline(same.hw, same.kv.tiles), 64, 1).energy_pj);
  // an area budget leaves weights off-chip: the chips hold different data, no figure
  MapRequest r{.shape = shape_preset("llama2-7b"), .hw = shipped("sram_digital"), .policy_text = "",
               .policy = std::nullopt, .context = 1024, .fit = false, .area_mm2 = 50.0};
  const Placement spilled = map_job(r).placement;
  const MapReport rep = analyse(spilled);
  EXPECT_FALSE(rep.comparison.iso_area_conventional_pj.has_value());
  EXPECT_NE(rep.comparison.iso_area_why_not.find("weights"), std::string::npos) << rep.comparison.iso_area_why_not;
  EXPECT_TRUE(std::isnan(rep.conventional_iso_area_pj));
  const nlohmann::json j = figures_json(spilled, rep);
  EXPECT_TRUE(j["energy_per_token_pj"]["conventional_iso_area"].is_null());
  EXPECT_FALSE(j["comparison"]["iso_area"]["compared"].get<bool>());
  EXPECT_TRUE(j["comparison"]["iso_area"]["conventional_over_cim"].is_null());
  EXPECT_NE(summary(spilled, rep).find("iso-area: not compared"), std::string::npos);
}

TEST(Compare, JsonHoldsTheFiguresUnderOneSetOfNames) {
  const Placement p = placed(shape_preset("stories260k"), shipped("sram_digital"), 64, 8);
  const Comparison c = compare(p);
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j["best"]["cim"]["energy_pj_per_token"].get<double>(), c.best_cim.energy_pj_per_token);
  EXPECT_EQ(j["best"]["edp_conventional_over_cim"].get<double>(), c.best_edp_ratio());
  EXPECT_EQ(j["equal_throughput"]["conventional"]["tokens_per_s"].get<double>(), c.equal_conventional.tokens_per_s);
  EXPECT_EQ(j["conditions"]["sequences"].get<int64_t>(), 8);
  EXPECT_EQ(j["conditions"]["context"].get<int64_t>(), 64);
  EXPECT_EQ(figures_json(p, analyse(p))["comparison"], j);  // kvcim map's and Python's figures
  // the headline's cell is the same comparison
  const std::string table = headline_markdown(p.shape, shipped("sram_digital"), {8}, {64});
  char cell[64];
  std::snprintf(cell, sizeof cell, "best: %.2fx energy", c.best_energy_ratio());
  EXPECT_NE(table.find(cell), std::string::npos) << table;
}
