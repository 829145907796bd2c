// CIM against the conventional engine as design points (see compare.hpp).
#include "kvcim/mapper/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

#include "kvcim/cmodel/energy/scaling.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/batch.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/map_job.hpp"
#include "kvcim/mapper/policy.hpp"

namespace kvcim::mapper {

namespace energy = cmodel::energy;
using energy::EventKind;
using nlohmann::json;

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// One side at a supply: its step's working time and energy per token (no idle), and its leakage
// power while idle (pJ/ns for the whole chip).
struct Working {
  double active_ns = 0, energy_pj_per_token = 0, idle_pj_per_ns = 0;
};

// Leakage while idle: the cells keeping data (kib, as the idle rule counts them) and, under
// --idle leaking, the lanes and the die-to-die links (`links`: 0 when gated).
double idle_power(const energy::Costs& costs, double kib, int64_t lanes, bool leaking, int64_t links = 0) {
  const double aj_per_ns = kib * static_cast<double>(costs.energy(EventKind::leak_kib_ns)) +
                           (leaking ? static_cast<double>(lanes) * static_cast<double>(costs.energy(EventKind::leak_lane_ns)) : 0.0) +
                           static_cast<double>(links) * static_cast<double>(costs.energy(EventKind::link_idle_ns));
  return aj_per_ns * 1e-6;
}

HardwareSpec at_supply(const HardwareSpec& hw, double v) {
  HardwareSpec s = hw;
  s.comparison.voltage_v = v;
  return s;
}

// The CIM chip's events do not depend on its supply; their prices and the time its leakage is
// charged over do. The token's ledgers are made once, without their leakage, and priced at each
// supply as figures() prices them (token_ledgers, cim_step): a large model's search stays fast.
TokenLedgers without_leakage(const Placement& p) {
  const TokenLedgers t = token_ledgers(p.shape, p.hw, p.policy, p.weights, p.kv, p.context, false);
  TokenLedgers out{t.cim, energy::Ledger(t.periphery.n_layers()), t.leaking_links};
  for (int layer = energy::kModelLevel; layer < t.periphery.n_layers(); ++layer)
    for (energy::Op op : energy::all_ops())
      for (EventKind k : energy::all_event_kinds())
        if (k != EventKind::leak_kib_ns && k != EventKind::leak_lane_ns && k != EventKind::link_idle_ns)
          if (const int64_t n = t.periphery.count(layer, op, k)) out.periphery.add(layer, op, k, n);
  return out;
}

Working cim_working(const Placement& p, const TokenLedgers& no_leak, double v) {
  const HardwareSpec hw = at_supply(p.hw, v);
  const LatencyBound lb = cim_latency(p.shape, hw, p.policy, p.weights, p.kv, p.context);
  TokenLedgers t = no_leak;
  charge_static_and_control(t.periphery, 0, cim_kib(hw), hw.digital.units, lb.total_ns(), t.leaking_links);
  const StepFigures s = cim_step(t, lb, hw, p.policy);
  return {s.step_ns, s.energy_pj_per_token,
          idle_power(hw.costs(), cim_kib(hw), hw.digital.units, hw.idle_leaks, t.leaking_links)};
}

Working conventional_working(const Placement& p, double v) {
  const HardwareSpec hw = at_supply(p.hw, v);
  const BaselineFigures b = baseline_figures(p.shape, hw, p.context, p.policy.sequences);
  const double kib = baseline_kib(hw, baseline_data_bytes(p.shape.config, hw, p.context, p.policy.sequences));
  return {b.latency_ns, b.energy_pj, idle_power(hw.baseline_costs(), kib, hw.baseline.mac_units, hw.idle_leaks)};
}

SidePoint point(const Working& w, double v, double step_ns, int64_t sequences, std::string how) {
  SidePoint s;
  s.voltage_v = v;
  s.active_ns = w.active_ns;
  s.step_ns = step_ns;
  const double B = static_cast<double>(sequences);
  s.tokens_per_s = step_ns > 0 ? B / (step_ns * 1e-9) : 0;
  s.idle_pj_per_token = w.idle_pj_per_ns * std::max(0.0, step_ns - w.active_ns) / B;
  s.energy_pj_per_token = w.energy_pj_per_token + s.idle_pj_per_token;
  s.edp_pj_s = s.energy_pj_per_token * step_ns * 1e-9;
  s.how = std::move(how);
  return s;
}

// The faster side's lowest energy at a step of `target_ns`: every supply on the grid from the
// comparison supply down to its floor at which a step fits in target_ns, idle for the rest.
SidePoint slowed(const std::function<Working(double)>& at, double v0, double target_ns, int64_t sequences) {
  const double floor_v = std::max(energy::kMinVoltage, kMinSupplyFraction * v0);
  std::optional<SidePoint> best;
  const int steps = static_cast<int>(std::floor((v0 - floor_v) / kSupplyStepV + 1e-9));
  for (int i = 0; i <= steps; ++i) {
    const double v = v0 - i * kSupplyStepV;
    Working w;
    try {
      w = at(v);
    } catch (const Error&) {  // outside the scaling fits: no lower supply is tried
      break;
    }
    if (w.active_ns > target_ns) break;  // slower still at lower supplies
    SidePoint s = point(w, v, target_ns, sequences, "");
    if (!best || s.energy_pj_per_token < best->energy_pj_per_token) best = s;
  }
  if (!best) best = point(at(v0), v0, target_ns, sequences, "");  // (rounding: v0 always fits)
  std::ostringstream how;
  if (best->voltage_v < v0 - 1e-9)
    how << "supply lowered to " << fmt("%.2f V", best->voltage_v) << " (lowest energy on a " << fmt("%.2f", kSupplyStepV)
        << " V grid down to " << fmt("%.2f V", floor_v) << ")";
  else
    how << "at " << fmt("%.2f V", v0) << " (a lower supply costs more or is too slow)";
  how << ", working " << fmt("%.4g", best->active_ns) << " ns of each " << fmt("%.4g", target_ns) << " ns step, idle the rest";
  best->how = how.str();
  return *best;
}

}  // namespace

