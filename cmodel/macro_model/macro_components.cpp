#include "kvcim/cmodel/macro_model/macro_components.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/cmodel/energy/read_fields.hpp"
#include "kvcim/cmodel/energy/scaling.hpp"
#include "kvcim/cmodel/energy/sram_nodes.hpp"
#include "kvcim/data_dir.hpp"
#include "kvcim/error.hpp"
#include "kvcim/spec_fields_json.hpp"

namespace kvcim::cmodel::macro_model {

namespace {

constexpr double kRefNode = 28.0;  // nm: the node the capacitances and e_fa are stated at
constexpr double kRefVdd = 0.9;    // V: the supply e_fa is stated at
constexpr double kLogicRange = 0.25;  // V: logic scaled only within nominal +- this (docs/calibration.md)

// CiMLoop's converter area fit: ln(um^2) = 4.85 + 0.0667 ln fs + 0.797 ln node - 0.134 N
// + 0.424 ln(E / pJ) (research/macro-data.md section 5).
double converter_area_um2(double bits, double fs_hz, double node_nm, double e_pj) {
  return std::exp(4.85 + 0.0667 * std::log(std::max(fs_hz, 1.0)) + 0.797 * std::log(node_nm) - 0.134 * bits +
                  0.424 * std::log(std::max(e_pj, 1e-6)));
}

const char* cell_constant(Cell c) {
  switch (c) {
    case Cell::sram: return "c_cell_sram_ff";
    case Cell::reram: return "c_cell_reram_ff";
    case Cell::time_delay: return "c_cell_time_ff";
  }
  return "";
}

const char* readout_constant(Readout r) {
  switch (r) {
    case Readout::sar: return "k_sar_ff";
    case Readout::sar_clamped: return "k_sar_clamped_ff";
    case Readout::tdc: return "k_tdc_ff";
    case Readout::adder_tree: return "e_fa_fj";
  }
  return "";
}

}  // namespace

// Converter survey front (CiMLoop's ADC plug-in, a Pareto front of the Murmann survey;
// research/macro-data.md section 5): Schreier FOM_S = min(302.74 - 6.4608 ln fs, 180.14) dB,
// E = 1 / (2 x 10^((FOM_S - SNDR) / 10)) J with SNDR = 6.02 N + 1.76. Below ~5 bits that front
// is unrealistically low; the best Walden FOM in the survey, 0.35 fJ per conversion step [A4],
// bounds it there. No converter is priced below the larger of the two.
double converter_floor_pj(double bits, double fs_hz) {
  const double fom = std::min(302.74 - 6.4608 * std::log(std::max(fs_hz, 1.0)), 180.14);
  const double sndr = 6.02 * bits + 1.76;
  const double schreier_j = 1.0 / (2.0 * std::pow(10.0, (fom - sndr) / 10.0));
  const double walden_j = 0.35e-15 * std::pow(2.0, bits);
  return std::max(schreier_j, walden_j) * 1e12;
}

// Full-adder bits of a tree summing `inputs` values of `bits` bits: level l adds pairs of
// (bits + l - 1)-bit values into (bits + l)-bit ones.
double adder_tree_fa_bits(double inputs, double bits) {
  double n = inputs, fa = 0;
  for (int l = 1; n > 1; ++l) {
    const double pairs = std::floor(n / 2);
    fa += pairs * (bits + l - 1);
    n = std::ceil(n / 2);
  }
  return fa;
}



double converter_pj(const MacroDesc& d, double bits, double fs_hz, const Constants& k) {
  return std::max(k.get(readout_constant(d.readout_kind())) * std::pow(2.0, bits) * d.vdd_v * d.vdd_v * 1e-3,
                  converter_floor_pj(bits, fs_hz));
}

double logic_factor(double node_nm, double vdd_v) {
  return energy::energy_factor(energy::NodePoint{kRefNode, kRefVdd}, energy::NodePoint{std::max(node_nm, 7.0), vdd_v});
}

double cell_scale(const MacroDesc& d) {
  if (d.cell_kind() == Cell::sram) return std::sqrt(energy::sram_area_factor(kRefNode, d.node_nm));
  return d.node_nm / kRefNode;
}

double MacroConstants::get(std::string_view name) const {
  double v = 0;
  for_each_spec_field<MacroConstants>([&](const auto& row) {
    if (name == row.key) v = this->*row.member;
  });
  return v;
}

void MacroConstants::set(std::string_view name, double value) {
  for_each_spec_field<MacroConstants>([&](const auto& row) {
    if (name == row.key) this->*row.member = value;
  });
}

namespace {

Constants constants_from_node(const YAML::Node& root, const std::string& where) {
  if (!root.IsMap()) fail(where, "file", "(not a mapping)", "constants: and the held-out errors");
  const energy::Section top(root, where, "");
  Constants k;
  k.file = where;
  energy::read_fields(top, k, {"constants"});
  if (!top.has("constants")) top.error("constants", "required: the component constants, each {value, source}");
  // The plausible range is the model's claim about physics: a fit that leaves it fails here.
  energy::read_fields(top.child("constants"), static_cast<MacroConstants&>(k));
  return k;
}

}  // namespace

Constants constants_from_text(const std::string& text, const std::string& where) {
  return constants_from_node(energy::yaml_from_text(text, where), where);
}

Constants constants_from_json(const nlohmann::json& j, const std::string& where) {
  return constants_from_node(energy::yaml_from_json_text(j.dump()), where);
}

Constants load_constants(const std::string& path) {
  return constants_from_node(energy::load_yaml_file(path, "macro-model constants"), path);
}

nlohmann::json constants_to_json(const Constants& k) {
  nlohmann::json j = write_fields(k);
  j["constants"] = write_fields(static_cast<const MacroConstants&>(k));
  return j;
}

const Constants& shipped_constants() {
  static const Constants k = load_constants(data_dir() + "/configs/macro_model.yaml");
  return k;
}

void check_logic_supply(double node_nm, double vdd_v, const std::string& where) {
  const double nominal = energy::nominal_voltage(node_nm);
  if (std::abs(vdd_v - nominal) > kLogicRange + 1e-9)
    fail(where, "vdd_v", show_number(vdd_v, 3),
         "within " + show_number(nominal - kLogicRange, 3) + " .. " + show_number(nominal + kLogicRange, 3) +
             " V (the logic scaling's range: " + show_number(nominal, 3) + " V nominal at " + show_number(node_nm) + " nm +- " +
             show_number(kLogicRange) + " V)");
}

OperatingPoint published_point(const MacroDesc& d) {
  return {d.vdd_v, d.array_vdd_v, static_cast<int>(d.input_bits)};
}

MacroDesc at_point(const MacroDesc& d, const OperatingPoint& p, const std::string& where) {
  MacroDesc out = d;
  if (p.vdd_v > 0) {
    // The array supply keeps its ratio to the logic supply (one regulator chain).
    out.array_vdd_v = p.array_vdd_v > 0 ? p.array_vdd_v : d.array_vdd_v * p.vdd_v / d.vdd_v;
    out.vdd_v = p.vdd_v;
    if (!(out.vdd_v >= 0.3 && out.vdd_v <= 1.8)) fail(where, "vdd_v", show_number(out.vdd_v, 3), "0.3 .. 1.8 V");
  }
  if (p.input_bits > 0) {
    if (p.input_bits > 16) fail(where, "input_bits", std::to_string(p.input_bits), "1 .. 16");
    out.input_bits = p.input_bits;
    out.input_bits_per_cycle = std::min(d.input_bits_per_cycle, out.input_bits);
  }
  check_logic_supply(out.node_nm, out.vdd_v, where);
  return out;
}

double MacroResult::category_pj(int c) const {
  double e = 0;
  for (const Component& p : parts)
    if (p.category == c) e += p.energy_pj;
  return e;
}

MacroResult evaluate(const MacroDesc& d, const Constants& k, unsigned excluded) {
  MacroResult r;
  const double node = d.node_nm, s = cell_scale(d), v = d.vdd_v, va = d.array_vdd_v;
  // Logic below 7 nm is held at 7 nm's polynomial, scaled by V^2: Stillmaker & Baas end at 7 nm and
  // the model takes no extrapolated gain.
  const double logic = logic_factor(node, v);
  const double area_logic = energy::area_factor(kRefNode, node);
  const double f_um = node * 1e-3;
  const bool digital = d.readout_kind() == Readout::adder_tree;
  const double a_in = d.input_density;
  const double bits_pc = d.input_bits_per_cycle;
  r.input_cycles = std::ceil(d.input_bits / bits_pc);
  r.outputs = std::floor(d.cols / d.cells_per_weight);
  const double cols_used = r.outputs * d.cells_per_weight;
  r.macs = d.rows * r.outputs;
  r.conversions = std::ceil(d.rows * cols_used * r.input_cycles / d.products_per_conversion);
  r.cycles = r.input_cycles * std::ceil(r.conversions / r.input_cycles / d.readout_count);
  r.latency_ns = r.cycles * 1e3 / d.clock_mhz;
  const double fs_hz = r.conversions / d.readout_count / (r.latency_ns * 1e-9);
  r.conversion_rate_mhz = fs_hz * 1e-6;
  auto add = [&](std::string name, int cat, std::string constant, double feature, double area_mm2,
                 std::string law) {
    const bool linear = !constant.empty();
    const double e = linear ? feature * k.get(constant) : feature;
    r.parts.push_back({std::move(name), cat, std::move(constant), e, linear ? feature : 0.0, area_mm2, std::move(law)});
  };
  const double cell_f2 = d.cell_area_f2 > 0 ? d.cell_area_f2
                         : d.cell_kind() == Cell::sram ? k.sram_cell_f2
                         : d.cell_kind() == Cell::reram ? k.reram_cell_f2
                                                        : k.time_cell_f2;
  const double cells_mm2 = d.rows * d.cols * cell_f2 * f_um * f_um * 1e-6;
  // array: cells that switch per input cycle (a cell of a resistive array conducts only when set)
  if (!digital) {
    const double a = a_in * (d.cell_kind() == Cell::reram ? d.weight_density : 1.0);
    const double n = d.rows * cols_used * r.input_cycles * a;
    add("array", 0, cell_constant(d.cell_kind()), n * s * va * va * 1e-3, cells_mm2,
        show_number(n) + " cell-cycles (rows x cols x input cycles x activity " + show_number(a, 3) + ") x c x cell size " + show_number(s, 4) +
            " of 28 nm's x " + show_number(va, 3) + " V^2");
  }
  // input: wordlines (or a digital macro's input lines) swing across the columns they cross
  const double drives = d.rows * r.input_cycles * a_in;
  add("wordlines", 1, d.cell_kind() == Cell::time_delay ? "c_in_time_ff" : "c_wl_ff", drives * cols_used * s * va * va * 1e-3, digital ? cells_mm2 : 0.0,
      show_number(drives) + " row drives x " + show_number(cols_used) + " cells x c_wl x cell size " + show_number(s, 4) + " of 28 nm's x " +
          show_number(va, 3) + " V^2");
  // A DAC holds its row for every conversion slot of the cycle (columns multiplexed onto
  // converters). Driving a row line to one of 2^b analog levels draws the line's charge, C x
  // V_level x V, from the supply whatever b is (the level's code width sets the DAC's reference
  // ladder, shared by the rows): one k_dac per row cycle, not one per input bit.
  const double row_cycles = d.rows * r.cycles;
  if (d.encoding() == Encoding::voltage_dac || d.encoding() == Encoding::c2c)
    add("dac", 1, "k_dac_ff", row_cycles * va * va * 1e-3, 0.0,
        show_number(row_cycles) + " row cycles (" + show_number(bits_pc) + "-bit levels) x k_dac x " + show_number(va, 3) + " V^2");
  if (d.encoding() == Encoding::pulse_width)
    add("pulse_counter", 1, "e_fa_fj", row_cycles * bits_pc * logic * 1e-3,
        d.rows * bits_pc * k.fa_area_um2 * area_logic * 1e-6,
        show_number(row_cycles) + " row cycles x " + show_number(bits_pc) + "-bit pulse counter x e_fa(" + show_number(node) + " nm, " +
            show_number(v, 3) + " V)");
  // readout
  if (digital) {
    const double per_tree = adder_tree_fa_bits(d.products_per_conversion, d.cell_bits + bits_pc - 1) +
                            k.r_and * d.products_per_conversion;
    const double fa = r.conversions * per_tree * a_in;
    add("adder_trees", 2, "e_fa_fj", fa * logic * 1e-3, d.readout_count * per_tree * k.fa_area_um2 * area_logic * 1e-6,
        show_number(r.conversions) + " tree sums x " + show_number(per_tree) + " full-adder bits (incl. products) x activity " +
            show_number(a_in, 3) + " x e_fa");
  } else {
    const char* c = readout_constant(d.readout_kind());
    // A converter's energy per conversion is k x 2^N x V^2: a capacitance per conversion step, the
    // Walden figure of merit's form (a SAR's binary-weighted capacitor array, a TDC's 2^N delay
    // steps), so one constant carries a converter across resolutions.
    const double feature = r.conversions * std::pow(2.0, d.adc_bits) * v * v * 1e-3;
    const double floor_pj = r.conversions * converter_floor_pj(d.adc_bits, fs_hz);
    const double e_conv = feature * k.get(c) / r.conversions;
    const double area = d.readout_count * converter_area_um2(d.adc_bits, fs_hz, node, e_conv) * 1e-6;
    const std::string law = show_number(r.conversions) + " conversions x 2^" + show_number(d.adc_bits) + " steps x k x " + show_number(v, 3) +
                            " V^2 at " + show_number(r.conversion_rate_mhz) + " MS/s";
    if (feature * k.get(c) >= floor_pj) add("converters", 2, c, feature, area, law);
    else add("converters", 2, "", floor_pj, area, law + ", raised to the survey floor " + show_number(floor_pj / r.conversions) + " pJ");
  }
  // digital: every conversion or tree sum is added into its output (the shift by its weight or
  // row-group significance is wiring); the partial sums of one output in one input cycle meet in
  // combinational adders, and only the output's accumulator register is clocked, once per output
  // and input cycle (never more often than there are readouts).
  const double adds = r.conversions * d.output_bits * 0.5;
  const double regs = std::min(r.outputs * r.input_cycles, r.conversions) * d.output_bits * k.r_dff * 0.5;
  add("shift_add", 3, "e_fa_fj", (adds + regs) * logic * 1e-3,
      d.readout_count * d.output_bits * (1 + k.r_dff) * k.fa_area_um2 * area_logic * 1e-6,
      show_number(r.conversions) + " additions x " + show_number(d.output_bits) + " bits + " +
          show_number(std::min(r.outputs * r.input_cycles, r.conversions)) + " output register updates x " +
          show_number(d.output_bits) + " bits x r_dff, toggle 0.5 x e_fa");
  for (const Component& p : r.parts) {
    r.energy_pj += p.energy_pj;
    if (!(excluded & (1u << p.category))) r.compared_energy_pj += p.energy_pj;
    r.area_mm2 += p.area_mm2;
  }
  if (d.cell_kind() == Cell::sram) r.leakage_pj = d.rows * d.cols * k.p_leak_sram_pw * s * r.latency_ns * 1e-9;
  if (!(r.compared_energy_pj > 0)) fail("macro", "energy", "0 pJ", "an operation that costs energy");
  r.fj_per_mac = r.compared_energy_pj * 1e3 / r.macs;
  r.tops_per_w = 2 * r.macs / r.compared_energy_pj;
  r.gops = 2 * r.macs / r.latency_ns;
  r.tops_per_mm2 = r.gops / 1000 / r.area_mm2;
  return r;
}

}  // namespace kvcim::cmodel::macro_model
