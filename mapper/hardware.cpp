#include "kvcim/mapper/hardware.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/data_dir.hpp"
#include "kvcim/error.hpp"

namespace kvcim::mapper {

namespace fs = std::filesystem;
using cmodel::energy::Section;
using cmodel::energy::Unit;
namespace cim = cmodel::cim;
namespace energy = cmodel::energy;

// The names of each choice, in enum order: read by the parser, written by hardware_spec_to_json.
const std::vector<std::string> kMacroKinds = {"digital", "analog"};
const std::vector<std::string> kAdcRanges = {"full_scale", "calibrated"};
const std::vector<std::string> kNoiseModels = {"exact", "fixed"};
const std::vector<std::string> kEncodings = {"twos_complement", "offset", "differential"};
const std::vector<std::string> kOffchipKinds = {"dram", "hbm"};
const std::vector<std::string> kMacTypes = {"int8", "fp16"};
const std::vector<std::string> kTileKinds = {"digital", "analog"};
const std::vector<std::string> kKScales = {"token", "channel"};
const std::vector<std::string> kSoftmaxes = {"fixed", "hardsigmoid", "relu"};

std::string shipped_config_dir() { return data_dir() + "/configs"; }
std::string default_hardware_spec_path() { return shipped_config_dir() + "/hw/sram_digital.yaml"; }

cim::TileParams HardwareSpec::tile(int head_dim) const {
  cim::TileParams p;
  p.head_dim = head_dim;
  p.tokens = kv.tokens_per_tile;
  p.kv_bits = precision.kv_bits;
  p.exp_frac = kv.exp_frac;
  p.prob_bits = kv.prob_bits;
  // 0 = kv_bits: a spec at equal widths gives the very TileParams the RTL is built at
  p.k_bits = kv.k_bits == precision.kv_bits ? 0 : kv.k_bits;
  p.v_bits = kv.v_bits == precision.kv_bits ? 0 : kv.v_bits;
  p.kind = kv.kind;
  p.softmax = kv.softmax;
  if (kv.kind == cim::TileKind::analog) {
    p.cell_bits = kv.cell_bits;
    p.adc_bits = kv.adc_bits;
    p.adc_range = kv.adc_range;
    p.adc_clip = kv.adc_clip;
    p.out_adc_clip = kv.out_adc_clip;
    p.cell_noise_sigma = kv.cell_noise_sigma;
    p.read_noise_sigma = kv.read_noise_sigma;
    p.stuck_rate = kv.stuck_rate;
    p.seed = kv.seed;
    p.retention_ns = kv.retention_ns;
    p.refresh_ns = kv.refresh_ns;
    p.drift_nu = kv.drift_nu;
    p.drift_nu_sigma = kv.drift_nu_sigma;
    p.drift_t0_s = kv.drift_t0_s;
    p.drift_compensation = kv.drift_compensation;
  }
  return p;
}

void HardwareSpec::compare_at(double node_nm, const std::string& where) {
  // the supply of a table measured at that node (the macros', then the baseline's), else the
  // node's nominal supply
  double v = energy::nominal_voltage(node_nm);
  for (const energy::TechTable* t : {&baseline_tech, &kv_tech, &tech})
    if (t->node.node_nm == node_nm) v = t->node.voltage_v;
  energy::NodePoint p{node_nm, v};
  energy::check_node_point(p, where, "node");
  comparison = p;
}

energy::Costs HardwareSpec::costs() const {
  return tech.costs({comparison, macro.kind == cim::MacroKind::analog ? macro.adc_bits : 0, 0});
}
// The digital attention tile has no ADC: the plain table values; the analog tile's conversions
// (scores and outputs) are priced at kv.adc_bits.
energy::Costs HardwareSpec::kv_costs() const {
  return kv_tech.costs({comparison, kv.kind == cim::TileKind::analog ? kv.adc_bits : 0, 0});
}
energy::Costs HardwareSpec::baseline_costs() const {
  return baseline_tech.costs({comparison, 0, baseline.sram_bank_bytes});
}

void HardwareSpec::validate() const {
  const std::string where = source.empty() ? "hardware spec" : source;
  macro.validate(where + ": macro");
  if (macro.weight_bits != precision.weight_bits || macro.input_bits != precision.activation_bits ||
      !macro.input_signed)
    fail(where, "macro", "(precision)",
         "macro.weight_bits/input_bits must equal precision.weight_bits/activation_bits");
  auto range = [&](const char* field, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi)
      fail(where, field, std::to_string(v),
           "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  };
  range("precision.weight_bits", precision.weight_bits, 2, 8);
  range("precision.activation_bits", precision.activation_bits, 2, 8);
  range("precision.kv_bits", precision.kv_bits, 2, 8);
  range("organization.macros", organization.macros, 1, int64_t{1} << 32);
  range("organization.macros_per_tile", organization.macros_per_tile, 1, 1 << 20);
  range("organization.tiles_per_bank", organization.tiles_per_bank, 1, 1 << 20);
  range("kv.tokens_per_tile", kv.tokens_per_tile, 1, 4096);
  range("kv.prob_bits", kv.prob_bits, 1, 16);
  range("kv.exp_frac", kv.exp_frac, 0, 12);
  range("kv.k_bits", kv.k_bits, 2, 8);
  range("kv.v_bits", kv.v_bits, 2, 8);
  if (kv.kind == cim::TileKind::digital && kv.softmax != cim::TileSoftmax::fixed)
    fail(where, "kv.softmax", kSoftmaxes.at(static_cast<int>(kv.softmax)),
         "the digital tile has the fixed-point softmax only (kv.kind: analog for the alternatives)");
  if (kv.kind == cim::TileKind::analog) {
    range("kv.cell_bits", kv.cell_bits, 1, 8);
    range("kv.adc_bits", kv.adc_bits, 2, 30);
    tile(8).validate(where + ": kv");
  }
  range("buffer.bytes", buffer_bytes, 0, int64_t{1} << 50);
  range("offchip.capacity", offchip_bytes, 0, int64_t{1} << 60);
  range("digital.units", digital_units, 1, int64_t{1} << 30);
  baseline.validate(where);
  energy::check_node_point(comparison, where, "comparison");
  // The ADC resolutions must be costed by the technology tables.
  costs();
  kv_costs();
}

namespace {

// `published` belongs to the macro specs of configs/macros/ (mapper/macro_pricing.cpp reads and
// checks it); the hardware part ignores it, so `kvcim map --hw` reads those files too.
const std::vector<std::string> kTop = {"name",      "description", "technology", "macro",
                                       "organization", "kv",       "precision",  "buffer",
                                       "offchip",   "digital",     "baseline",  "comparison",
                                       "published"};

std::string resolve(const Section& s, const std::string& key, const std::string& base_dir) {
  const std::string rel = s.get_string(key);
  const fs::path p = fs::path(rel).is_absolute() ? fs::path(rel) : fs::path(base_dir) / rel;
  // a regular file: a FIFO or device named here would block the reader forever
  std::error_code ec;  // a path the OS rejects (too long, ...) is "no such file", not a throw
  if (!fs::is_regular_file(p, ec)) s.error(key, "no such technology table (a regular file): " + p.string());
  return p.lexically_normal().string();
}

int64_t bytes(const Section& s, const std::string& key, int64_t fallback) {
  if (!s.has(key)) return fallback;
  const double v = s.get_quantity(key, Unit::bytes);
  if (v != std::floor(v) || v > 9e18) s.error(key, "expected a whole number of bytes");
  return static_cast<int64_t>(v);
}

void read_macro(const Section& m, HardwareSpec& hw) {
  m.check_keys({"kind", "rows", "cols", "cell_bits", "input_bits_per_cycle", "rows_per_cycle",
                "adc_bits", "adc_share", "adc_range", "adc_clip", "encoding", "cell_noise_sigma",
                "read_noise_sigma", "seed", "drift_nu", "drift_nu_sigma", "drift_t0_s", "drift_time_s",
                "drift_compensation", "stuck_rate", "noise_model"});
  cim::MacroSpec& s = hw.macro;
  s.kind = static_cast<cim::MacroKind>(m.get_choice("kind", kMacroKinds));
  s.rows = static_cast<int>(m.get_int("rows", 1, 65536));
  s.cols = static_cast<int>(m.get_int("cols", 1, 65536));
  s.cell_bits = static_cast<int>(m.get_int("cell_bits", 1, 4, 1));
  s.input_bits_per_cycle = static_cast<int>(m.get_int("input_bits_per_cycle", 1, 8, 1));
  s.rows_per_cycle = static_cast<int>(m.get_int("rows_per_cycle", 1, s.rows, s.rows));
  s.adc_bits = static_cast<int>(m.get_int("adc_bits", 1, 16, 8));
  s.adc_share = static_cast<int>(m.get_int("adc_share", 1, s.cols, 1));
  s.adc_range = static_cast<cim::AdcRange>(
      m.get_choice("adc_range", kAdcRanges, 0));
  s.adc_clip = m.get_number("adc_clip", 1e-6, 1.0, 1.0);
  s.encoding = static_cast<cim::WeightEncoding>(
      m.get_choice("encoding", kEncodings, 0));
  s.cell_noise_sigma = m.get_number("cell_noise_sigma", 0.0, 1e6, 0.0);
  s.read_noise_sigma = m.get_number("read_noise_sigma", 0.0, 1e6, 0.0);
  s.seed = static_cast<uint64_t>(m.get_int("seed", 0, INT64_MAX, 1));
  s.drift_nu = m.get_number("drift_nu", 0.0, 10.0, 0.0);
  s.drift_nu_sigma = m.get_number("drift_nu_sigma", 0.0, 10.0, 0.0);
  s.drift_t0_s = m.get_number("drift_t0_s", 1e-12, 1e12, 1.0);
  s.drift_time_s = m.get_number("drift_time_s", 0.0, 1e12, 0.0);
  s.drift_compensation = m.get_bool("drift_compensation", true);
  s.stuck_rate = m.get_number("stuck_rate", 0.0, 1.0, 0.0);
  s.noise_model = static_cast<cim::NoiseModel>(m.get_choice("noise_model", kNoiseModels, 1));
  // A digital macro reads its columns exactly: converter settings there are a mistake.
  if (s.kind == cim::MacroKind::digital)
    for (const char* k : {"adc_bits", "adc_share", "adc_range", "adc_clip", "drift_nu", "drift_nu_sigma",
                          "drift_t0_s", "drift_time_s", "drift_compensation", "stuck_rate", "noise_model"})
      if (m.has(k)) m.error(k, "only meaningful for kind: analog (a digital macro has no ADC and no drift)");
}

}  // namespace

HardwareSpec hardware_spec_from_node(const YAML::Node& root, const std::string& where,
                                     const std::string& base_dir) {
  const Section top(root, where, "");
  top.check_keys(kTop);
  HardwareSpec hw;
  hw.source = where;
  hw.name = top.get_string("name");
  hw.description = top.get_string("description", "");

  const Section prec = top.child("precision");
  prec.check_keys({"weight_bits", "activation_bits", "kv_bits"});
  hw.precision.weight_bits = static_cast<int>(prec.get_int("weight_bits", 2, 8));
  hw.precision.activation_bits = static_cast<int>(prec.get_int("activation_bits", 2, 8));
  hw.precision.kv_bits = static_cast<int>(prec.get_int("kv_bits", 2, 8));

  read_macro(top.child("macro"), hw);
  hw.macro.weight_bits = hw.precision.weight_bits;
  hw.macro.input_bits = hw.precision.activation_bits;
  hw.macro.input_signed = true;
  try {
    hw.macro.validate("macro");
  } catch (const Error& e) {
    fail(top.where("macro"), "macro", "(geometry)", e.what());
  }

  const Section org = top.child("organization");
  org.check_keys({"macros", "macros_per_tile", "tiles_per_bank", "area_mm2", "weights", "kv"});
  if (org.has("macros") && org.node()["macros"].IsScalar() && org.node()["macros"].Scalar() == "auto")
    hw.organization.macros_auto = true;  // `macros` keeps its placeholder until place() sizes it
  else
    hw.organization.macros = org.get_int("macros", 1, int64_t{1} << 32);
  hw.organization.area_mm2 = org.get_number("area_mm2", 0.0, 1e9, 0.0);
  static const std::vector<std::string> kHomes = {"cim", "offchip"};
  hw.organization.weights = static_cast<Home>(org.get_choice("weights", kHomes, 0));
  hw.organization.kv = static_cast<Home>(org.get_choice("kv", kHomes, 0));
  hw.organization.macros_per_tile = static_cast<int>(org.get_int("macros_per_tile", 1, 1 << 20, 8));
  hw.organization.tiles_per_bank = static_cast<int>(org.get_int("tiles_per_bank", 1, 1 << 20, 16));

  std::string kv_tech_path;
  if (auto kv = top.optional_child("kv")) {
    kv->check_keys({"tokens_per_tile", "prob_bits", "exp_frac", "technology", "kind", "k_bits",
                    "v_bits", "k_scale", "softmax", "cell_bits", "adc_bits", "adc_range", "adc_clip",
                    "out_adc_clip", "cell_noise_sigma", "read_noise_sigma", "stuck_rate", "seed",
                    "retention_ns", "refresh_ns", "token_interval_ns", "drift_nu", "drift_nu_sigma",
                    "drift_t0_s", "drift_compensation"});
    hw.kv.tokens_per_tile = static_cast<int>(kv->get_int("tokens_per_tile", 1, 4096, hw.kv.tokens_per_tile));
    hw.kv.prob_bits = static_cast<int>(kv->get_int("prob_bits", 1, 16, hw.kv.prob_bits));
    hw.kv.exp_frac = static_cast<int>(kv->get_int("exp_frac", 0, 12, hw.kv.exp_frac));
    if (kv->has("technology")) kv_tech_path = resolve(*kv, "technology", base_dir);
    KvSpec& k = hw.kv;
    k.kind = static_cast<cim::TileKind>(kv->get_choice("kind", kTileKinds, 0));
    k.k_bits = static_cast<int>(kv->get_int("k_bits", 2, 8, hw.precision.kv_bits));
    k.v_bits = static_cast<int>(kv->get_int("v_bits", 2, 8, hw.precision.kv_bits));
    k.k_scale = static_cast<KScale>(kv->get_choice("k_scale", kKScales, 0));
    k.softmax = static_cast<cim::TileSoftmax>(kv->get_choice("softmax", kSoftmaxes, 0));
    if (k.kind == cim::TileKind::digital) {
      for (const char* f : {"cell_bits", "adc_bits", "adc_range", "adc_clip", "out_adc_clip",
                            "cell_noise_sigma", "read_noise_sigma", "stuck_rate", "seed", "retention_ns",
                            "refresh_ns", "token_interval_ns", "drift_nu", "drift_nu_sigma", "drift_t0_s",
                            "drift_compensation"})
        if (kv->has(f)) kv->error(f, "only meaningful for kv.kind: analog (the digital tile has no cells' noise, drift or ADC)");
      if (k.softmax != cim::TileSoftmax::fixed)
        kv->error("softmax", "the digital tile has the fixed-point softmax only (kv.kind: analog for the alternatives)");
    } else {
      k.cell_bits = static_cast<int>(kv->get_int("cell_bits", 1, 8, k.cell_bits));
      k.adc_bits = static_cast<int>(kv->get_int("adc_bits", 2, 30, k.adc_bits));
      k.adc_range = static_cast<cim::AdcRange>(kv->get_choice("adc_range", kAdcRanges, 0));
      k.adc_clip = kv->get_number("adc_clip", 1e-9, 1.0, 1.0);
      k.out_adc_clip = kv->get_number("out_adc_clip", 1e-9, 1.0, 1.0);
      k.cell_noise_sigma = kv->get_number("cell_noise_sigma", 0.0, 1e6, 0.0);
      k.read_noise_sigma = kv->get_number("read_noise_sigma", 0.0, 1e6, 0.0);
      k.stuck_rate = kv->get_number("stuck_rate", 0.0, 1.0, 0.0);
      k.seed = static_cast<uint64_t>(kv->get_int("seed", 0, INT64_MAX, 1));
      k.retention_ns = kv->get_number("retention_ns", 0.0, 1e30, 0.0);
      k.refresh_ns = kv->get_number("refresh_ns", 0.0, 1e30, 0.0);
      k.token_interval_ns = kv->get_number("token_interval_ns", 0.0, 1e30, 0.0);
      k.drift_nu = kv->get_number("drift_nu", 0.0, 10.0, 0.0);
      k.drift_nu_sigma = kv->get_number("drift_nu_sigma", 0.0, 10.0, 0.0);
      k.drift_t0_s = kv->get_number("drift_t0_s", 1e-12, 1e12, 1.0);
      k.drift_compensation = kv->get_bool("drift_compensation", true);
    }
  } else {
    hw.kv.k_bits = hw.kv.v_bits = hw.precision.kv_bits;
  }
  if (auto b = top.optional_child("buffer")) {
    b->check_keys({"bytes"});
    hw.buffer_bytes = bytes(*b, "bytes", hw.buffer_bytes);
  }
  if (auto o = top.optional_child("offchip")) {
    o->check_keys({"kind", "capacity"});
    hw.offchip = static_cast<energy::OffchipKind>(o->get_choice("kind", kOffchipKinds, 1));
    hw.offchip_bytes = bytes(*o, "capacity", hw.offchip_bytes);
  }
  if (auto d = top.optional_child("digital")) {
    d->check_keys({"units"});
    hw.digital_units = d->get_int("units", 1, int64_t{1} << 30, hw.digital_units);
  }
  const Section base = top.child("baseline");
  base.check_keys({"mac", "offchip", "sram", "sram_bank", "mac_units", "technology"});
  hw.baseline.mac = static_cast<energy::MacType>(base.get_choice("mac", kMacTypes));
  hw.baseline.offchip = static_cast<energy::OffchipKind>(base.get_choice("offchip", kOffchipKinds, 1));
  hw.baseline.sram_bytes = bytes(base, "sram", 0);
  hw.baseline.sram_bank_bytes = bytes(base, "sram_bank", hw.baseline.sram_bank_bytes);
  hw.baseline.mac_units = base.get_int("mac_units", 1, int64_t{1} << 30, 1024);

  const std::string tech_path = resolve(top, "technology", base_dir);
  const std::string base_tech_path = resolve(base, "technology", base_dir);
  hw.tech = energy::load_tech_table(tech_path);
  hw.kv_tech = kv_tech_path.empty() ? hw.tech : energy::load_tech_table(kv_tech_path);
  hw.baseline_tech = energy::load_tech_table(base_tech_path);
  // One comparison node for both sides: the macro table's unless the spec says otherwise.
  hw.comparison = hw.tech.node;
  if (auto cmp = top.optional_child("comparison")) {
    cmp->check_keys({"node_nm", "voltage_v"});
    hw.compare_at(cmp->get_number("node_nm", energy::kMinNode, energy::kMaxNode), cmp->where("node_nm"));
    if (cmp->has("voltage_v")) {
      hw.comparison.voltage_v = cmp->get_number("voltage_v", energy::kMinVoltage, energy::kMaxVoltage);
      energy::check_node_point(hw.comparison, cmp->where("voltage_v"), "comparison");
    }
  }
  try {
    hw.validate();
  } catch (const Error& e) {
    fail(where, "spec", "(as a whole)", e.what());
  }
  return hw;
}

namespace {

std::string absolute(const std::string& path) {
  return path.empty() ? path : fs::absolute(path).lexically_normal().string();
}

}  // namespace

// Each section of the spec has one serialiser, the inverse of its part of the parser; the spec's
// is their composition. The analog-only fields appear for analog parts (the parser rejects them
// on digital ones).
nlohmann::json to_json(const cim::MacroSpec& m) {
  nlohmann::json macro = {{"kind", kMacroKinds.at(static_cast<int>(m.kind))},
                          {"rows", m.rows},
                          {"cols", m.cols},
                          {"cell_bits", m.cell_bits},
                          {"input_bits_per_cycle", m.input_bits_per_cycle},
                          {"rows_per_cycle", m.rows_per_cycle},
                          {"encoding", kEncodings.at(static_cast<int>(m.encoding))},
                          {"cell_noise_sigma", m.cell_noise_sigma},
                          {"read_noise_sigma", m.read_noise_sigma},
                          {"seed", m.seed}};
  if (m.kind == cim::MacroKind::analog) {
    macro["drift_nu"] = m.drift_nu;
    macro["drift_nu_sigma"] = m.drift_nu_sigma;
    macro["drift_t0_s"] = m.drift_t0_s;
    macro["drift_time_s"] = m.drift_time_s;
    macro["drift_compensation"] = m.drift_compensation;
    macro["stuck_rate"] = m.stuck_rate;
    macro["noise_model"] = kNoiseModels.at(static_cast<int>(m.noise_model));
    macro["adc_bits"] = m.adc_bits;
    macro["adc_share"] = m.adc_share;
    macro["adc_range"] = kAdcRanges.at(static_cast<int>(m.adc_range));
    macro["adc_clip"] = m.adc_clip;
  }
  return macro;
}

nlohmann::json to_json(const Organization& o) {
  nlohmann::json j = {{"macros", o.macros_auto ? nlohmann::json("auto") : nlohmann::json(o.macros)},
                      {"macros_per_tile", o.macros_per_tile},
                      {"tiles_per_bank", o.tiles_per_bank}};
  // The design-point fields appear when they differ from their defaults, so that a spec written
  // without them reads back to the same dict.
  if (o.area_mm2 > 0) j["area_mm2"] = o.area_mm2;
  if (o.weights != Home::cim) j["weights"] = "offchip";
  if (o.kv != Home::cim) j["kv"] = "offchip";
  return j;
}

nlohmann::json to_json(const KvSpec& k) {
  nlohmann::json kv = {{"tokens_per_tile", k.tokens_per_tile},
                       {"prob_bits", k.prob_bits},
                       {"exp_frac", k.exp_frac},
                       {"kind", kTileKinds.at(static_cast<int>(k.kind))},
                       {"k_bits", k.k_bits},
                       {"v_bits", k.v_bits},
                       {"k_scale", kKScales.at(static_cast<int>(k.k_scale))},
                       {"softmax", kSoftmaxes.at(static_cast<int>(k.softmax))}};
  if (k.kind == cim::TileKind::analog) {
    kv["cell_bits"] = k.cell_bits;
    kv["adc_bits"] = k.adc_bits;
    kv["adc_range"] = kAdcRanges.at(static_cast<int>(k.adc_range));
    kv["adc_clip"] = k.adc_clip;
    kv["out_adc_clip"] = k.out_adc_clip;
    kv["cell_noise_sigma"] = k.cell_noise_sigma;
    kv["read_noise_sigma"] = k.read_noise_sigma;
    kv["stuck_rate"] = k.stuck_rate;
    kv["seed"] = k.seed;
    kv["retention_ns"] = k.retention_ns;
    kv["refresh_ns"] = k.refresh_ns;
    kv["token_interval_ns"] = k.token_interval_ns;
    kv["drift_nu"] = k.drift_nu;
    kv["drift_nu_sigma"] = k.drift_nu_sigma;
    kv["drift_t0_s"] = k.drift_t0_s;
    kv["drift_compensation"] = k.drift_compensation;
  }
  return kv;
}

nlohmann::json to_json(const Precision& p) {
  return {{"weight_bits", p.weight_bits}, {"activation_bits", p.activation_bits}, {"kv_bits", p.kv_bits}};
}

nlohmann::json to_json(const energy::BaselineConfig& b) {
  return {{"mac", kMacTypes.at(static_cast<int>(b.mac))},
          {"offchip", kOffchipKinds.at(static_cast<int>(b.offchip))},
          {"sram", b.sram_bytes},
          {"sram_bank", b.sram_bank_bytes},
          {"mac_units", b.mac_units}};
}

nlohmann::json to_json(const energy::NodePoint& n) { return {{"node_nm", n.node_nm}, {"voltage_v", n.voltage_v}}; }

nlohmann::json hardware_spec_to_json(const HardwareSpec& hw) {
  nlohmann::json kv = to_json(hw.kv);
  kv["technology"] = absolute(hw.kv_tech.path);
  // K/V widths only when they differ from precision.kv_bits (their default), so that a dict that
  // changes precision.kv_bits changes the K/V widths with it, as a spec without them does
  if (hw.kv.k_bits == hw.precision.kv_bits) kv.erase("k_bits");
  if (hw.kv.v_bits == hw.precision.kv_bits) kv.erase("v_bits");
  nlohmann::json baseline = to_json(hw.baseline);
  baseline["technology"] = absolute(hw.baseline_tech.path);
  return {{"name", hw.name},
          {"description", hw.description},
          {"technology", absolute(hw.tech.path)},
          {"macro", to_json(hw.macro)},
          {"organization", to_json(hw.organization)},
          {"kv", kv},
          {"precision", to_json(hw.precision)},
          {"buffer", {{"bytes", hw.buffer_bytes}}},
          {"offchip", {{"kind", kOffchipKinds.at(static_cast<int>(hw.offchip))}, {"capacity", hw.offchip_bytes}}},
          {"digital", {{"units", hw.digital_units}}},
          {"baseline", baseline},
          {"comparison", to_json(hw.comparison)}};
}

nlohmann::json hardware_report_json(const HardwareSpec& hw) {
  const cim::MacroSpec& m = hw.macro;
  const Organization& o = hw.organization;
  nlohmann::json macro = to_json(m);
  // what the macro computes with, analog fields at their values on a digital macro too
  macro.update({{"weight_bits", m.weight_bits},
                {"input_bits", m.input_bits},
                {"adc_bits", m.adc_bits},
                {"adc_share", m.adc_share},
                {"drift_nu", m.drift_nu},
                {"drift_nu_sigma", m.drift_nu_sigma},
                {"drift_time_s", m.drift_time_s},
                {"drift_compensation", m.drift_compensation},
                {"stuck_rate", m.stuck_rate},
                {"slices_per_weight", m.slices_per_weight()},
                {"weights_per_row", m.weights_per_row()}});
  nlohmann::json organization = to_json(o);
  organization["macros"] = o.macros;
  organization["tiles"] = o.tiles();
  organization["banks"] = o.banks();
  organization["weights"] = o.weights == Home::cim ? "cim" : "offchip";
  organization["kv"] = o.kv == Home::cim ? "cim" : "offchip";
  nlohmann::json baseline = to_json(hw.baseline);
  baseline["sram_bytes"] = hw.baseline.sram_bytes;
  return {{"name", hw.name},
          {"source", hw.source},
          {"technology", hw.tech.name},
          {"kv_technology", hw.kv_tech.name},
          {"baseline_technology", hw.baseline_tech.name},
          {"macro", macro},
          {"macros", o.macros},
          {"organization", organization},
          {"kv", to_json(hw.kv)},
          {"precision", to_json(hw.precision)},
          {"baseline", baseline},
          {"full", hardware_spec_to_json(hw)}};
}

namespace {

// A JSON document as the YAML tree the parser reads: no text in between.
YAML::Node yaml_node(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      YAML::Node n(YAML::NodeType::Map);
      for (const auto& [key, value] : j.items()) n[key] = yaml_node(value);
      return n;
    }
    case nlohmann::json::value_t::array: {
      YAML::Node n(YAML::NodeType::Sequence);
      for (const auto& value : j) n.push_back(yaml_node(value));
      return n;
    }
    case nlohmann::json::value_t::string: return YAML::Node(j.get<std::string>());
    case nlohmann::json::value_t::boolean: return YAML::Node(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return YAML::Node(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: return YAML::Node(j.get<uint64_t>());
    case nlohmann::json::value_t::number_float: {
      // as the JSON text has it, so that the parser reads back the same double
      const std::string text = j.dump();
      return YAML::Node(text);
    }
    default: return YAML::Node(YAML::NodeType::Null);
  }
}

}  // namespace

HardwareSpec hardware_spec_from_json(const nlohmann::json& j, const std::string& base_dir,
                                     const std::string& where) {
  return hardware_spec_from_node(yaml_node(j), where, base_dir.empty() ? shipped_config_dir() + "/hw" : base_dir);
}

HardwareSpec load_hardware_spec(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    fail(path, "file", "'" + path + "'", "cannot open the hardware spec");
  } catch (const YAML::Exception& e) {
    fail(path, "yaml", "(syntax)", e.what());
  }
  return hardware_spec_from_node(root, path, fs::path(path).parent_path().string());
}

HardwareSpec hardware_spec_from_text(const std::string& text, const std::string& base_dir,
                                     const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail(where, "text", "(syntax)", e.what());
  }
  return hardware_spec_from_node(root, where, base_dir.empty() ? shipped_config_dir() + "/hw" : base_dir);
}

}  // namespace kvcim::mapper
