// kvcim macro: the component model of one macro operation (cmodel/macro_model) against the
// published macros of configs/macros/ (docs/calibration.md): the fit set within its target, the
// held-out errors equal to the uncertainty the model states, one operation computed by hand term
// by term, the operating-point laws, and every bad spec refused with one line naming the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "error_of.hpp"
#include "kvcim/cmodel/energy/scaling.hpp"
#include "kvcim/mapper/macro_pricing.hpp"
#include "spec_text.hpp"

using namespace kvcim;
using namespace kvcim::mapper;
namespace mm = kvcim::cmodel::macro_model;
using kvcim::test::error_of;

namespace {

const std::string kSrc = KVCIM_SOURCE_DIR;
const std::string kMacros = kSrc + "/configs/macros/";

const mm::Constants& constants() {
  static const mm::Constants k = mm::load_constants(kSrc + "/configs/macro_model.yaml");
  return k;
}

// A shipped macro file (configs/macros/) priced at its published operating point.
mm::MacroResult priced(const std::string& name) {
  return price_macro(load_macro_file(kMacros + name), constants()).result;
}

std::vector<std::string> macro_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(kMacros))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

const mm::Component& part(const mm::MacroResult& r, const std::string& name) {
  for (const auto& c : r.parts)
    if (c.name == name) return c;
  ADD_FAILURE() << "no component " << name;
  return r.parts.front();
}

// The components priced by hand, to 1e-9: exactly these parts, and the total is their sum.
void expect_parts_pj(const mm::MacroResult& r, const std::vector<std::pair<std::string, double>>& want) {
  double total = 0;
  for (const auto& [name, pj] : want) {
    EXPECT_NEAR(part(r, name).energy_pj, pj, 1e-9 * pj) << name;
    total += pj;
  }
  EXPECT_EQ(r.parts.size(), want.size());
  EXPECT_NEAR(r.energy_pj, total, 1e-9 * total);
}