double Comparison::best_energy_ratio() const {
  return best_conventional.energy_pj_per_token / best_cim.energy_pj_per_token;
}
double Comparison::best_edp_ratio() const { return best_conventional.edp_pj_s / best_cim.edp_pj_s; }
double Comparison::equal_energy_ratio() const {
  return equal_conventional.energy_pj_per_token / equal_cim.energy_pj_per_token;
}
std::optional<double> Comparison::iso_area_ratio() const {
  if (!iso_area_conventional_pj) return std::nullopt;
  return *iso_area_conventional_pj / best_cim.energy_pj_per_token;
}

std::string iso_area_why_not(const Placement& p) {
  const Figures f = figures(p);
  const HardwareSpec& hw = p.hw;
  if (hw.organization.weights != Home::cim || f.weights_onchip_fraction < 1.0)
    return "CIM holds " + fmt("%.1f", 100 * f.weights_onchip_fraction) + "% of the weights on chip";
  if (hw.organization.kv != Home::cim || f.offchip_tokens > 0 || f.evicted_tokens > 0)
    return "CIM does not hold the whole KV cache of the context on chip";
  const int64_t data = baseline_data_bytes(p.shape.config, hw, p.context, p.policy.sequences);
  const int64_t sram = iso_area_baseline(hw, p.kv.tiles).baseline.sram_bytes;
  if (sram < data)
    return "a conventional chip of the CIM chip's " + fmt("%.4g", cim_area(hw, p.kv.tiles).total_mm2()) +
           " mm2 holds " + fmt("%.4g", static_cast<double>(sram) / 1e6) + " MB of SRAM, less than the " +
           fmt("%.4g", static_cast<double>(data) / 1e6) + " MB of weights and KV CIM holds";
  return "";
}

