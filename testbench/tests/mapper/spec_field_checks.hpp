// Per-field checks of a spec file kind's field tables (kvcim/spec_fields.hpp), generated from the
// tables: for every row of a section, a randomly drawn legal value (a path: a shipped file drawn
// from the row's files) survives tree -> struct -> JSON -> struct; a value out of range, of the
// wrong type, a missing file, or a field that does not apply to the section's kind is refused
// with a message naming the section and key. The file kinds: hardware specs (configs/hw), macro
// files (configs/macros) and machine files (configs/machines), each with its tree writer, its
// tree reader and its shipped files below.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kvcim/cmodel/macro_model/macro_desc.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/machine.hpp"
#include "kvcim/spec_fields_json.hpp"

namespace kvcim::test {

namespace spec_checks {

using nlohmann::json;
namespace fs = std::filesystem;
namespace mm = kvcim::cmodel::macro_model;

// The files of the source tree a glob from the data root names ("configs/tech/*.yaml"), sorted,
// absolute and lexically normal.
inline std::vector<std::string> files_of(const std::string& glob) {
  const fs::path pattern = fs::path(KVCIM_SOURCE_DIR) / glob;
  const std::string suffix = pattern.filename().string().substr(1);  // "*.yaml" -> ".yaml"
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(pattern.parent_path())) {
    const std::string name = e.path().filename().string();
    if (name.size() > suffix.size() && name.ends_with(suffix))
      out.push_back(fs::absolute(e.path()).lexically_normal().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every shipped file of a glob, read by `load`.
template <class Doc>
std::vector<Doc> load_all(const std::string& glob, Doc (*load)(const std::string&)) {
  std::vector<Doc> out;
  for (const std::string& f : files_of(glob)) out.push_back(load(f));
  return out;
}

// The kinds of spec file: a document's tree, the document read back from one, the shipped ones,
// where a field's value sits in the tree and how errors name it (machine files below).
inline json doc_json(const mapper::HardwareSpec& hw) { return mapper::hardware_spec_to_json(hw); }
inline json doc_json(const mm::MacroFile& m) { return mm::macro_file_to_json(m); }
inline void read_doc(const json& j, mapper::HardwareSpec& out) { out = mapper::hardware_spec_from_json(j); }
inline json doc_json(const mapper::Machine& m) { return mapper::machine_file_to_json(m); }
inline void read_doc(const json& j, mm::MacroFile& out) { out = mm::macro_file_from_json(j); }
inline void read_doc(const json& j, mapper::Machine& out) { out = mapper::machine_file_from_json(j); }
inline const std::vector<mapper::HardwareSpec>& shipped_docs(const mapper::HardwareSpec*) {
  static const auto specs = load_all<mapper::HardwareSpec>("configs/hw/*.yaml", &mapper::load_hardware_spec);
  return specs;
}
inline const std::vector<mm::MacroFile>& shipped_docs(const mm::MacroFile*) {
  static const auto files = load_all<mm::MacroFile>("configs/macros/*.yaml", &mm::load_macro_file);
  return files;
}
inline const std::vector<mapper::Machine>& shipped_docs(const mapper::Machine*) {
  static const auto files = load_all<mapper::Machine>("configs/machines/*.yaml", &mapper::load_machine);
  return files;
}
// The section's node ("" is the top level).
inline json& section_of(json& j, const std::string& section) { return section.empty() ? j : j[section]; }
template <class Doc>
json& slot(const Doc*, json& j, const std::string& section, const std::string& key) {
  return section_of(j, section)[key];
}
// A machine file's fields are written {value: V, source: "..."}; errors name `key.value`.
inline json& slot(const mapper::Machine*, json& j, const std::string&, const std::string& key) {
  return j[key]["value"];
}
template <class Doc>
std::string field_name(const Doc*, const std::string& section, const std::string& key) {
  return section.empty() ? key : section + "." + key;
}
inline std::string field_name(const mapper::Machine*, const std::string&, const std::string& key) {
  return key + ".value";
}

// A legal value of the row's type V (its JSON form), different from `current` when the row allows it.
template <class S, class T, class V>
json draw_value(const SpecField<S, T>& row, const V& current, std::mt19937_64& rng) {
  const bool near_current = std::bernoulli_distribution(0.5)(rng);
  if constexpr (std::is_same_v<V, bool>) {
    return !current;
  } else if constexpr (std::is_enum_v<V>) {
    std::uniform_int_distribution<size_t> pick(0, row.choices.size() - 1);
    return std::string(row.choices[pick(rng)]);
  } else if constexpr (std::is_same_v<V, std::string>) {
    if (row.type() != SpecType::path) return "drawn text " + std::to_string(rng() % 100000);
    const std::vector<std::string> files = files_of(row.files);
    std::uniform_int_distribution<size_t> pick(0, files.size() - 1);
    return files.at(pick(rng));
  } else if (row.type() == SpecType::integer || row.type() == SpecType::bytes) {
    // half the draws near the current value (dependent ranges: rows_per_cycle <= rows), half anywhere
    const int64_t lo = row.ilo(), hi = row.ihi();
    const int64_t near = std::min<int64_t>(hi, lo + std::max<int64_t>(8, 2 * static_cast<int64_t>(current)));
    std::uniform_int_distribution<int64_t> d(lo, near_current ? near : hi);
    return d(rng);
  } else {
    const double near = std::min(row.hi, std::max(row.lo + 1.0, 2.0 * static_cast<double>(current)));
    std::uniform_real_distribution<double> d(row.lo, near_current ? near : row.hi);
    return d(rng);
  }
}
template <class S, class T>
json draw(const SpecField<S, T>& row, const T& current, std::mt19937_64& rng) {
  if constexpr (is_optional_field_v<T>) return draw_value(row, current.value_or(row.lo), rng);
  else return draw_value(row, current, rng);
}

// Values the row refuses: out of its range, of the wrong type, a file that does not exist.
template <class S, class T>
std::vector<json> illegal(const SpecField<S, T>& row) {
  const SpecType t = row.type();
  if (t == SpecType::boolean) return {"maybe", 2};
  if (t == SpecType::choice) return {"no_such_choice", 3};
  if (t == SpecType::text) return {"", json::array({1}), json::object({{"a", 1}})};
  if (t == SpecType::path) return {"no_such_file.yaml", std::string(KVCIM_SOURCE_DIR) + "/configs", "", json::array({1})};
  std::vector<json> out = {"abc", json::array({1})};
  if (t == SpecType::integer) {
    out.push_back(2.5);
    if (row.ihi() < std::numeric_limits<int64_t>::max()) out.push_back(row.ihi() + 1);
    out.push_back(row.ilo() - 1);
  } else if (t == SpecType::bytes) {
    out.push_back(-1);
    out.push_back(2.5);
  } else {
    out.push_back(row.hi * 2 + 1);
    out.push_back(row.lo > 0 ? row.lo / 2 : row.lo - 1);
  }
  return out;
}

template <class Doc>
std::string message_of(const json& j) {
  try {
    Doc d;
    read_doc(j, d);
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

// Every row of the section `section` ("" the top level) of Doc, whose struct `part` gives (a
// member pointer, or a function of the document), on the shipped documents.
template <class Doc, class Part>
void check_every_field(const std::string& section, Part part) {
  using S = std::remove_cvref_t<std::invoke_result_t<Part, const Doc&>>;
  constexpr const Doc* doc = nullptr;
  std::mt19937_64 rng(std::hash<std::string>{}(section));
  const S defaults{};  // (not S{} in the loop: an internal error of g++ 12 for the spec itself)
  int rows = 0;
  for_each_spec_field<S>([&](const auto& row) {
    if (!row.in_file) return;
    ++rows;
    const std::string field = field_name(doc, section, row.key);
    SCOPED_TRACE(field);
    bool legal = false, refused_kind = false;
    for (const Doc& hw : shipped_docs(doc)) {
      const S& s = std::invoke(part, hw);
      const json base = doc_json(hw);
      if (!row.applies(kind_mask(s))) {
        if (refused_kind) continue;
        json j = base;
        slot(doc, j, section, row.key) = detail::field_json(row, s.*row.member);
        const std::string e = message_of<Doc>(j);
        EXPECT_NE(e.find(field + " = "), std::string::npos) << e;
        EXPECT_NE(e.find("only meaningful for " + section + ".kind"), std::string::npos) << e;
        refused_kind = true;
        continue;
      }
      if (legal) continue;
      for (int attempt = 0; attempt < 40 && !legal; ++attempt) {
        json j = base;
        const json value = draw(row, s.*row.member, rng);
        slot(doc, j, section, row.key) = value;
        Doc got;
        try {
          read_doc(j, got);
        } catch (const Error& e) {
          // legal for the row but not with the rest of this spec (an ADC width its table lacks, a
          // softmax the digital tile has not): never refused for the row's own range
          EXPECT_EQ(std::string(e.what()).find(field + " = " + value.dump() + ": " + expected_text(row)), std::string::npos)
              << "a legal value refused: " << e.what();
          continue;
        }
        legal = true;
        const S& read = std::invoke(part, got);
        EXPECT_EQ(detail::field_json(row, read.*row.member), value);
        const json written = write_fields(read);
        if (detail::written(row, read.*row.member, defaults.*row.member)) {
          EXPECT_EQ(written.at(row.key), value);
        }
        // JSON -> struct -> JSON: the same document
        const json back = doc_json(got);
        Doc again;
        read_doc(back, again);
        EXPECT_EQ(doc_json(again), back);
        EXPECT_EQ(detail::field_json(row, std::invoke(part, again).*row.member), value);
      }
      for (const json& bad : illegal(row)) {
        json j = base;
        slot(doc, j, section, row.key) = bad;
        const std::string e = message_of<Doc>(j);
        EXPECT_NE(e.find(field + " = "), std::string::npos) << bad.dump() << ": " << e;
      }
    }
    EXPECT_TRUE(legal) << "no shipped document took a legal value";
    if (row.kinds != kAllKinds) {
      EXPECT_TRUE(refused_kind) << "no shipped document of another kind";
    }
  });
  EXPECT_GT(rows, 0);
}

// The document itself (its top level's table).
template <class Doc>
const Doc& whole(const Doc& d) {
  return d;
}

}  // namespace spec_checks

}  // namespace kvcim::test
