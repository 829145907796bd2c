#include "kvcim/mapper/macro_pricing.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "kvcim/error.hpp"
#include "kvcim/spec_fields_json.hpp"

namespace kvcim::mapper {

namespace mm = cmodel::macro_model;

namespace {

std::string fmt(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string pct(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * e);
  return buf;
}

unsigned excluded_mask(const mm::Published& pb) {
  unsigned mask = 0;
  for (size_t i = 0; i < pb.excluded.size(); ++i)
    if (pb.excluded[i]) mask |= 1u << i;
  return mask;
}

}  // namespace

MacroPrice price_macro(const MacroFile& m, const mm::Constants& k, const mm::OperatingPoint& point) {
  MacroPrice p;
  p.desc = mm::at_point(m.desc, point, m.source_file);
  p.published_point = p.desc.vdd_v == m.desc.vdd_v && p.desc.input_bits == m.desc.input_bits;
  p.result = mm::evaluate(p.desc, k, excluded_mask(m.published));
  if (p.published_point) {
    const mm::Published& pb = m.published;
    p.tops_per_w_error = p.result.tops_per_w / pb.tops_per_w - 1;
    if (pb.tops_per_mm2) p.tops_per_mm2_error = p.result.tops_per_mm2 / *pb.tops_per_mm2 - 1;
    if (pb.gops) p.gops_error = p.result.gops / *pb.gops - 1;
    if (pb.area_mm2) p.area_error = p.result.area_mm2 / *pb.area_mm2 - 1;
  }
  return p;
}

std::vector<double> parse_sweep(const std::string& text, const std::string& flag) {
  auto number = [&](const std::string& t) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != t.size() || !std::isfinite(v))
      fail(flag, flag, "'" + text + "'", "a number, a list a,b,c or a range lo:hi:step");
    return v;
  };
  std::vector<double> out;
  if (text.find(':') != std::string::npos) {
    std::stringstream ss(text);
    std::string a, b, c;
    std::getline(ss, a, ':');
    std::getline(ss, b, ':');
    std::getline(ss, c);
    const double lo = number(a), hi = number(b), step = number(c);
    if (!(step > 0) || hi < lo || (hi - lo) / step > 1000)
      fail(flag, flag, "'" + text + "'", "lo:hi:step with lo <= hi, step > 0 and at most 1000 points");
    for (int i = 0; lo + i * step <= hi + step * 1e-6; ++i) out.push_back(lo + i * step);
  } else {
    std::stringstream ss(text);
    for (std::string t; std::getline(ss, t, ',');) out.push_back(number(t));
  }
  if (out.empty()) fail(flag, flag, "''", "a number, a list a,b,c or a range lo:hi:step");
  return out;
}