Comparison compare(const Placement& p, std::optional<double> iso_area_pj) {
  Comparison c;
  c.context = p.context;
  c.sequences = p.policy.sequences;
  c.at = p.hw.comparison;
  c.idle_leaks = p.hw.idle_leaks;
  const double v0 = c.at.voltage_v;
  const TokenLedgers no_leak = without_leakage(p);
  const auto cim = [&p, &no_leak](double v) { return cim_working(p, no_leak, v); };
  const auto conv = [&p](double v) { return conventional_working(p, v); };
  const Working cim0 = cim(v0), conv0 = conv(v0);
  c.best_cim = point(cim0, v0, cim0.active_ns, c.sequences, "at its latency bound, never idle");
  c.best_conventional = point(conv0, v0, conv0.active_ns, c.sequences, "at its latency bound, never idle");
  const bool cim_slower = cim0.active_ns >= conv0.active_ns;
  c.equal_set_by = cim_slower ? "cim" : "conventional";
  const double target = std::max(cim0.active_ns, conv0.active_ns);
  if (cim_slower) {
    c.equal_cim = c.best_cim;
    c.equal_cim.how = "at its best (the slower side)";
    c.equal_conventional = slowed(conv, v0, target, c.sequences);
  } else {
    c.equal_conventional = c.best_conventional;
    c.equal_conventional.how = "at its best (the slower side)";
    c.equal_cim = slowed(cim, v0, target, c.sequences);
  }
  c.equal_tokens_per_s = cim_slower ? c.best_cim.tokens_per_s : c.best_conventional.tokens_per_s;
  c.iso_area_why_not = iso_area_why_not(p);
  if (c.iso_area_why_not.empty()) {
    if (!iso_area_pj) {
      try {
        iso_area_pj = baseline_figures(p.shape, iso_area_baseline(p.hw, p.kv.tiles), p.context, c.sequences).energy_pj;
      } catch (const Error&) {  // beyond the ledger's range (chip.hpp)
        c.iso_area_why_not = "the conventional chip of the CIM chip's area leaks beyond the ledger's range";
      }
    }
    if (c.iso_area_why_not.empty()) c.iso_area_conventional_pj = iso_area_pj;
  }
  return c;
}

namespace {

json side_json(const SidePoint& s) {
  return {{"voltage_v", s.voltage_v},
          {"active_ns", s.active_ns},
          {"step_ns", s.step_ns},
          {"tokens_per_s", s.tokens_per_s},
          {"energy_pj_per_token", s.energy_pj_per_token},
          {"idle_pj_per_token", s.idle_pj_per_token},
          {"edp_pj_s", s.edp_pj_s},
          {"how", s.how}};
}

SidePoint side_from_json(const json& j) {
  SidePoint s;
  s.voltage_v = j.at("voltage_v").get<double>();
  s.active_ns = j.at("active_ns").get<double>();
  s.step_ns = j.at("step_ns").get<double>();
  s.tokens_per_s = j.at("tokens_per_s").get<double>();
  s.energy_pj_per_token = j.at("energy_pj_per_token").get<double>();
  s.idle_pj_per_token = j.at("idle_pj_per_token").get<double>();
  s.edp_pj_s = j.at("edp_pj_s").get<double>();
  s.how = j.at("how").get<std::string>();
  return s;
}

}  // namespace

Comparison comparison_from_json(const json& j) {
  try {
    Comparison c;
    const json& cond = j.at("conditions");
    c.context = cond.at("context").get<int64_t>();
    c.sequences = cond.at("sequences").get<int64_t>();
    c.at = {cond.at("node_nm").get<double>(), cond.at("voltage_v").get<double>()};
    c.idle_leaks = cond.at("idle").get<std::string>() == "leaking";
    c.best_cim = side_from_json(j.at("best").at("cim"));
    c.best_conventional = side_from_json(j.at("best").at("conventional"));
    const json& eq = j.at("equal_throughput");
    c.equal_tokens_per_s = eq.at("tokens_per_s").get<double>();
    c.equal_set_by = eq.at("set_by").get<std::string>();
    c.equal_cim = side_from_json(eq.at("cim"));
    c.equal_conventional = side_from_json(eq.at("conventional"));
    const json& iso = j.at("iso_area");
    if (iso.at("compared").get<bool>())
      c.iso_area_conventional_pj = iso.at("conventional_pj_per_token").get<double>();
    else
      c.iso_area_why_not = iso.at("why_not").get<std::string>();
    return c;
  } catch (const json::exception& e) {
    fail("report", "comparison", "(as read)", e.what());
  }
}

