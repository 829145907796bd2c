#include "kvcim/cmodel/energy/tech.hpp"

#include <cmath>
#include <filesystem>
#include <set>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/cmodel/energy/sram_nodes.hpp"
#include "kvcim/error.hpp"
#include "kvcim/text.hpp"

namespace kvcim::cmodel::energy {

namespace {

namespace fs = std::filesystem;

// The row IDs of ../shared/research/energy-numbers.md. A citation of anything else is a typo.
const std::set<std::string>& known_ids() {
  static const std::set<std::string> ids = {
      "H1", "H2", "H3", "H4", "H5", "H6", "M1", "M3", "M4", "M5", "M6", "M7", "M8", "M10",
      "M11", "C1", "C2", "C3", "C4", "C6", "C7", "C8", "C9", "C10", "C11", "C12", "A1",
      "A2", "A3", "A4", "A5", "A7", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9",
      "K1", "K2", "K3", "K4", "K5", "K6", "K7", "K8"};
  return ids;
}

const std::vector<std::string> kAreaKeys = {"bit_cell_um2", "lane_um2", "adc_um2", "nand2_um2"};

// Tables inherit through `base:`; a chain longer than this is a cycle.
constexpr int kMaxBaseDepth = 8;

// allow_unlimited: the value may be the word `unlimited` (returned as +infinity).
TechValue read_value(const Section& parent, const std::string& key, Unit unit, const NodePoint& node,
                     bool allow_unlimited = false) {
  const Section s = parent.child(key);
  s.check_keys({"value", "source", "assumption"});
  TechValue v;
  v.defined_in = parent.file();
  v.node = node;
  if (allow_unlimited && s.has("value") && s.node()["value"].IsScalar() &&
      s.node()["value"].Scalar() == "unlimited")
    v.value = HUGE_VAL;
  else
    v.value = s.get_quantity("value", unit);
  const bool has_src = s.has("source"), has_asm = s.has("assumption");
  if (has_src == has_asm)
    s.error(has_src ? "assumption" : "value",
            "give exactly one of source: (a row ID of energy-numbers.md, e.g. \"[H1] ...\") or "
            "assumption: (the reasoning)");
  if (has_src) {
    v.provenance = s.get_string("source");
    // Every "[X123]" in the text: one capital letter and digits in brackets.
    bool any = false;
    const std::string& text = v.provenance;
    for (size_t open = text.find('['); open != std::string::npos; open = text.find('[', open + 1)) {
      const size_t close = text.find(']', open);
      if (close == std::string::npos) break;
      const std::string id = text.substr(open + 1, close - open - 1);
      if (id.size() < 2 || id[0] < 'A' || id[0] > 'Z' ||
          id.find_first_not_of("0123456789", 1) != std::string::npos)
        continue;
      any = true;
      if (!is_known_source_id(id))
        s.error("source", "cites [" + id + "], which is not a row ID of energy-numbers.md");
    }
    if (!any)
      s.error("source", "must cite a row ID of energy-numbers.md in brackets, e.g. \"[H1] ...\"");
  } else {
    v.assumption = true;
    v.provenance = s.get_string("assumption");
    // An assumption must say why; a word or two is not a reasoning.
    if (v.provenance.size() < 16)
      s.error("assumption", "state the reasoning (node scaling, write ~ read, ...) in a sentence");
  }
  return v;
}

struct Partial {
  std::string name, description;
  NodePoint node;
  std::array<std::optional<EventCost>, kEventKinds> events;
  std::optional<std::optional<TechValue>> endurance;  // outer: given here; inner: unlimited
  std::map<std::string, TechValue> area;
};

void read_into(const std::string& path, Partial& out, int depth) {
  if (depth > kMaxBaseDepth)
    fail(path, "base", "(chain)", "more than " + std::to_string(kMaxBaseDepth) +
                                      " levels of base: tables (a cycle?)");
  const YAML::Node root = load_yaml_file(path, "technology table");
  const Section top(root, path, "");
  top.check_keys({"name", "description", "node_nm", "voltage_v", "base", "events", "cell", "area"});
  // Every value is tied to the node and supply it was measured at, so that it can be carried to
  // the comparison node; a table that does not say where its numbers come from is refused.
  if (!top.has("node_nm")) top.error("node_nm", "required: the technology node (nm) of this table's values");
  if (!top.has("voltage_v")) top.error("voltage_v", "required: the supply voltage (V) of this table's values");
  NodePoint node;
  node.node_nm = top.get_number("node_nm", kMinNode, kMaxNode);
  node.voltage_v = top.get_number("voltage_v", kMinVoltage, kMaxVoltage);
  check_node_point(node, top.where("voltage_v"), "");
  // The base is read first; this file's entries then override it.
  if (top.has("base")) {
    const fs::path base = fs::path(path).parent_path() / top.get_string("base");
    // a regular file: a FIFO or device named here would block the reader forever
    std::error_code ec;  // a path the OS rejects (too long, ...) is "no such file", not a throw
    if (!fs::is_regular_file(base, ec)) top.error("base", "no such file (a regular file): " + base.string());
    read_into(base.string(), out, depth + 1);
  }
  out.name = top.get_string("name");
  out.node = node;
  out.description = top.get_string("description", out.description);

  std::vector<std::string> kinds;
  for (auto k : all_event_kinds()) kinds.emplace_back(name(k));
  if (top.has("events")) {
    const Section ev = top.child("events");
    ev.check_keys(kinds);
    for (auto k : all_event_kinds()) {
      const std::string kn(name(k));
      if (!ev.has(kn)) continue;
      const Section e = ev.child(kn);
      std::vector<std::string> fields = {"energy_pj", "latency_ns"};
      if (k == EventKind::adc_conversion) fields.push_back("energy_pj_by_adc_bits");
      if (k == EventKind::sram_bit) fields.push_back("energy_pj_by_bank_bytes");
      if (component_of(k) != Component::offchip && k != EventKind::wire_bit_um) fields.push_back("scaling");
      e.check_keys(fields);
      EventCost c;
      if (e.has("scaling")) {
        const std::string r = e.get_string("scaling");
        if (r == "sram_read") c.rule = ScalingRule::sram_read;
        else if (r == "sram_write") c.rule = ScalingRule::sram_write;
        else e.error("scaling", "expected sram_read or sram_write (an SRAM access priced by configs/memory/sram_nodes.yaml); "
                                "other events follow their kind's rule");
      }
      c.energy_pj = read_value(e, "energy_pj", Unit::pj, node);
      c.latency_ns = read_value(e, "latency_ns", Unit::ns, node);
      if (e.has("energy_pj_by_bank_bytes")) {
        const Section by = e.child("energy_pj_by_bank_bytes");
        for (const auto& key : by.keys()) {
          const auto bytes = parse_quantity(key, Unit::bytes);
          if (!bytes || *bytes < 1 || *bytes > 1e15 || *bytes != std::floor(*bytes))
            by.error(key, "keys are bank capacities in bytes (e.g. 8 KiB, 1 MiB)");
          c.energy_pj_by_bank_bytes[static_cast<int64_t>(*bytes)] = read_value(by, key, Unit::pj, node);
        }
        if (c.energy_pj_by_bank_bytes.size() < 2)
          by.error(by.keys().empty() ? "" : by.keys().front(), "give at least two bank sizes to fit the curve");
        fit_bank_curve(c.energy_pj_by_bank_bytes);  // refuses points that give no curve
      }
      if (e.has("energy_pj_by_adc_bits")) {
        const Section by = e.child("energy_pj_by_adc_bits");
        for (const auto& key : by.keys()) {
          const int64_t bits = parse_integer(key).value_or(0);
          if (bits < 1 || bits > 16)
            by.error(key, "keys are ADC resolutions in bits, 1..16");
          c.energy_pj_by_adc_bits[bits] = read_value(by, key, Unit::pj, node);
        }
      }
      out.events[static_cast<int>(k)] = c;
    }
  }
  if (top.has("area")) {
    const Section area = top.child("area");
    area.check_keys(kAreaKeys);
    for (const auto& key : kAreaKeys)
      if (area.has(key)) {
        TechValue v = read_value(area, key, Unit::count, node);
        if (!(v.value > 0)) area.child(key).error("value", "expected an area above 0 um^2");
        out.area[key] = v;
      }
  }
  if (top.has("cell")) {
    const Section cell = top.child("cell");
    cell.check_keys({"endurance_writes"});
    if (cell.has("endurance_writes")) {
      TechValue v = read_value(cell, "endurance_writes", Unit::count, node, true);
      if (std::isinf(v.value)) {
        out.endurance = std::optional<TechValue>();
      } else {
        if (v.value < 1)
          cell.child("endurance_writes").error("value", "expected at least 1 write, or 'unlimited'");
        out.endurance = v;
      }
    }
  }
}

}  // namespace

bool is_known_source_id(const std::string& id) { return known_ids().count(id) > 0; }

namespace {

// v (in `unit`) as a ledger's integer of 1e-6 units, refused when negative, too large or a nonzero
// value below that resolution.
int64_t micro_units(double v, const std::string& where, const char* field, const char* unit) {
  const double m = std::round(v * 1e6);
  if (!(m >= 0) || m > 9.0e18) fail(where, field, std::to_string(v), "out of range");
  if (v > 0 && m == 0)
    fail(where, field, std::to_string(v), std::string("below the 1e-6 ") + unit + " resolution of the ledger");
  return static_cast<int64_t>(m);
}

}  // namespace

int64_t to_attojoules(double pj, const std::string& where) { return micro_units(pj, where, "energy_pj", "pJ"); }
int64_t to_femtoseconds(double ns, const std::string& where) { return micro_units(ns, where, "latency_ns", "ns"); }

TechTable load_tech_table(const std::string& path) {
  Partial p;
  read_into(path, p, 0);
  TechTable t;
  t.name = p.name;
  t.description = p.description;
  t.path = path;
  t.node = p.node;
  for (auto k : all_event_kinds()) {
    const auto& e = p.events[static_cast<int>(k)];
    if (!e && (k == EventKind::die_link_bit || k == EventKind::link_idle_ns)) {  // priced by the spec's link section
      TechValue v{0, "priced by the hardware spec's link section", true, path, p.node};
      t.events[static_cast<int>(k)].energy_pj = t.events[static_cast<int>(k)].latency_ns = v;
      continue;
    }
    if (!e)
      fail(path, "events." + std::string(name(k)), "(missing)",
           "every event kind needs energy_pj and latency_ns (here or in a base: table)");
    t.events[static_cast<int>(k)] = *e;
    to_attojoules(e->energy_pj.value, path);  // range checks now rather than at costing time
    to_femtoseconds(e->latency_ns.value, path);
  }
  if (p.endurance) t.endurance_writes = *p.endurance;
  for (const auto& key : kAreaKeys)
    if (!p.area.count(key))
      fail(path, "area." + key, "(missing)", "every table needs the areas (here or in a base: table)");
  t.bit_cell_um2 = p.area.at("bit_cell_um2");
  t.lane_um2 = p.area.at("lane_um2");
  t.adc_um2 = p.area.at("adc_um2");
  t.nand2_um2 = p.area.at("nand2_um2");
  return t;
}

ScalingRule scaling_rule(EventKind k) {
  if (component_of(k) == Component::offchip) return ScalingRule::none;
  if (k == EventKind::wire_bit_um) return ScalingRule::wire;
  return ScalingRule::device;
}

ScalingRule scaling_rule(EventKind k, const EventCost& e) { return e.rule.value_or(scaling_rule(k)); }

double BankCurve::at(double bytes) const { return a * std::pow(bytes, b); }

BankCurve fit_bank_curve(const std::map<int64_t, TechValue>& points) {
  // least squares of log E = log a + b log bytes
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [bytes, v] : points) {
    if (!(v.value > 0)) fail(v.defined_in, "energy_pj_by_bank_bytes", std::to_string(v.value), "expected > 0 pJ");
    const double x = std::log(static_cast<double>(bytes)), y = std::log(v.value);
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double den = n * sxx - sx * sx;
  if (n < 2 || !(den > 0))
    fail(points.empty() ? "technology table" : points.begin()->second.defined_in,
         "energy_pj_by_bank_bytes", "(points)", "at least two different bank sizes");
  BankCurve c;
  c.b = (n * sxy - sx * sy) / den;
  c.a = std::exp((sy - c.b * sx) / n);
  return c;
}

Costs TechTable::costs(const CostContext& ctx) const {
  check_node_point(ctx.target, path, "comparison");
  Costs c;
  c.table = name;
  c.target = ctx.target;
  for (auto k : all_event_kinds()) {
    const EventCost& e = event(k);
    const TechValue* ev = &e.energy_pj;
    double pj = e.energy_pj.value;
    if (k == EventKind::adc_conversion && ctx.adc_bits > 0 && !e.energy_pj_by_adc_bits.empty()) {
      auto it = e.energy_pj_by_adc_bits.find(ctx.adc_bits);
      if (it == e.energy_pj_by_adc_bits.end()) {
        std::string have;
        for (const auto& [b, v] : e.energy_pj_by_adc_bits)
          have += (have.empty() ? "" : ", ") + std::to_string(b);
        fail(path, "events.adc_conversion.energy_pj_by_adc_bits", std::to_string(ctx.adc_bits),
             "no energy for this ADC resolution; the table has " + have);
      }
      ev = &it->second;
      pj = it->second.value;
    }
    if (k == EventKind::sram_bit && ctx.sram_bank_bytes > 0 && !e.energy_pj_by_bank_bytes.empty()) {
      ev = &e.energy_pj_by_bank_bytes.begin()->second;
      pj = fit_bank_curve(e.energy_pj_by_bank_bytes).at(static_cast<double>(ctx.sram_bank_bytes));
    }
    const ScalingRule rule = scaling_rule(k, e);
    const int i = static_cast<int>(k);
    c.energy_factor[i] = energy_factor(rule, ev->node, ctx.target);
    c.latency_factor[i] = delay_factor(rule, e.latency_ns.node, ctx.target);
    c.energy_aj[i] = to_attojoules(pj * c.energy_factor[i], path);
    c.latency_fs[i] = to_femtoseconds(e.latency_ns.value * c.latency_factor[i], path);
  }
  return c;
}

Areas TechTable::areas(const NodePoint& target) const {
  auto at = [&](const TechValue& v) { return v.value * area_factor(v.node.node_nm, target.node_nm); };
  // a memory cell follows the SRAM macros of its node, not logic (sram_nodes.hpp)
  const double bit = bit_cell_um2.value * sram_area_factor(bit_cell_um2.node.node_nm, target.node_nm);
  return {bit, at(lane_um2), at(adc_um2), at(nand2_um2)};
}

std::vector<std::pair<std::string, NodePoint>> TechTable::sources() const {
  std::vector<std::pair<std::string, NodePoint>> out{{path, node}};
  auto add = [&](const TechValue& v) {
    for (const auto& [f, n] : out)
      if (f == v.defined_in) return;
    out.emplace_back(v.defined_in, v.node);
  };
  for (const auto& e : events) {
    add(e.energy_pj);
    add(e.latency_ns);
    for (const auto& [b, v] : e.energy_pj_by_adc_bits) add(v);
    for (const auto& [b, v] : e.energy_pj_by_bank_bytes) add(v);
  }
  for (const TechValue* v : {&bit_cell_um2, &lane_um2, &adc_um2, &nand2_um2}) add(*v);
  return out;
}

}  // namespace kvcim::cmodel::energy
