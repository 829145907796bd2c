// Machine files: reading them strictly, finding the shipped ones by name (see machine.hpp).
#include "kvcim/mapper/machine.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/cmodel/energy/read_fields.hpp"
#include "kvcim/data_dir.hpp"
#include "kvcim/error.hpp"
#include "kvcim/spec_fields_json.hpp"

namespace kvcim::mapper {

namespace fs = std::filesystem;
namespace energy = cmodel::energy;
using energy::Section;

namespace {

std::string machines_dir() { return data_dir() + "/configs/machines"; }

Machine machine_from_node(const YAML::Node& root, const std::string& source) {
  if (!root || !root.IsMap()) fail(source, "file", energy::show(root), "expected a mapping of machine fields");
  const Section top(root, source, "");
  Machine m;
  m.source = source;
  // every field {value: V, source: "..."} or {value: V, assumption: "..."} (SpecField::sourced)
  energy::read_fields(top, m, {"name", "description"});
  m.name = top.get_string("name");
  m.description = top.get_string("description", "");
  if (m.tdp_w <= m.idle_power_w + m.active_power_w)
    top.error("active_power_w", "idle_power_w + active_power_w must stay below tdp_w (the board's power limit)");
  return m;
}

}  // namespace

double Machine::mac_pj(int weight_bits) const {
  const double macs_per_s = (weight_bits == 8 ? peak_int8_tops : peak_fp16_tflops) * 1e12 / 2 * compute_utilization;
  return (tdp_w - idle_power_w - active_power_w) / macs_per_s * 1e12;
}

double Machine::wire_mm() const { return std::sqrt(die_mm2) / 2; }

std::vector<std::string> machine_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(machines_dir(), ec))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Machine machine_by_name(const std::string& name) {
  const std::vector<std::string> names = machine_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    fail("baseline", "name", "'" + name + "'", "unknown machine; known: " + known);
  }
  return load_machine(machines_dir() + "/" + name + ".yaml");
}

Machine load_machine(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "file", "'" + path + "'", "cannot open the machine file");
  std::ostringstream text;
  text << in.rdbuf();
  return machine_from_text(text.str(), path);
}

Machine machine_from_text(const std::string& yaml, const std::string& source) {
  return machine_from_node(energy::yaml_from_text(yaml, source), source);
}

Machine machine_file_from_json(const nlohmann::json& j, const std::string& where) {
  return machine_from_node(energy::yaml_from_json_text(j.dump()), where);
}

nlohmann::json machine_file_to_json(const Machine& m) {
  nlohmann::json j = write_fields(m);
  j["name"] = m.name;
  if (!m.description.empty()) j["description"] = m.description;
  return j;
}

}  // namespace kvcim::mapper