json to_json(const Comparison& c) {
  json iso = {{"compared", c.iso_area_conventional_pj.has_value()}};
  if (c.iso_area_conventional_pj) {
    iso["conventional_pj_per_token"] = *c.iso_area_conventional_pj;
    iso["conventional_over_cim"] = *c.iso_area_ratio();
  } else {
    iso["conventional_pj_per_token"] = nullptr;
    iso["conventional_over_cim"] = nullptr;
    iso["why_not"] = c.iso_area_why_not;
  }
  return {{"conditions",
           {{"context", c.context},
            {"sequences", c.sequences},
            {"node_nm", c.at.node_nm},
            {"voltage_v", c.at.voltage_v},
            {"idle", c.idle_leaks ? "leaking" : "gated"},
            {"edp", "energy per token (pJ) x step time (s): the time a sequence waits for its next token"},
            {"equal_throughput",
             "the slower side at its best; the faster at its lowest energy for that tokens/s: supply lowered "
             "(node-scaling fits) down to " + fmt("%.0f", 100 * kMinSupplyFraction) +
                 "% of the comparison supply, idle for the rest of each step (cells holding data leak, "
                 "other silicon by the idle rule); the batch is the workload's on both sides"}}},
          {"best", {{"cim", side_json(c.best_cim)},
                    {"conventional", side_json(c.best_conventional)},
                    {"conventional_over_cim", c.best_energy_ratio()},
                    {"edp_conventional_over_cim", c.best_edp_ratio()}}},
          {"equal_throughput", {{"tokens_per_s", c.equal_tokens_per_s},
                                {"set_by", c.equal_set_by},
                                {"cim", side_json(c.equal_cim)},
                                {"conventional", side_json(c.equal_conventional)},
                                {"conventional_over_cim", c.equal_energy_ratio()}}},
          {"iso_area", iso}};
}

std::vector<std::string> comparison_lines(const Comparison& c) {
  std::vector<std::string> out;
  std::ostringstream head;
  head << "CIM against conventional, " << c.sequences << (c.sequences == 1 ? " sequence" : " sequences")
       << " at context " << c.context << ", both at " << fmt("%g nm", c.at.node_nm) << " " << fmt("%.2f V", c.at.voltage_v)
       << ", idle " << (c.idle_leaks ? "leaking" : "gated");
  out.push_back(head.str());
  auto side = [](const char* name, const SidePoint& s) {
    return std::string("    ") + name + fmt(" %.4g pJ/token", s.energy_pj_per_token) + fmt(" at %.4g tokens/s", s.tokens_per_s) +
           fmt(", step %.4g ns", s.step_ns) + fmt(", EDP %.4g pJ*s", s.edp_pj_s) + fmt(", %.2f V", s.voltage_v) +
           (s.idle_pj_per_token > 0 ? fmt(" (idle %.4g pJ/token)", s.idle_pj_per_token) : std::string());
  };
  out.push_back("  each at its best throughput: conventional / CIM energy " + fmt("%.2fx", c.best_energy_ratio()) +
                ", EDP " + fmt("%.3gx", c.best_edp_ratio()));
  out.push_back(side("CIM         ", c.best_cim));
  out.push_back(side("conventional", c.best_conventional));
  out.push_back("  at equal throughput (" + fmt("%.4g", c.equal_tokens_per_s) + " tokens/s, the " +
                (c.equal_set_by == "cim" ? "CIM chip's" : "conventional engine's") + " best): conventional / CIM energy " +
                fmt("%.2fx", c.equal_energy_ratio()));
  out.push_back(side("CIM         ", c.equal_cim));
  out.push_back(side("conventional", c.equal_conventional));
  out.push_back("    the faster side: " + (c.equal_set_by == "cim" ? c.equal_conventional.how : c.equal_cim.how));
  if (c.iso_area_conventional_pj)
    out.push_back("  iso-area (both chips hold the same data): conventional / CIM " + fmt("%.2fx", *c.iso_area_ratio()));
  else
    out.push_back("  iso-area: not compared, the chips hold different data (" + c.iso_area_why_not + ")");
  return out;
}

