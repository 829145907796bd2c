#include "kvcim/mapper/hardware.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/cmodel/macro_model/event_prices.hpp"
#include "kvcim/data_dir.hpp"
#include "kvcim/error.hpp"
#include "kvcim/cmodel/energy/read_fields.hpp"
#include "kvcim/spec_fields_json.hpp"
#include "kvcim/text.hpp"

namespace kvcim::mapper {

namespace fs = std::filesystem;
using cmodel::energy::Section;
namespace cim = cmodel::cim;
namespace energy = cmodel::energy;

std::string shipped_config_dir() { return data_dir() + "/configs"; }
std::string default_hardware_spec_path() { return shipped_config_dir() + "/hw/sram_digital.yaml"; }

cim::TileParams HardwareSpec::tile(int head_dim) const {
  cim::TileParams p;
  p.head_dim = head_dim;
  p.tokens = kv.tokens_per_tile;
  p.kv_bits = precision.kv_bits;
  p.exp_frac = kv.exp_frac;
  p.prob_bits = kv.prob_bits;
  copy_shared_fields(kv, p);
  // 0 = kv_bits: a spec at equal widths gives the very TileParams the RTL is built at
  p.k_bits = kv.k_bits == precision.kv_bits ? 0 : kv.k_bits;  // after the copy by key
  p.v_bits = kv.v_bits == precision.kv_bits ? 0 : kv.v_bits;
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

namespace {
// A die-to-die link bit is priced by the spec's link section, not by a technology table.
energy::Costs with_link(energy::Costs c, const LinkSpec& link, const std::string& where) {
  const int i = static_cast<int>(energy::EventKind::die_link_bit);
  c.energy_factor[i] = c.latency_factor[i] = 1;
  c.energy_aj[i] = energy::to_attojoules(link.energy_pj_per_bit, where);
  c.latency_fs[i] = energy::to_femtoseconds(1 / (8 * link.bandwidth_gb_s), where);  // GB/s = 8 bit/ns
  const int idle = static_cast<int>(energy::EventKind::link_idle_ns);
  c.energy_factor[idle] = c.latency_factor[idle] = 1;
  c.energy_aj[idle] = energy::to_attojoules(link.idle_power_mw, where);  // 1 mW for 1 ns = 1 pJ
  c.latency_fs[idle] = 0;
  return c;
}
}  // namespace

energy::Costs HardwareSpec::costs() const {
  energy::Costs c = tech.costs({comparison, cim::converts(macro.kind) ? macro.adc_bits : 0, 0});
  if (described) {
    namespace mm = cmodel::macro_model;
    const mm::EventPrices p = mm::event_prices(described->desc, macro, comparison, mm::shipped_constants(),
                                               (source.empty() ? std::string("hardware spec") : source));
    auto set = [&](energy::EventKind kind, double pj) {
      c.energy_aj[static_cast<int>(kind)] = static_cast<int64_t>(std::llround(pj * 1e6));
    };
    set(energy::EventKind::row_activation, p.row_activation_pj);
    set(energy::EventKind::column_read, p.column_read_pj);
    set(energy::EventKind::adc_conversion, p.adc_conversion_pj);
    set(energy::EventKind::adder_op, p.adder_op_pj);
    set(energy::EventKind::shift_add_op, p.shift_add_op_pj);
  }
  return with_link(c, link, source + ": link");
}
// The digital attention tile has no ADC: the plain table values; the analog tile's conversions
// (scores and outputs) are priced at kv.adc_bits.
energy::Costs HardwareSpec::kv_costs() const {
  return with_link(kv_tech.costs({comparison, kv.kind == cim::TileKind::analog ? kv.adc_bits : 0, 0}), link,
                   source + ": link");
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
  check_fields(precision, where, "precision.");
  check_fields(organization, where, "organization.");
  check_fields(kv, where, "kv.");
  if (kv.kind == cim::TileKind::digital && kv.softmax != cim::TileSoftmax::fixed)
    fail(where, "kv.softmax", std::string(cim::kTileSoftmaxNames[static_cast<int>(kv.softmax)]),
         "the digital tile has the fixed-point softmax only (kv.kind: analog for the alternatives)");
  if (kv.kind == cim::TileKind::analog) tile(8).validate(where + ": kv");
  check_fields(buffer, where, "buffer.");
  check_fields(offchip, where, "offchip.");
  check_fields(digital, where, "digital.");
  baseline.validate(where);
  check_fields(die, where, "die.");
  check_fields(link, where, "link.");
  if (die.reticle_mm2 > die.wafer_mm2)
    fail(where, "die.reticle_mm2", formatted("%g", die.reticle_mm2),
         "a die larger than the wafer (die.wafer_mm2 = " + formatted("%g", die.wafer_mm2) + ")");
  energy::check_node_point(comparison, where, "comparison");
  // The ADC resolutions must be costed by the technology tables.
  costs();
  kv_costs();
}

namespace {

void read_macro(const Section& m, HardwareSpec& hw) {
  cim::MacroSpec& s = hw.macro;
  read_fields(m, s);
  if (!s.describes.empty()) {
    try {
      hw.described = cmodel::macro_model::load_macro_file(s.describes);
    } catch (const Error& e) {
      m.error("describes", std::string("a macro spec as its paper describes it (configs/macros/*.yaml): ") + e.what());
    }
  }
  if (!m.has("rows_per_cycle")) s.rows_per_cycle = s.rows;
  // the ranges that depend on the geometry
  auto at_most = [&](const char* key, int v, int hi) {
    if (v > hi) m.error(key, "expected an integer in [1, " + std::to_string(hi) + "]");
  };
  at_most("rows_per_cycle", s.rows_per_cycle, s.rows);
  at_most("adc_share", s.adc_share, s.cols);
}

}  // namespace

HardwareSpec hardware_spec_from_node(const YAML::Node& root, const std::string& where,
                                     const std::string& base_dir) {
  // paths are relative to the spec's folder
  const Section top(root, where, "", base_dir);
  HardwareSpec hw;
  // `published` belongs to the macro specs of configs/macros/ (mapper/macro_pricing.cpp reads and
  // checks it); the hardware part ignores it, so `kvcim map --hw` reads those files too.
  read_fields(top, hw, {"macro", "organization", "kv", "precision", "buffer", "offchip", "digital", "baseline",
                        "comparison", "published", "die", "link"});
  hw.source = where;

  const Section prec = top.child("precision");
  read_fields(prec, hw.precision);

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
  if (org.has("macros") && org.node()["macros"].IsScalar() && org.node()["macros"].Scalar() == "auto") {
    hw.organization.macros_auto = true;  // `macros` keeps its placeholder until place() sizes it
    read_fields(org, hw.organization, {"macros"});
  } else {
    read_fields(org, hw.organization);
  }

  if (auto kv = top.optional_child("kv")) {
    KvSpec& k = hw.kv;
    k.k_bits = k.v_bits = hw.precision.kv_bits;  // their default
    read_fields(*kv, k);
    if (k.kind == cim::TileKind::digital && k.softmax != cim::TileSoftmax::fixed)
      kv->error("softmax", "the digital tile has the fixed-point softmax only (kv.kind: analog for the alternatives)");
  } else {
    hw.kv.k_bits = hw.kv.v_bits = hw.precision.kv_bits;
  }
  if (auto b = top.optional_child("buffer")) read_fields(*b, hw.buffer);
  if (auto o = top.optional_child("offchip")) read_fields(*o, hw.offchip);
  if (auto d = top.optional_child("digital")) read_fields(*d, hw.digital);
  if (auto d = top.optional_child("die")) read_fields(*d, hw.die);
  if (auto l = top.optional_child("link")) read_fields(*l, hw.link);
  if (hw.die.reticle_mm2 > hw.die.wafer_mm2)
    top.child("die").error("reticle_mm2", "a die larger than the wafer (die.wafer_mm2 = " +
                                              formatted("%g", hw.die.wafer_mm2) + " mm2)");
  const Section base = top.child("baseline");
  read_fields(base, hw.baseline);

  hw.tech = energy::load_tech_table(hw.technology);
  hw.kv_tech = hw.kv.technology.empty() ? hw.tech : energy::load_tech_table(hw.kv.technology);
  if (hw.kv.technology.empty()) hw.kv.technology = hw.technology;
  hw.baseline_tech = energy::load_tech_table(hw.baseline.technology);
  // One comparison node for both sides: the macro table's unless the spec says otherwise.
  hw.comparison = hw.tech.node;
  if (auto cmp = top.optional_child("comparison")) {
    energy::NodePoint p = hw.comparison;
    read_fields(*cmp, p);
    // voltage_v's default depends on node_nm: the supply of a table measured there
    hw.compare_at(p.node_nm, cmp->where("node_nm"));
    if (cmp->has("voltage_v")) {
      hw.comparison.voltage_v = p.voltage_v;
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

// Each section of the spec has one serialiser, the inverse of its part of the parser; the spec's
// is their composition. The analog-only fields appear for analog parts (the parser rejects them
// on digital ones).
nlohmann::json to_json(const cim::MacroSpec& m) { return write_fields(m); }

nlohmann::json to_json(const Organization& o) {
  nlohmann::json j = write_fields(o);
  if (o.macros_auto) j["macros"] = "auto";
  return j;
}

nlohmann::json to_json(const KvSpec& k) { return write_fields(k); }
nlohmann::json to_json(const Precision& p) { return write_fields(p); }
nlohmann::json to_json(const BufferSpec& b) { return write_fields(b); }
nlohmann::json to_json(const OffchipSpec& o) { return write_fields(o); }
nlohmann::json to_json(const DigitalSpec& d) { return write_fields(d); }
nlohmann::json to_json(const energy::BaselineConfig& b) { return write_fields(b); }
nlohmann::json to_json(const energy::NodePoint& n) { return write_fields(n); }
nlohmann::json to_json(const DieSpec& d) { return write_fields(d); }
nlohmann::json to_json(const LinkSpec& l) { return write_fields(l); }

nlohmann::json hardware_spec_to_json(const HardwareSpec& hw) {
  nlohmann::json kv = to_json(hw.kv);
  // K/V widths only when they differ from precision.kv_bits (their default), so that a dict that
  // changes precision.kv_bits changes the K/V widths with it, as a spec without them does
  if (hw.kv.k_bits == hw.precision.kv_bits) kv.erase("k_bits");
  if (hw.kv.v_bits == hw.precision.kv_bits) kv.erase("v_bits");
  nlohmann::json j = write_fields(hw);  // name, description, technology
  j["macro"] = to_json(hw.macro);
  j["organization"] = to_json(hw.organization);
  j["kv"] = kv;
  j["precision"] = to_json(hw.precision);
  j["buffer"] = to_json(hw.buffer);
  j["offchip"] = to_json(hw.offchip);
  j["digital"] = to_json(hw.digital);
  j["baseline"] = to_json(hw.baseline);
  j["comparison"] = to_json(hw.comparison);
  j["die"] = to_json(hw.die);
  j["link"] = to_json(hw.link);
  return j;
}

nlohmann::json hardware_report_json(const HardwareSpec& hw) {
  const cim::MacroSpec& m = hw.macro;
  const Organization& o = hw.organization;
  // what the macro computes with (its table's always_reported rows: analog fields at their values
  // on a digital macro too) and the figures derived from it
  nlohmann::json macro = report_fields(m);
  // the file as the spec's folder named it, null for none
  macro["describes"] = m.describes.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.describes);
  macro["slices_per_weight"] = m.slices_per_weight();
  macro["weights_per_row"] = m.weights_per_row();
  nlohmann::json organization = report_fields(o);  // macros as sized, the homes always
  organization["tiles"] = o.tiles();
  organization["banks"] = o.banks();
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
  return hardware_spec_from_node(energy::load_yaml_file(path, "hardware spec"), path, fs::path(path).parent_path().string());
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

bool idle_leaks_from(const std::string& where, const std::string& idle) {
  if (idle != "gated" && idle != "leaking") fail(where, "idle", "'" + idle + "'", "expected gated or leaking");
  return idle == "leaking";
}

}  // namespace kvcim::mapper
