#include "kvcim/cmodel/macro_model/macro_desc.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel::macro_model {

namespace {

using energy::Section;

template <size_t N>
std::vector<std::string> to_strings(const std::array<std::string_view, N>& a) {
  return {a.begin(), a.end()};
}

std::vector<std::string> choices_of(std::string_view key) {
  if (key == "cell") return to_strings(kCellChoices);
  if (key == "input_encoding") return to_strings(kEncodingChoices);
  if (key == "weight_merge") return to_strings(kMergeChoices);
  return to_strings(kReadoutChoices);
}

double* member(MacroDesc& d, std::string_view key) {
#define KVCIM_MD_PTR(kind, name, unit, lo, hi, def, doc) \
  if (key == #name) return &d.name;
  KVCIM_MACRO_DESC_FIELDS(KVCIM_MD_PTR)
#undef KVCIM_MD_PTR
  return nullptr;
}

MacroDesc read_desc(const Section& s) {
  std::vector<std::string> keys;
  for (const FieldRow& r : kMacroDescFields) keys.emplace_back(r.key);
  s.check_keys(keys);
  MacroDesc d;
  for (const FieldRow& r : kMacroDescFields) {
    const std::string key(r.key);
    double& v = *member(d, r.key);
    if (r.kind == FieldKind::C) {
      v = static_cast<double>(s.get_choice(key, choices_of(r.key)));
    } else if (std::isnan(r.fallback)) {
      if (!s.has(key)) s.error(key, std::string("required: ") + std::string(r.doc));
      v = s.get_number(key, r.lo, r.hi);
    } else if (s.has(key)) {
      v = s.get_number(key, r.lo, r.hi);
    }
  }
  return d;
}

int category_index(std::string_view s) {
  for (size_t i = 0; i < kCategories.size(); ++i)
    if (kCategories[i] == s) return static_cast<int>(i);
  return -1;
}

bool whole(double v) { return v == std::floor(v); }

}  // namespace

void finish_desc(MacroDesc& d, const std::string& where) {
  for (const char* k : {"rows", "cols", "cell_bits", "input_bits", "input_bits_per_cycle", "weight_bits",
                        "adc_bits", "readout_count", "output_bits"})
    if (!whole(*member(d, k))) fail(where, k, show_number(*member(d, k)), "a whole number");
  if (d.array_vdd_v == kDerived) d.array_vdd_v = d.vdd_v;
  check_logic_supply(d.node_nm, d.vdd_v, where);
  if (d.input_bits_per_cycle > d.input_bits)
    fail(where, "input_bits_per_cycle", show_number(d.input_bits_per_cycle),
         "at most input_bits = " + show_number(d.input_bits));
  const bool digital_readout = d.readout_kind() == Readout::adder_tree;
  if (digital_readout != (d.encoding() == Encoding::digital))
    fail(where, "input_encoding", std::string(kEncodingChoices[static_cast<size_t>(d.input_encoding)]),
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

MacroFile macro_file_from_text(const std::string& text, const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail(where, "yaml", "(syntax)", e.what());
  }
  if (!root.IsMap()) fail(where, "file", "(not a mapping)", "a macro spec: name, source, macro:, published:");
  const Section top(root, where, "");
  top.check_keys({"name", "description", "macro", "published"});
  MacroFile m;
  m.source_file = where;
  m.name = top.get_string("name");
  m.description = top.get_string("description", "");
  if (!top.has("macro")) top.error("macro", "required: the macro as the paper describes it");
  const Section ms = top.child("macro");
  m.desc = read_desc(ms);
  finish_desc(m.desc, ms.where());
  if (!top.has("published")) top.error("published", "required: source, tops_per_w, role");
  const Section p = top.child("published");
  std::vector<std::string> pkeys = {"source", "tops_per_w", "tops_per_mm2", "gops", "area_mm2",
                                    "breakdown", "excludes", "role", "conditions"};
  p.check_keys(pkeys);
  Published& pb = m.published;
  pb.source = p.get_string("source");
  if (pb.source.size() < 8) p.error("source", "a citation: authors or venue, year, and where the figure is read");
  pb.tops_per_w = p.get_number("tops_per_w", 1e-6, 1e7);
  if (p.has("tops_per_mm2")) pb.tops_per_mm2 = p.get_number("tops_per_mm2", 1e-9, 1e7);
  if (p.has("gops")) pb.gops = p.get_number("gops", 1e-9, 1e9);
  if (p.has("area_mm2")) pb.area_mm2 = p.get_number("area_mm2", 1e-9, 1e6);
  pb.role = static_cast<Role>(p.get_choice("role", to_strings(kRoleChoices)));
  pb.precision_note = p.get_string("conditions", "");
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
  return m;
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

nlohmann::json desc_to_json(const MacroDesc& d) {
  nlohmann::json j = nlohmann::json::object();
  MacroDesc copy = d;
  for (const FieldRow& r : kMacroDescFields) {
    const double v = *member(copy, r.key);
    if (r.kind == FieldKind::C)
      j[std::string(r.key)] = choices_of(r.key).at(static_cast<size_t>(v));
    else
      j[std::string(r.key)] = v;
  }
  return j;
}

std::string desc_fields_markdown() {
  std::ostringstream o;
  o << "| field | unit | range | default | meaning |\n| --- | --- | --- | --- | --- |\n";
  for (const FieldRow& r : kMacroDescFields) {
    o << "| `" << r.key << "` | " << r.unit << " | ";
    if (r.kind == FieldKind::C) o << "choice";
    else o << show_number(r.lo) << " .. " << show_number(r.hi);
    o << " | "
      << (std::isnan(r.fallback) ? std::string("required") : r.fallback == kDerived ? std::string("derived") : show_number(r.fallback))
      << " | " << r.doc << " |\n";
  }
  return o.str();
}

}  // namespace kvcim::cmodel::macro_model