std::string headline_markdown(const ModelShape& shape, const HardwareSpec& hw, const std::vector<int64_t>& batches,
                              const std::vector<int64_t>& contexts) {
  if (batches.empty() || contexts.empty()) fail("compare", "batches", "(none)", "expected at least one batch and one context");
  std::ostringstream o;
  o << "| batch |";
  for (int64_t ctx : contexts) o << " context " << ctx << " |";
  o << "\n| --- |";
  for (size_t i = 0; i < contexts.size(); ++i) o << " --- |";
  o << "\n";
  for (int64_t b : batches) {
    o << "| " << b << " |";
    for (int64_t ctx : contexts) {
      Policy policy;
      policy.sequences = static_cast<int>(b);
      const MapResult m = map_job({.shape = shape, .hw = hw, .policy_text = "", .policy = policy,
                                   .context = ctx, .fit = true, .area_mm2 = std::nullopt});
      const Comparison c = compare(m.placement);
      o << " best: " << fmt("%.2fx", c.best_energy_ratio()) << " energy, EDP " << fmt("%.3gx", c.best_edp_ratio())
        << " (CIM " << fmt("%.3g", c.best_cim.tokens_per_s) << ", conv. " << fmt("%.3g", c.best_conventional.tokens_per_s)
        << " tokens/s); equal " << fmt("%.3g", c.equal_tokens_per_s) << " tokens/s: "
        << fmt("%.2fx", c.equal_energy_ratio()) << "; iso-area: "
        << (c.iso_area_ratio() ? fmt("%.2fx", *c.iso_area_ratio()) : std::string("not compared")) << "; CIM chip "
        << fmt("%.3g", cim_area(m.placement.hw, m.placement.kv.tiles).total_mm2()) << " mm2 |";
    }
    o << "\n";
  }
  const Policy one;
  const MapResult first = map_job({.shape = shape, .hw = hw, .policy_text = "", .policy = one,
                                   .context = contexts.front(), .fit = true, .area_mm2 = std::nullopt});
  const EnergyConditions cond = energy_conditions(first.placement.hw, first.placement.kv.tiles);
  o << "\n" << shape.name << " on " << hw.name << ", the CIM chip sized for each cell"
    << " (weights and the KV cache of context x batch); conventional / CIM, per token, one decode step of the batch"
    << " with every sequence at the context; both at " << fmt("%g nm", cond.at.node_nm) << " "
    << fmt("%.2f V", cond.at.voltage_v) << "; conventional: " << (hw.baseline.mac == energy::MacType::int8 ? "int8" : "fp16")
    << " MACs, " << fmt("%.4g", static_cast<double>(hw.baseline.sram_bytes) / (1 << 20)) << " MiB SRAM (the spec's; what it "
    << "cannot hold comes from off-chip) in " << hw.baseline.sram_bank_bytes / 1024 << " KiB banks; included: ";
  const char* sep = "";
  for (const std::string& i : cond.included) {
    o << sep << i;
    sep = ", ";
  }
  o << "; idle silicon " << (hw.idle_leaks ? "leaking" : "gated") << " on both sides. EDP: energy per token x step time."
    << " Equal tokens/s: the slower side's best, the faster side's supply lowered (down to "
    << fmt("%.0f", 100 * kMinSupplyFraction) << "% of the comparison supply) and idle for the rest of each step."
    << " Iso-area only where the conventional chip of the CIM chip's area holds the same weights and KV.\n";
  return o.str();
}

}  // namespace kvcim::mapper
