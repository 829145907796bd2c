// Checks of a spec field table (kvcim/spec_fields.hpp) field by field, generated from the table:
// for every row of a section of a document (a hardware spec, a macro file, a machine file, the
// SRAM node table, the macro model's constants), a randomly drawn legal value (a path: a shipped
// file drawn from the row's files) survives tree -> struct -> JSON -> struct; a value out of
// range, of the wrong type, a missing file, a sourced figure without its source, or a field that
// does not apply to the section's kind is refused with a message naming the section and key.
//
// A document kind says how it is written, read back and found among the shipped files by
// specialising file_kind<Doc>() (in its own test file).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/error.hpp"
#include "kvcim/spec_fields.hpp"
#include "kvcim/spec_fields_json.hpp"

namespace kvcim::test {

// The files of the source tree a glob from the data root names ("configs/tech/*.yaml", or one
// file), sorted, absolute and lexically normal.
inline std::vector<std::string> files_of(const std::string& glob) {
  const std::filesystem::path pattern = std::filesystem::path(KVCIM_SOURCE_DIR) / glob;
  const std::string name_glob = pattern.filename().string();
  if (!name_glob.starts_with("*")) return {std::filesystem::absolute(pattern).lexically_normal().string()};
  const std::string suffix = name_glob.substr(1);  // "*.yaml" -> ".yaml"
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(pattern.parent_path())) {
    const std::string name = e.path().filename().string();
    if (name.size() > suffix.size() && name.ends_with(suffix))
      out.push_back(std::filesystem::absolute(e.path()).lexically_normal().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// How a document kind is written, read back, and where its shipped files are.
template <class Doc>
struct FileKind {
  nlohmann::json (*to_json)(const Doc&);
  Doc (*from_json)(const nlohmann::json&);
  Doc (*load)(const std::string&);
  const char* glob;  // the shipped files, from the data root ("configs/hw/*.yaml")
};
template <class Doc>
FileKind<Doc> file_kind();

template <class Doc>
struct SpecDoc {
  static nlohmann::json to_json(const Doc& d) { return file_kind<Doc>().to_json(d); }
  static Doc from_json(const nlohmann::json& j) { return file_kind<Doc>().from_json(j); }
  // the shipped documents, the bases of the checks
  static const std::vector<Doc>& shipped() {
    static const std::vector<Doc> docs = [] {
      std::vector<Doc> out;
      for (const std::string& f : files_of(file_kind<Doc>().glob)) out.push_back(file_kind<Doc>().load(f));
      return out;
    }();
    return docs;
  }
};

// A legal value of the row's type V (its JSON form), different from `current` when the row allows it.
template <class S, class T, class V>
nlohmann::json draw_value(const SpecField<S, T>& row, const V& current, std::mt19937_64& rng) {
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
nlohmann::json draw(const SpecField<S, T>& row, const T& current, std::mt19937_64& rng) {
  if constexpr (is_optional_field_v<T>) return draw_value(row, current.value_or(row.lo), rng);
  else return draw_value(row, current, rng);
}

// The source a drawn sourced figure is given with.
inline const std::string kDrawnSource = "a drawn figure of the field-by-field test";

// A value as the file writes it: a sourced row's with its source.
template <class S, class T>
nlohmann::json file_form(const SpecField<S, T>& row, const nlohmann::json& v) {
  if (!row.provenance) return v;
  return {{"value", v}, {"source", kDrawnSource}};
}

// Values the row refuses: out of its range, of the wrong type (in the file's form), and for a
// sourced row its figure without a source, with both texts, or with a word for a reason.
template <class S, class T>
std::vector<nlohmann::json> illegal(const SpecField<S, T>& row) {
  using nlohmann::json;
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
  if (!row.provenance) return out;
  for (json& v : out) v = file_form(row, v);
  const double legal = row.lo;
  out.push_back(legal);                                    // a bare figure
  out.push_back({{"value", legal}});                        // no source
  out.push_back({{"value", legal}, {"source", "a word"}});  // no sentence
  out.push_back({{"value", legal}, {"source", kDrawnSource}, {"assumption", kDrawnSource}});
  return out;
}

template <class Doc>
std::string message_of(const nlohmann::json& j) {
  try {
    SpecDoc<Doc>::from_json(j);
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

// Every row of S, the section at `at` of each shipped Doc (named `section` in messages, "" for
// the document's top level), read from the document by `part`.
template <class Doc, SpecTable S>
void check_every_field(const std::string& section, const nlohmann::json::json_pointer& at,
                       const std::function<const S&(const Doc&)>& part) {
  using nlohmann::json;
  std::mt19937_64 rng(std::hash<std::string>{}(section));
  const S defaults{};  // (not S{} in the loop: an internal error of g++ 12 for the spec itself)
  int rows = 0;
  for_each_spec_field<S>([&](const auto& row) {
    if (!row.in_file) return;
    ++rows;
    const std::string field = section.empty() ? std::string(row.key) : section + "." + row.key;
    const std::string value_field = row.provenance ? field + ".value" : field;
    SCOPED_TRACE(field);
    bool legal = false, refused_kind = false;
    for (const Doc& doc : SpecDoc<Doc>::shipped()) {
      const S& s = part(doc);
      const json base = SpecDoc<Doc>::to_json(doc);
      if (!row.applies(kind_mask(s))) {
        if (refused_kind) continue;
        json j = base;
        j[at][row.key] = detail::row_json(row, s);
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
        j[at][row.key] = file_form(row, value);
        Doc got;
        try {
          got = SpecDoc<Doc>::from_json(j);
        } catch (const Error& e) {
          // legal for the row but not with the rest of this document (an ADC width its table
          // lacks, a node out of order): never refused for the row's own range
          EXPECT_EQ(std::string(e.what()).find(value_field + " = " + value.dump() + ": " + expected_text(row)),
                    std::string::npos)
              << "a legal value refused: " << e.what();
          continue;
        }
        legal = true;
        const S& read = part(got);
        EXPECT_EQ(detail::field_json(row, read.*row.member), value);
        if (row.provenance) {
          EXPECT_EQ(read.*row.provenance, "source: " + kDrawnSource);
        }
        const json written = write_fields(read);
        if (detail::written(row, read.*row.member, defaults.*row.member)) {
          EXPECT_EQ(written.at(row.key), file_form(row, value));
        }
        // JSON -> struct -> JSON: the same document
        const json back = SpecDoc<Doc>::to_json(got);
        const Doc again = SpecDoc<Doc>::from_json(back);
        EXPECT_EQ(SpecDoc<Doc>::to_json(again), back);
        EXPECT_EQ(detail::field_json(row, part(again).*row.member), value);
      }
      for (const json& bad : illegal(row)) {
        json j = base;
        j[at][row.key] = bad;
        const std::string e = message_of<Doc>(j);
        EXPECT_NE(e.find(field), std::string::npos) << bad.dump() << ": " << e;
        EXPECT_TRUE(e.find(value_field + " = ") != std::string::npos || e.find(field + " = ") != std::string::npos ||
                    e.find(field + ".source = ") != std::string::npos || e.find(field + ".assumption = ") != std::string::npos)
            << bad.dump() << ": " << e;
      }
    }
    EXPECT_TRUE(legal) << "no shipped document took a legal value";
    if (row.kinds != kAllKinds) {
      EXPECT_TRUE(refused_kind) << "no shipped document of another kind";
    }
  });
  EXPECT_GT(rows, 0);
}

// Every row of the document's own top level.
template <class Doc>
void check_every_top_field() {
  check_every_field<Doc, Doc>("", nlohmann::json::json_pointer(""), [](const Doc& d) -> const Doc& { return d; });
}

// The section `section` of the document, its member `part`.
template <class Doc, SpecTable S>
void check_every_field(const std::string& section, S Doc::*part) {
  check_every_field<Doc, S>(section, nlohmann::json::json_pointer("/" + section),
                            [part](const Doc& d) -> const S& { return d.*part; });
}

}  // namespace kvcim::test