std::string spec_text(const std::string& file) {
  std::ifstream in(kMacros + file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using kvcim::test::replaced;

}  // namespace

namespace {

// The fit's objective: the sum over the fit set's equations (each published share of a breakdown,
// or the whole published scope) of (model / published - 1)^2, as scripts/fit_macro_model.py forms it.
double fit_objective(const mm::Constants& k) {
  double sum = 0;
  for (const auto& f : macro_files()) {
    const MacroFile m = load_macro_file(f);
    if (m.published.role != mm::Role::fit) continue;
    const MacroPrice p = price_macro(m, k);
    const double total = 2 * p.result.macs / m.published.tops_per_w;
    auto group = [&](unsigned mask, double share) {
      double e = 0;
      for (int c = 0; c < 4; ++c)
        if (mask & (1u << c)) e += p.result.category_pj(c);
      sum += std::pow(e / (share * total) - 1, 2);
    };
    if (m.published.breakdown.empty()) {
      unsigned scope = 0;
      for (int c = 0; c < 4; ++c)
        if (!m.published.excluded[static_cast<size_t>(c)]) scope |= 1u << c;
      group(scope, 1.0);
    }
    for (const auto& sh : m.published.breakdown) group(sh.mask, sh.share);
  }
  return sum;
}

}  // namespace

// The shipped constants are the least-squares fit on the fit set: moving any fitted constant by
// 1% either way makes the fit worse. (The fit set does not meet +-10% on every macro, so the test
// holds the constants to being the fit, not the errors to a target; docs/calibration.md.)
TEST(MacroModel, ShippedConstantsAreTheFit) {
  const mm::Constants& k = constants();
  const double best = fit_objective(k);
  int fitted = 0;
  for_each_spec_field<mm::MacroConstants>([&](const auto& row) {
    if (!mm::fitted_constant(row.key)) return;
    ++fitted;
    for (double f : {0.99, 1.01}) {
      mm::Constants moved = k;
      moved.*row.member = k.*row.member * f;
      EXPECT_GT(fit_objective(moved), best) << row.key << " x " << f;
    }
  });
  EXPECT_EQ(fitted, 9);
}

// Where the fit meets its target: Jia at both published supplies (the voltage law) and TD-CIM.
TEST(MacroModel, FitMacrosWithinTenPercent) {
  for (const char* f : {"jia_jssc20.yaml", "jia_jssc20_1v2.yaml", "wei_tdcim_sscl25.yaml"}) {
    const MacroFile m = load_macro_file(kMacros + f);
    const MacroPrice p = price_macro(m, constants());
    EXPECT_LE(std::abs(p.tops_per_w_error), 0.10) << f << ": " << p.result.tops_per_w;
  }
}

// The uncertainty the model states (configs/macro_model.yaml, printed by kvcim macro) is the
// held-out error it reaches: the median and worst |TOPS/W error| over every held-out macro.
// The targets (median <= 20%, each within 35%) are not met (docs/calibration.md), so the
// test holds the statement to the truth rather than the model to a target it misses.
TEST(MacroModel, StatedUncertaintyIsTheHeldOutError) {
  std::vector<double> errs;
  for (const auto& f : macro_files()) {
    const MacroFile m = load_macro_file(f);
    if (m.published.role == mm::Role::held_out) errs.push_back(std::abs(price_macro(m, constants()).tops_per_w_error));
  }
  ASSERT_GE(errs.size(), 10u);
  const double worst = *std::max_element(errs.begin(), errs.end());
  std::sort(errs.begin(), errs.end());
  const size_t n = errs.size();
  const double median = n % 2 ? errs[n / 2] : (errs[n / 2 - 1] + errs[n / 2]) / 2;
  EXPECT_NEAR(constants().held_out_median_error, median, 1e-4);
  EXPECT_NEAR(constants().held_out_worst_error, worst, 1e-4);
  // More than half of the macros are held out: the fit cannot be one factor per point.
  EXPECT_GT(n, macro_files().size() - n);
}

// docs/calibration.md states what the model reaches: each macro's row of its table (predicted
// TOPS/W error, to the printed 0.1%), the held-out median and worst and the fit set's worst, and
// how many held-out macros fall within the +-35% target. A spec or constant that moves a figure
// without the docs moving with it fails here.
TEST(MacroModel, DocsStateTheErrorsTheModelReaches) {
  std::ifstream in(kSrc + "/docs/calibration.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), {});
  std::vector<double> held, fit;
  for (const auto& f : macro_files()) {
    const MacroFile m = load_macro_file(f);
    const double err = price_macro(m, constants()).tops_per_w_error;
    const bool is_fit = m.published.role == mm::Role::fit;
    (is_fit ? fit : held).push_back(std::abs(err));
    const std::regex row("\\| " + m.name + " \\| " + (is_fit ? "fit" : "held_out") +
                         " \\| [^|]+ \\| [^|]+ \\| ([+-][0-9.]+)% \\|");
    std::smatch hit;
    ASSERT_TRUE(std::regex_search(doc, hit, row)) << m.name << ": no row in docs/calibration.md";
    EXPECT_NEAR(std::stod(hit[1].str()), 100 * err, 0.051) << m.name;
  }
  std::sort(held.begin(), held.end());
  const size_t n = held.size();
  const double median = n % 2 ? held[n / 2] : (held[n / 2 - 1] + held[n / 2]) / 2;
  std::smatch s;
  ASSERT_TRUE(std::regex_search(doc, s, std::regex("held out: ([0-9]+) macros, median \\|error\\| ([0-9.]+)%, worst "
                                                   "([0-9.]+)%; fit set worst ([0-9.]+)%")));
  EXPECT_EQ(std::stoul(s[1].str()), n);
  EXPECT_NEAR(std::stod(s[2].str()), 100 * median, 0.051);
  EXPECT_NEAR(std::stod(s[3].str()), 100 * held.back(), 0.051);
  EXPECT_NEAR(std::stod(s[4].str()), 100 * *std::max_element(fit.begin(), fit.end()), 0.051);
  ASSERT_TRUE(std::regex_search(doc, s, std::regex("held out, ([0-9]+) of ([0-9]+)\\s+macros fall within ±35%")));
  EXPECT_EQ(std::stol(s[1].str()), std::count_if(held.begin(), held.end(), [](double e) { return e <= 0.35; }));
  EXPECT_EQ(std::stoul(s[2].str()), n);
}

// One operation of Yao ESSERC'24 by hand, every term from its spec and the constants.
TEST(MacroModel, HandComputationEqualsBreakdown) {
  const mm::Constants& k = constants();
  const mm::MacroResult r = priced("yao_esserc24.yaml");
  // 512 rows x 1024 cells (2 per weight: 512 outputs), 4b inputs in one cycle, 1024 products per
  // conversion -> 512 conversions on 64 converters = 8 slots; 28 nm = the reference node (s = 1).
  EXPECT_EQ(r.macs, 512.0 * 512);
  EXPECT_EQ(r.conversions, 512);
  EXPECT_EQ(r.cycles, 8);
  EXPECT_NEAR(r.latency_ns, 8 * 1e3 / 43.33, 1e-9);
  const double v2 = 0.9 * 0.9;
  const double array = 512.0 * 1024 * 1 * 0.5 * 0.5 * k.c_cell_reram_ff * v2 * 1e-3;
  const double wordlines = 512.0 * 1 * 0.5 * 1024 * k.c_wl_ff * v2 * 1e-3;
  const double dac = 512.0 * 8 * k.k_dac_ff * v2 * 1e-3;  // one row charge per row and slot, any level width
  const double conv = 512.0 * 256 * k.k_sar_clamped_ff * v2 * 1e-3;  // 2^8 steps
  // 512 additions of 8 bits, and each output's register once (one readout per output): 28 nm, 0.9 V is the
  // logic reference (factor 1)
  const double shift = 512.0 * 8 * (1 + k.r_dff) * 0.5 * k.e_fa_fj * 1e-3;
  expect_parts_pj(r, {{"array", array}, {"wordlines", wordlines}, {"dac", dac}, {"converters", conv},
                      {"shift_add", shift}});
  const double total = array + wordlines + dac + conv + shift;
  EXPECT_NEAR(r.tops_per_w, 2 * 512.0 * 512 / total, 1e-9 * r.tops_per_w);
}

// One operation of DIMC2 (digital) by hand: 512-input adder trees of 1-bit products.
TEST(MacroModel, HandComputationDigitalMacro) {
  const mm::Constants& k = constants();
  const mm::MacroResult r = priced("zz_dimc2_isscc22.yaml");
  // 512 rows x 64 cells (8 per weight: 8 outputs), 8 bit-serial input cycles: 64 x 8 = 512 tree sums.
  EXPECT_EQ(r.macs, 512.0 * 8);
  EXPECT_EQ(r.conversions, 512);
  // tree levels: 256 x 1 + 128 x 2 + 64 x 3 + 32 x 4 + 16 x 5 + 8 x 6 + 4 x 7 + 2 x 8 + 1 x 9 = 1013
  // full-adder bits, plus 512 AND gates at r_and each; 28 nm / 0.9 V is the logic reference (factor 1)
  const double trees = 512.0 * (1013 + 512 * k.r_and) * 0.5 * k.e_fa_fj * 1e-3;
  const double wordlines = 512.0 * 8 * 0.5 * 64 * k.c_wl_ff * 0.81 * 1e-3;
  // 512 tree sums added into their outputs (25-bit adders); the 8 columns of an output meet in
  // combinational adders, so its register is clocked once per input cycle: 8 outputs x 8 cycles
  const double shift = (512.0 * 25 + 8 * 8 * 25 * k.r_dff) * 0.5 * k.e_fa_fj * 1e-3;
  expect_parts_pj(r, {{"adder_trees", trees}, {"wordlines", wordlines}, {"shift_add", shift}});
}

// Operating point: switched capacitance and converters follow V^2; logic follows Stillmaker &
// Baas; input bits change the cycle count of a bit-serial macro.
TEST(MacroModel, OperatingPointLaws) {
  const MacroFile m = load_macro_file(kMacros + "jia_jssc20.yaml");
  const auto lo = price_macro(m, constants()).result;
  const MacroPrice hi = price_macro(m, constants(), {1.2, 0, 0});
  EXPECT_FALSE(hi.published_point);
  const double ratio = (1.2 / 0.85) * (1.2 / 0.85);
  EXPECT_NEAR(part(hi.result, "array").energy_pj / part(lo, "array").energy_pj, ratio, 1e-9);
  EXPECT_NEAR(part(hi.result, "converters").energy_pj / part(lo, "converters").energy_pj, ratio, 1e-9);
  const double logic = cmodel::energy::energy_factor({65, 0.85}, {65, 1.2});
  EXPECT_NEAR(part(hi.result, "shift_add").energy_pj / part(lo, "shift_add").energy_pj, logic, 1e-9);
  // The silicon at 1.2 V (jia_jssc20_1v2.yaml) publishes 192 TOPS/W: the sweep's slope is the fit's.
  const auto four = price_macro(m, constants(), {0, 0, 4}).result;
  EXPECT_EQ(four.input_cycles, 4);
  EXPECT_NEAR(four.energy_pj / lo.energy_pj, 4.0, 1e-9);  // every term per input cycle
}

// Yao ESSERC'24 publishes power against rows driven (128: 77.05 mW, 512: 111.43 mW, same
// calculation time): the model's slope in mW per row is within the target's +-25% (Li A-SSCC'25's is
// +36%, docs/calibration.md). Not a fitted quantity: the fit used the 512-row breakdown only.
TEST(MacroModel, YaoRowSweepSlope) {
  auto power_mw = [](int rows) {
    const MacroFile m = macro_file_from_text(
        replaced(spec_text("yao_esserc24.yaml"), "  rows: 512\n", "  rows: " + std::to_string(rows) + "\n"), "yao.yaml");
    const auto r = price_macro(m, constants()).result;
    return r.energy_pj / r.latency_ns;
  };
  const double model = (power_mw(512) - power_mw(128)) / 384, published = (111.43 - 77.05) / 384;
  EXPECT_LE(std::abs(model / published - 1), 0.25) << model << " vs " << published << " mW per row";
}

// Xue ISSCC'20 [C9] publishes its precision sweep: 121.3 TOPS/W binary, 28.9 at 4b x 4b. The
// model's ln(TOPS/W) step between the two specs (each held out) is within the target's +-25%.
TEST(MacroModel, PrecisionSweepSlope) {
  const double binary = priced("C9_binary.yaml").tops_per_w, four = priced("C9.yaml").tops_per_w;
  const double model = std::log(binary / four), published = std::log(121.3 / 28.9);
  EXPECT_LE(std::abs(model / published - 1), 0.25) << model << " vs " << published;
}

// Jia JSSC'20 at 0.85 V priced at 1.2 V: the TOPS/W slope against supply within +-25% of the
// published 400 -> 192 TOPS/W.
TEST(MacroModel, SupplySweepSlope) {
  const MacroFile m = load_macro_file(kMacros + "jia_jssc20.yaml");
  const double lo = price_macro(m, constants()).result.tops_per_w;
  const double hi = price_macro(m, constants(), {1.2, 0, 0}).result.tops_per_w;
  EXPECT_LE(std::abs((hi - lo) / (192.0 - 400.0) - 1), 0.25) << lo << " -> " << hi;
}

// Every published breakdown share (research/macro-data.md: Jia, Li, TD-CIM, Yao) within +-10
// points of the model's share of the published scope.
TEST(MacroModel, BreakdownSharesWithinTenPoints) {
  int shares = 0;
  for (const auto& f : macro_files()) {
    const MacroFile m = load_macro_file(f);
    const mm::MacroResult r = price_macro(m, constants()).result;
    for (const auto& sh : m.published.breakdown) {
      double e = 0;
      for (int c = 0; c < 4; ++c)
        if (sh.mask & (1u << c)) e += r.category_pj(c);
      EXPECT_LE(std::abs(e / r.compared_energy_pj - sh.share), 0.10) << m.name << " mask " << sh.mask;
      ++shares;
    }
  }
  EXPECT_GE(shares, 11);
}

// Weight bits merged in analog convert once per output; sliced weights once per bit column.
TEST(MacroModel, MergedWeightsConvertOncePerOutput) {
  const auto merged = priced("C9.yaml");
  EXPECT_EQ(merged.conversions, 64 * 4 * (256 / 16));  // outputs x input bits x row groups
  const MacroFile s = macro_file_from_text(
      replaced(replaced(spec_text("C9.yaml"), "weight_merge: analog", "weight_merge: digital"),
               "products_per_conversion: 64  # 16 rows x 4 weight cells", "products_per_conversion: 16"),
      "sliced.yaml");
  const auto sliced = price_macro(s, constants()).result;
  EXPECT_EQ(sliced.conversions, 4 * merged.conversions);
  EXPECT_GT(sliced.energy_pj, merged.energy_pj);
}

// No converter is priced below the survey's front.
TEST(MacroModel, ConverterNeverBelowSurveyFloor) {
  const MacroFile m = macro_file_from_text(
      replaced(replaced(spec_text("li_asscc25.yaml"), "adc_bits: 9", "adc_bits: 14"), "output_bits: 9",
               "output_bits: 14"),
      "fourteen.yaml");
  const auto r = price_macro(m, constants()).result;
  const auto& c = part(r, "converters");
  EXPECT_TRUE(c.constant.empty()) << "a 14b converter at " << r.conversion_rate_mhz << " MS/s is at the floor";
  // Walden 0.35 fJ/step x 2^14 bounds it from below (Schreier's front lies above at this rate).
  EXPECT_GE(c.energy_pj / r.conversions, 0.35e-3 * 16384 - 1e-9);
}

// A user's own macro, in a folder of its own with its own citation, is priced.
TEST(MacroModel, UsersOwnMacro) {
  const auto dir = std::filesystem::temp_directory_path() / "kvcim_user_macro";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "mine.yaml").string();
  std::ofstream(path) << replaced(spec_text("jia_jssc20.yaml"), "role: fit", "role: held_out");
  const MacroFile m = load_macro_file(path);
  EXPECT_GT(price_macro(m, constants()).result.tops_per_w, 0);
  std::filesystem::remove_all(dir);
}

// Bad specs: one line naming the file, the field and what was expected.
TEST(MacroModel, BadSpecsNameTheField) {
  const std::string jia = spec_text("jia_jssc20.yaml");
  auto refused = [&](const std::string& text) { return error_of([&] { macro_file_from_text(text, "bad.yaml"); }); };
  const std::string missing = refused(replaced(jia, "  rows: 768                    # 4 row groups x 192\n", ""));
  EXPECT_NE(missing.find("bad.yaml"), std::string::npos) << missing;
  EXPECT_NE(missing.find("rows"), std::string::npos) << missing;
  EXPECT_NE(missing.find("required field is missing: rows of cells"), std::string::npos) << missing;
  EXPECT_NE(refused(replaced(jia, "readout: sar", "readout: flash")).find("readout"), std::string::npos);
  EXPECT_NE(refused(replaced(jia, "input_encoding: bit_serial", "input_encoding: thermometer")).find("input_encoding"),
            std::string::npos);
  const std::string vdd = refused(replaced(jia, "vdd_v: 0.85", "vdd_v: 0.5"));
  EXPECT_NE(vdd.find("vdd_v = 0.5"), std::string::npos) << vdd;
  EXPECT_NE(vdd.find("logic scaling"), std::string::npos) << vdd;
  EXPECT_NE(refused(replaced(jia, "    readout: 0.1558", "    readout+cache: 0.1558")).find("readout+cache"),
            std::string::npos);
  EXPECT_NE(refused(replaced(jia, "  tops_per_w: 400\n", "")).find("tops_per_w"), std::string::npos);
  const std::string whole = refused(replaced(jia, "rows: 768", "rows: 76.5"));
  EXPECT_NE(whole.find("bad.yaml:11: macro.rows = '76.5': expected an integer"), std::string::npos) << whole;
  EXPECT_NE(refused(replaced(jia, "readout: sar", "readout: adder_tree")).find("input_encoding"), std::string::npos);
  EXPECT_NE(refused("[1, 2]").find("bad.yaml"), std::string::npos);
  EXPECT_NE(error_of([] { load_macro_file(kMacros + "none.yaml"); }).find("none.yaml"), std::string::npos);
  // an operating point outside the logic range is refused too
  const MacroFile m = load_macro_file(kMacros + "jia_jssc20.yaml");
  EXPECT_NE(error_of([&] { price_macro(m, constants(), {1.6, 0, 0}); }).find("vdd_v = 1.6"), std::string::npos);
  EXPECT_NE(error_of([] { parse_sweep("0.6:0.5:0.1", "--vdd"); }).find("--vdd"), std::string::npos);
  EXPECT_NE(error_of([] { parse_sweep("x", "--input-bits"); }).find("--input-bits"), std::string::npos);
  EXPECT_EQ(parse_sweep("0.6:1.0:0.1", "--vdd").size(), 5u);
}

// Constants outside their plausible physical range are refused: a fit cannot hide there.
TEST(MacroModel, ConstantsOutsidePlausibleRangeRefused) {
  std::ifstream in(kSrc + "/configs/macro_model.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto at = text.find("  k_sar_ff: {value: ");
  ASSERT_NE(at, std::string::npos);
  const auto end = text.find(',', at);
  text.replace(at, end - at, "  k_sar_ff: {value: 500");
  const auto dir = std::filesystem::temp_directory_path() / "kvcim_constants_test";
  std::filesystem::create_directories(dir);
  std::ofstream((dir / "c.yaml").string()) << text;
  const std::string e = error_of([&] { mm::load_constants((dir / "c.yaml").string()); });
  EXPECT_NE(e.find("k_sar_ff.value = '500'"), std::string::npos) << e;
  std::filesystem::remove_all(dir);
}

// A chip whose macros a paper describes (macro.describes) pays for each macro event what the
// component model prices it at: the ADC conversion of sram_analog ([C7]'s SAR, 8 bits at 28 nm /
// 0.9 V) by hand, k_sar x 2^8 x V^2, not the class table's 0.24 pJ.
TEST(MacroModel, DescribedChipPricesEventsByComponents) {
  const HardwareSpec hw = load_hardware_spec(kSrc + "/configs/hw/sram_analog.yaml");
  ASSERT_TRUE(hw.described.has_value());
  EXPECT_EQ(hw.described->name, "c7_mix_acim_28nm");
  const auto c = hw.costs();
  const double adc_pj = static_cast<double>(c.energy(cmodel::energy::EventKind::adc_conversion)) * 1e-6;
  EXPECT_NEAR(adc_pj, constants().k_sar_ff * 256 * 0.81 * 1e-3, 2e-6);
  // a column read: 256 rows x input density 0.5 x c_cell_sram x (28/28) x 0.81 V^2
  const double read_pj = static_cast<double>(c.energy(cmodel::energy::EventKind::column_read)) * 1e-6;
  EXPECT_NEAR(read_pj, 256 * 0.5 * constants().c_cell_sram_ff * 0.81 * 1e-3, 2e-6);
  // reram_analog's macros are [C11], whose paper states a direct-current-free time-domain readout:
  // its cells are priced as time-domain cells (c_cell_time, not the current-read ReRAM constant)
  // and a row's input line as their delay-stage input (c_in_time), as evaluate() prices [C11]
  // itself; 32 rows per read, 256 columns, input density 0.5, 22 nm / 0.8 V
  const auto rc = load_hardware_spec(kSrc + "/configs/hw/reram_analog.yaml").costs();
  const double s22 = 22.0 / 28 * 0.64 * 1e-3;
  EXPECT_NEAR(static_cast<double>(rc.energy(cmodel::energy::EventKind::column_read)) * 1e-6,
              32 * 0.5 * constants().c_cell_time_ff * s22, 2e-6);
  EXPECT_NEAR(static_cast<double>(rc.energy(cmodel::energy::EventKind::row_activation)) * 1e-6,
              0.5 * 256 * constants().c_in_time_ff * s22, 2e-6);
  // the same spec without the reference keeps its table
  std::ifstream in(kSrc + "/configs/hw/sram_analog.yaml");
  const std::string text = replaced(std::string(std::istreambuf_iterator<char>(in), {}),
                                    "  describes: ../macros/C7.yaml", "  # (no describes)");
  const HardwareSpec table = hardware_spec_from_text(text, kSrc + "/configs/hw");
  EXPECT_FALSE(table.described.has_value());
  EXPECT_NE(table.costs().energy(cmodel::energy::EventKind::adc_conversion), c.energy(cmodel::energy::EventKind::adc_conversion));
  // a reference to no macro spec is refused naming the field
  const std::string bad = error_of([&] {
    hardware_spec_from_text(replaced(text, "  # (no describes)", "  describes: ../macros/none.yaml"),
                            kSrc + "/configs/hw");
  });
  EXPECT_NE(bad.find("describes"), std::string::npos) << bad;
  // a digital chip cannot be a converter macro
  const std::string kind = error_of([&] {
    hardware_spec_from_text(replaced(text, "  # (no describes)", "  describes: ../macros/C2.yaml"), kSrc + "/configs/hw");
  });
  EXPECT_NE(kind.find("macro.describes"), std::string::npos) << kind;
  // sram_digital's macros are [C2] at 5 nm / 0.7 V (the shipped spec keeps the class table fitted
  // to C2's published figure; described here): an adder-tree addition of its 256-input trees of
  // 1-bit products costs the tree's mean full-adder bits per addition x input density x e_fa
  std::ifstream din(kSrc + "/configs/hw/sram_digital.yaml");
  const HardwareSpec dig = hardware_spec_from_text(
      replaced(std::string(std::istreambuf_iterator<char>(din), {}), "  kind: digital\n",
               "  kind: digital\n  describes: ../macros/C2.yaml\n"),
      kSrc + "/configs/hw");
  ASSERT_TRUE(dig.described.has_value());
  const double add_pj = static_cast<double>(dig.costs().energy(cmodel::energy::EventKind::adder_op)) * 1e-6;
  const double e_fa = constants().e_fa_fj * mm::logic_factor(5, 0.7) * 1e-3;
  EXPECT_NEAR(add_pj, mm::adder_tree_fa_bits(256, 1) / 255 * 0.5 * e_fa, 2e-6);
  EXPECT_EQ(dig.costs().energy(cmodel::energy::EventKind::adc_conversion), 0);
}

// The band kvcim run / kvcim map print: the held-out median error on the macros' part (array,
// ADC, DAC) of the CIM energy, the rest unbanded; the described macro's own error beside it.
TEST(MacroModel, EnergyBandCoversTheMacrosPart) {
  cmodel::energy::Breakdown b;
  b.component_energy_aj[static_cast<int>(cmodel::energy::Component::array)] = 300;
  b.component_energy_aj[static_cast<int>(cmodel::energy::Component::adc)] = 100;
  b.component_energy_aj[static_cast<int>(cmodel::energy::Component::dac)] = 100;
  b.component_energy_aj[static_cast<int>(cmodel::energy::Component::digital)] = 500;
  b.energy_aj = 1000;
  const EnergyBand band = macro_energy_band(b, 20.0, 0.4);
  EXPECT_DOUBLE_EQ(band.macro_pj, 10.0);
  EXPECT_DOUBLE_EQ(band.half_width_pj(), 4.0);
  const nlohmann::json j = to_json(band);
  EXPECT_DOUBLE_EQ(j["low_pj"].get<double>(), 16.0);
  EXPECT_DOUBLE_EQ(j["high_pj"].get<double>(), 24.0);
  EXPECT_NE(band_text(band).find("+- 20%"), std::string::npos) << band_text(band);
  const HardwareSpec hw = load_hardware_spec(kSrc + "/configs/hw/reram_analog.yaml");
  const EnergyBand described = macro_energy_band(b, 20.0, hw);
  EXPECT_EQ(described.median_error, constants().held_out_median_error);
  ASSERT_TRUE(described.described_error.has_value());
  EXPECT_NEAR(*described.described_error, price_macro(*hw.described, constants()).tops_per_w_error, 1e-12);
  EXPECT_NE(band_text(described).find("c11_reram_22nm_8b"), std::string::npos) << band_text(described);
}

// A cell's capacitance (and a wordline's across the cells) is carried from 28 nm by the cell's
// linear size: an SRAM cell's from the published per-node SRAM density (at 5 nm 0.41 of 28 nm's,
// where the node's name would say 0.18), a ReRAM cell's, with no per-node table, as node / 28.
TEST(MacroModel, CellsScaleByTheirPublishedSize) {
  const mm::Constants& k = constants();
  const MacroFile c2 = load_macro_file(kMacros + "C2.yaml");
  const mm::MacroResult r = price_macro(c2, k).result;
  // 256 rows x 4 bit-serial input cycles x input density 0.5, each line across 256 cells
  const double size5 = std::sqrt(5.260 / 31.8);  // 28 nm and 5 nm macros: 5.260 and 31.8 Mb/mm^2
  EXPECT_NEAR(size5, 0.4067, 1e-4);
  EXPECT_NEAR(part(r, "wordlines").energy_pj, 512.0 * 256 * k.c_wl_ff * size5 * 0.7 * 0.7 * 1e-3, 1e-9);
  const MacroFile c9 = load_macro_file(kMacros + "C9.yaml");
  const mm::MacroResult q = price_macro(c9, k).result;
  EXPECT_NEAR(part(q, "array").energy_pj,
              256.0 * 256 * 4 * 0.5 * 0.5 * k.c_cell_reram_ff * (22.0 / 28) * 0.8 * 0.8 * 1e-3, 1e-9);
}

// ZigZag-IMC's validation set gives each chip a toggle rate and weight sparsity of its own choosing
// (research/macro-data.md section 3, column "Toggle / weight-sparsity assumed"; its scripts mark
// each "# assumption"), not the measurement's: no ZigZag chip is priced at them. Each is priced at
// the 0.5 densities every macro whose paper states none gets, and its array term counts them:
// AIMC1 (1024 x 1024 cells, one 7b DAC cycle) at 0.5, not ZigZag's 100% toggle.
TEST(MacroModel, ZigZagChipsNotPricedAtZigZagsAssumedStatistics) {
  int zigzag = 0;
  for (const auto& f : macro_files()) {
    const MacroFile m = load_macro_file(f);
    if (m.published.source.find("ZigZag-IMC") == std::string::npos) continue;
    ++zigzag;
    EXPECT_EQ(m.desc.input_density, 0.5) << f;
    EXPECT_EQ(m.desc.weight_density, 0.5) << f;
  }
  EXPECT_EQ(zigzag, 7);
  const mm::Constants& k = constants();
  const mm::MacroResult r = priced("zz_aimc1_cicc21.yaml");
  const double size22 = mm::cell_scale(load_macro_file(kMacros + "zz_aimc1_cicc21.yaml").desc);
  EXPECT_NEAR(part(r, "array").energy_pj, 1024.0 * 1024 * 0.5 * k.c_cell_sram_ff * size22 * 0.8 * 0.8 * 1e-3, 1e-9);
}