std::string macro_summary(const MacroFile& m, const std::vector<MacroPrice>& points, const mm::Constants& k) {
  const mm::Published& pb = m.published;
  const mm::MacroDesc& d = m.desc;
  std::ostringstream o;
  o << "macro " << m.name << " (" << (pb.role == mm::Role::fit ? "fit set" : "held out") << ")\n";
  o << "  source: " << pb.source << "\n";
  o << "  as described: " << fmt(d.node_nm) << " nm, " << fmt(d.rows) << " x " << fmt(d.cols) << " "
    << mm::kCellChoices[static_cast<size_t>(d.cell)] << " cells (" << fmt(d.cell_bits) << " b/cell, "
    << fmt(d.cells_per_weight) << " per weight), inputs " << mm::kEncodingChoices[static_cast<size_t>(d.input_encoding)]
    << " " << fmt(d.input_bits_per_cycle) << " b/cycle, weights " << fmt(d.weight_bits) << " b merged "
    << mm::kMergeChoices[static_cast<size_t>(d.weight_merge)] << ", " << fmt(d.products_per_conversion)
    << " products per readout, " << fmt(d.readout_count) << " x " << mm::kReadoutChoices[static_cast<size_t>(d.readout)];
  if (d.adc_bits > 0) o << " " << fmt(d.adc_bits) << " b";
  o << ", " << fmt(d.output_bits) << " b outputs, " << fmt(d.clock_mhz) << " MHz; data density in "
    << fmt(d.input_density, 3) << " / w " << fmt(d.weight_density, 3) << "\n";
  if (!pb.precision_note.empty()) o << "  published conditions: " << pb.precision_note << "\n";
  o << "  model uncertainty: held-out median |TOPS/W error| " << fmt(100 * k.held_out_median_error, 3)
    << "%, worst " << fmt(100 * k.held_out_worst_error, 3) << "% (docs/calibration.md)\n";
  o << "  one operation = all rows x all outputs for one input vector; leakage reported apart, not in TOPS/W\n";
  for (const MacroPrice& p : points) {
    const mm::MacroResult& r = p.result;
    o << "\n  at " << fmt(p.desc.vdd_v, 3) << " V (array " << fmt(p.desc.array_vdd_v, 3) << " V), "
      << fmt(p.desc.input_bits) << "b inputs x " << fmt(p.desc.weight_bits) << "b weights"
      << (p.published_point ? " (published point)" : " (not a published point: no error)") << "\n";
    o << "    MACs " << fmt(r.macs, 8) << ", " << fmt(r.conversions, 8) << " readouts, " << fmt(r.cycles, 6)
      << " cycles, latency " << fmt(r.latency_ns, 5) << " ns, energy " << fmt(r.energy_pj, 6) << " pJ";
    if (r.compared_energy_pj != r.energy_pj) o << " (" << fmt(r.compared_energy_pj, 6) << " pJ in the published scope)";
    o << ", leakage " << fmt(r.leakage_pj, 4) << " pJ\n";
    // The stated uncertainty is the held-out TOPS/W error: it goes beside the energy figures only.
    auto line = [&](const char* name, double v, std::optional<double> pubv, std::optional<double> err,
                    bool energy = false) {
      o << "    " << name << fmt(v);
      if (p.published_point && pubv) o << "   published " << fmt(*pubv) << "   error " << pct(*err);
      else if (p.published_point) o << "   (not published)";
      if (energy) o << "   +-" << fmt(100 * k.held_out_median_error, 2) << "% (model)";
      o << "\n";
    };
    line("fJ/MAC     ", r.fj_per_mac, 2000.0 / pb.tops_per_w, 1.0 / (1 + p.tops_per_w_error) - 1, true);
    line("TOPS/W     ", r.tops_per_w, pb.tops_per_w, p.tops_per_w_error, true);
    line("GOPS       ", r.gops, pb.gops, p.gops_error);
    line("TOPS/mm^2  ", r.tops_per_mm2, pb.tops_per_mm2, p.tops_per_mm2_error);
    line("area mm^2  ", r.area_mm2, pb.area_mm2, p.area_error);
    o << "    by component (energy pJ, share; area mm^2):\n";
    for (const mm::Component& c : r.parts)
      o << "      " << mm::kCategories[static_cast<size_t>(c.category)] << "/" << c.name << ": " << fmt(c.energy_pj, 6)
        << " pJ (" << fmt(100 * c.energy_pj / r.energy_pj, 3) << "%), " << fmt(c.area_mm2, 3) << " mm^2  [" << c.law
        << "]\n";
    if (p.published_point && !pb.breakdown.empty()) {
      o << "    published breakdown vs model (share of the published scope):";
      for (const auto& sh : pb.breakdown) {
        double e = 0;
        std::string name;
        for (size_t i = 0; i < mm::kCategories.size(); ++i)
          if (sh.mask & (1u << i)) {
            e += r.category_pj(static_cast<int>(i));
            if (!name.empty()) name += '+';
            name += mm::kCategories[i];
          }
        o << " " << name << " " << fmt(100 * sh.share, 3) << "% / " << fmt(100 * e / r.compared_energy_pj, 3) << "%";
      }
      o << "\n";
    }
  }
  return o.str();
}

