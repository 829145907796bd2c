#include "kvcim/cmodel/macro_model/macro_desc.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/cmodel/energy/read_fields.hpp"
#include "kvcim/error.hpp"
#include "kvcim/spec_fields_json.hpp"

namespace kvcim::cmodel::macro_model {

namespace {

using energy::Section;

int category_index(std::string_view s) {
  for (size_t i = 0; i < kCategories.size(); ++i)
    if (kCategories[i] == s) return static_cast<int>(i);
  return -1;
}

}  // namespace

void finish_desc(MacroDesc& d, const std::string& where) {
  // a program's desc (the parser reads these as integers already)
  for_each_spec_field<MacroDesc>([&](const auto& row) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(d.*row.member)>, double>)
      if (row.whole && d.*row.member != std::floor(d.*row.member))
        fail(where, row.key, show_number(d.*row.member), expected_text(row));
  });
  if (d.array_vdd_v == kDerived) d.array_vdd_v = d.vdd_v;
  check_logic_supply(d.node_nm, d.vdd_v, where);
  if (d.input_bits_per_cycle > d.input_bits)
    fail(where, "input_bits_per_cycle", show_number(d.input_bits_per_cycle),
         "at most input_bits = " + show_number(d.input_bits));
  const bool digital_readout = d.readout_kind() == Readout::adder_tree;
  if (digital_readout != (d.encoding() == Encoding::digital))
    fail(where, "input_encoding", std::string(kEncodingChoices[static_cast<size_t>(d.encoding())]),
         digital_readout ? "digital (an adder_tree readout reads the input bits with gates)"
                         : "an analog encoding (bit_serial, pulse_width, voltage_dac, c2c) for a converter readout");
  if (digital_readout && d.merge() == Merge::analog)
    fail(where, "weight_merge", "analog", "digital (an adder_tree macro shift-adds its weight bits)");
  if (!digital_readout && d.adc_bits < 1) fail(where, "adc_bits", show_number(d.adc_bits), "1..16 for a converter readout");
  if (digital_readout && d.adc_bits != 0) fail(where, "adc_bits", show_number(d.adc_bits), "0 (an adder_tree has no converter)");
  if (d.encoding() == Encoding::bit_serial && d.input_bits_per_cycle != 1)
    fail(where, "input_bits_per_cycle", show_number(d.input_bits_per_cycle), "1 for bit_serial inputs");
  if (d.cells_per_weight == kDerived) d.cells_per_weight = std::ceil(d.weight_bits / d.cell_bits);
  if (d.cells_per_weight > d.cols) fail(where, "cells_per_weight", show_number(d.cells_per_weight), "at most cols");
  if (d.products_per_conversion == kDerived)
    d.products_per_conversion = d.merge() == Merge::analog ? d.rows * d.cells_per_weight : d.rows;
}

namespace {

Published read_published(const Section& p) {
  Published pb;
  read_fields(p, pb, {"breakdown", "excludes"});
  if (pb.source.size() < 8) p.error("source", "a citation: authors or venue, year, and where the figure is read");
  if (const auto b = p.optional_child("breakdown")) {
    double sum = 0;
    unsigned seen = 0;
    for (const std::string& key : b->keys()) {
      unsigned mask = 0;
      std::stringstream parts(key);
      for (std::string part; std::getline(parts, part, '+');) {
        const int i = category_index(part);
        if (i < 0 || (mask | seen) & (1u << i))
          b->error(key, "keys of categories array, input, readout, digital (each once; '+' joins categories)");
        mask |= 1u << i;
      }
      seen |= mask;
      const double share = b->get_number(key, 0, 1);
      sum += share;
      pb.breakdown.push_back({mask, share});
    }
    if (sum > 1.0 + 1e-6) b->error(b->keys().front(), "shares of the energy that sum to at most 1 (sum " + show_number(sum) + ")");
  }
  if (p.has("excludes")) {
    const YAML::Node ex = p.node()["excludes"];
    if (!ex.IsSequence()) p.error("excludes", "a list of categories: array, input, readout, digital");
    for (const auto& e : ex) {
      const std::string s = e.IsScalar() ? e.Scalar() : "";
      const int i = category_index(s);
      if (i < 0) p.error("excludes", "categories among array, input, readout, digital (got '" + s + "')");
      pb.excluded[static_cast<size_t>(i)] = true;
    }
  }
  return pb;
}

MacroFile macro_file_from_node(const YAML::Node& root, const std::string& where) {
  if (!root.IsMap()) fail(where, "file", "(not a mapping)", "a macro spec: name, source, macro:, published:");
  const Section top(root, where, "");
  top.check_keys({"name", "description", "macro", "published"});
  MacroFile m;
  m.source_file = where;
  m.name = top.get_string("name");
  m.description = top.get_string("description", "");
  if (!top.has("macro")) top.error("macro", "required: the macro as the paper describes it");
  const Section ms = top.child("macro");
  read_fields(ms, m.desc);
  finish_desc(m.desc, ms.where());
  if (!top.has("published")) top.error("published", "required: source, tops_per_w, role");
  m.published = read_published(top.child("published"));
  return m;
}

}  // namespace

MacroFile macro_file_from_text(const std::string& text, const std::string& where) {
  return macro_file_from_node(energy::yaml_from_text(text, where), where);
}

MacroFile macro_file_from_json(const nlohmann::json& j, const std::string& where) {
  return macro_file_from_node(energy::yaml_from_json_text(j.dump()), where);
}

nlohmann::json published_to_json(const Published& p) {
  nlohmann::json j = write_fields(p);
  if (!p.breakdown.empty()) {
    nlohmann::json b = nlohmann::json::object();
    for (const Published::Share& sh : p.breakdown) {
      std::string key;
      for (size_t i = 0; i < kCategories.size(); ++i)
        if (sh.mask & (1u << i)) {
          if (!key.empty()) key += '+';
          key += kCategories[i];
        }
      b[key] = sh.share;
    }
    j["breakdown"] = b;
  }
  nlohmann::json ex = nlohmann::json::array();
  for (size_t i = 0; i < kCategories.size(); ++i)
    if (p.excluded[i]) ex.push_back(kCategories[i]);
  if (!ex.empty()) j["excludes"] = ex;
  return j;
}

nlohmann::json macro_file_to_json(const MacroFile& m) {
  return {{"name", m.name},
          {"description", m.description},
          {"macro", write_fields(m.desc)},
          {"published", published_to_json(m.published)}};
}

MacroFile load_macro_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    fail(path, "file", "'" + path + "'", "cannot open the macro spec (a regular file)");
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) fail(path, "file", "'" + path + "'", "cannot read the macro spec");
  return macro_file_from_text(ss.str(), path);
}

std::string show_number(double v, int digits) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

nlohmann::json desc_to_json(const MacroDesc& d) { return report_fields(d); }

}  // namespace kvcim::cmodel::macro_model