nlohmann::json macro_to_json(const MacroFile& m, const std::vector<MacroPrice>& points, const mm::Constants& k) {
  const mm::Published& pb = m.published;
  // the file's scalar fields; breakdown and excludes as lists, always present
  nlohmann::json published = write_fields(pb);
  nlohmann::json breakdown = nlohmann::json::array(), excludes = nlohmann::json::array();
  for (const auto& sh : pb.breakdown) {
    nlohmann::json cats = nlohmann::json::array();
    for (size_t i = 0; i < mm::kCategories.size(); ++i)
      if (sh.mask & (1u << i)) cats.push_back(mm::kCategories[i]);
    breakdown.push_back({{"categories", cats}, {"share", sh.share}});
  }
  for (size_t i = 0; i < mm::kCategories.size(); ++i)
    if (pb.excluded[i]) excludes.push_back(mm::kCategories[i]);
  published["breakdown"] = breakdown;
  published["excludes"] = excludes;
  nlohmann::json pts = nlohmann::json::array();
  for (const MacroPrice& p : points) {
    const mm::MacroResult& r = p.result;
    nlohmann::json comps = nlohmann::json::array();
    for (const mm::Component& c : r.parts)
      comps.push_back({{"name", c.name},
                       {"category", mm::kCategories[static_cast<size_t>(c.category)]},
                       {"constant", c.constant},
                       {"energy_pj", c.energy_pj},
                       {"feature", c.feature},
                       {"area_mm2", c.area_mm2},
                       {"law", c.law}});
    nlohmann::json j = {{"vdd_v", p.desc.vdd_v},
                        {"array_vdd_v", p.desc.array_vdd_v},
                        {"input_bits", p.desc.input_bits},
                        {"published_point", p.published_point},
                        {"macs", r.macs},
                        {"readouts", r.conversions},
                        {"cycles", r.cycles},
                        {"conversion_rate_mhz", r.conversion_rate_mhz},
                        {"latency_ns", r.latency_ns},
                        {"energy_pj", r.energy_pj},
                        {"compared_energy_pj", r.compared_energy_pj},
                        {"leakage_pj", r.leakage_pj},
                        {"area_mm2", r.area_mm2},
                        {"fj_per_mac", r.fj_per_mac},
                        {"tops_per_w", r.tops_per_w},
                        {"gops", r.gops},
                        {"tops_per_mm2", r.tops_per_mm2},
                        {"components", comps}};
    if (p.published_point) {
      j["tops_per_w_error"] = p.tops_per_w_error;
      if (p.tops_per_mm2_error) j["tops_per_mm2_error"] = *p.tops_per_mm2_error;
      if (p.gops_error) j["gops_error"] = *p.gops_error;
      if (p.area_error) j["area_error"] = *p.area_error;
    }
    pts.push_back(j);
  }
  nlohmann::json constants = nlohmann::json::array();
  for_each_spec_field<mm::MacroConstants>([&](const auto& row) {
    // the file's text: a source as written, an assumption:-written one with its word
    const std::string& from = k.*row.provenance;
    constants.push_back({{"name", row.key}, {"value", k.*row.member}, {"unit", row.unit}, {"lo", row.lo}, {"hi", row.hi},
                         {"fitted", mm::fitted_constant(row.key)}, {"meaning", row.doc},
                         {"source", from.rfind("source: ", 0) == 0 ? from.substr(8) : from}});
  });
  return {{"macro", m.name},
          {"file", m.source_file},
          {"description", m.description},
          {"spec", mm::desc_to_json(m.desc)},
          {"published", published},
          {"uncertainty", {{"held_out_median_abs_error", k.held_out_median_error},
                           {"held_out_worst_abs_error", k.held_out_worst_error},
                           {"constants_file", k.file},
                           {"constants", constants}}},
          {"included", "one operation: all rows x all outputs for one input vector; leakage apart"},
          {"points", pts}};
}

EnergyBand macro_energy_band(const cmodel::energy::Breakdown& cim, double total_pj, double median_error) {
  using cmodel::energy::Component;
  double macro_aj = 0;
  for (Component c : {Component::array, Component::adc, Component::dac})
    macro_aj += static_cast<double>(cim.component_energy_aj[static_cast<int>(c)]);
  const double all = static_cast<double>(cim.energy_aj);
  EnergyBand b;
  b.median_error = median_error;
  b.total_pj = total_pj;
  b.macro_pj = all > 0 ? total_pj * macro_aj / all : 0.0;
  return b;
}

EnergyBand macro_energy_band(const cmodel::energy::Breakdown& cim, double total_pj) {
  return macro_energy_band(cim, total_pj, mm::shipped_constants().held_out_median_error);
}

EnergyBand macro_energy_band(const cmodel::energy::Breakdown& cim, double total_pj, const HardwareSpec& hw) {
  EnergyBand b = macro_energy_band(cim, total_pj);
  if (hw.described) {
    b.described = hw.described->name;
    b.described_error = price_macro(*hw.described, mm::shipped_constants()).tops_per_w_error;
  }
  return b;
}

nlohmann::json to_json(const EnergyBand& b) {
  return {{"macro_model_held_out_median_error", b.median_error},
          {"described_macro", b.described.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.described)},
          {"described_macro_tops_per_w_error", b.described_error ? nlohmann::json(*b.described_error) : nlohmann::json(nullptr)},
          {"macro_pj", b.macro_pj},
          {"total_pj", b.total_pj},
          {"low_pj", b.total_pj - b.half_width_pj()},
          {"high_pj", b.total_pj + b.half_width_pj()},
          {"applies_to", "the macros' and tiles' array, ADC and DAC energy (the component macro model's scope)"}};
}

std::string band_text(const EnergyBand& b) {
  const double rel = b.total_pj > 0 ? b.half_width_pj() / b.total_pj : 0.0;
  const double part = b.total_pj > 0 ? b.macro_pj / b.total_pj : 0.0;
  std::string t = "+- " + fmt(100 * rel, 3) + "% (the macros' " + fmt(100 * part, 3) + "% of it +- " +
                  fmt(100 * b.median_error, 3) + "%, the macro model's held-out median error";
  if (b.described_error)
    t += "; macros priced as " + b.described + ", whose published TOPS/W the model misses by " + pct(*b.described_error);
  else
    t += "; macros priced by the technology table's classes";
  return t + ")";
}

}  // namespace kvcim::mapper
