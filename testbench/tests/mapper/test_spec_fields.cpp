// The spec's field tables (kvcim/spec_fields.hpp), field by field, generated from the tables:
// for every row of every section of a hardware spec and of a macro file, a randomly drawn legal
// value survives YAML/dict -> struct -> JSON -> struct; a value out of range, of the wrong type,
// or a field that does not apply to the section's kind is refused with a message naming the
// section and key.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "kvcim/cmodel/macro_model/macro_desc.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/spec_fields_json.hpp"

using namespace kvcim;
using namespace kvcim::mapper;
using nlohmann::json;
namespace fs = std::filesystem;
namespace mm = kvcim::cmodel::macro_model;

namespace {

// Every shipped file of a folder, read by `load`.
template <class Doc>
std::vector<Doc> load_all(const char* dir, Doc (*load)(const std::string&)) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(std::string(KVCIM_SOURCE_DIR) + dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<Doc> out;
  for (const auto& f : files) out.push_back(load(f.string()));
  return out;
}

// The two kinds of spec file: a document's tree and the document read back from one.
json doc_json(const HardwareSpec& hw) { return hardware_spec_to_json(hw); }
json doc_json(const mm::MacroFile& m) { return mm::macro_file_to_json(m); }
void read_doc(const json& j, HardwareSpec& out) { out = hardware_spec_from_json(j); }
void read_doc(const json& j, mm::MacroFile& out) { out = mm::macro_file_from_json(j); }
const std::vector<HardwareSpec>& shipped(const HardwareSpec*) {
  static const auto specs = load_all<HardwareSpec>("/configs/hw", [](const std::string& p) { return load_hardware_spec(p); });
  return specs;
}
const std::vector<mm::MacroFile>& shipped(const mm::MacroFile*) {
  static const auto files = load_all<mm::MacroFile>("/configs/macros", [](const std::string& p) { return mm::load_macro_file(p); });
  return files;
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
    return "drawn text " + std::to_string(rng() % 100000);
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

// Values the row refuses: out of its range, of the wrong type.
template <class S, class T>
std::vector<json> illegal(const SpecField<S, T>& row) {
  const SpecType t = row.type();
  if (t == SpecType::boolean) return {"maybe", 2};
  if (t == SpecType::choice) return {"no_such_choice", 3};
  if (t == SpecType::text) return {"", json::array({1}), json::object({{"a", 1}})};
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

template <class Doc, SpecTable S>
void check_every_field(const std::string& section, S Doc::*part) {
  std::mt19937_64 rng(std::hash<std::string>{}(section));
  int rows = 0;
  for_each_spec_field<S>([&](const auto& row) {
    if (!row.in_file) return;
    ++rows;
    const std::string field = section + "." + row.key;
    SCOPED_TRACE(field);
    bool legal = false, refused_kind = false;
    for (const Doc& hw : shipped(static_cast<const Doc*>(nullptr))) {
      const S& s = hw.*part;
      const json base = doc_json(hw);
      if (!row.applies(kind_mask(s))) {
        if (refused_kind) continue;
        json j = base;
        j[section][row.key] = detail::field_json(row, s.*row.member);
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
        j[section][row.key] = value;
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
        EXPECT_EQ(detail::field_json(row, got.*part.*row.member), value);
        const json written = write_fields(got.*part);
        if (detail::written(row, got.*part.*row.member, S{}.*row.member)) {
          EXPECT_EQ(written.at(row.key), value);
        }
        // JSON -> struct -> JSON: the same spec
        const json back = doc_json(got);
        Doc again;
        read_doc(back, again);
        EXPECT_EQ(doc_json(again), back);
        EXPECT_EQ(detail::field_json(row, again.*part.*row.member), value);
      }
      for (const json& bad : illegal(row)) {
        json j = base;
        j[section][row.key] = bad;
        const std::string e = message_of<Doc>(j);
        EXPECT_NE(e.find(field + " = "), std::string::npos) << bad.dump() << ": " << e;
      }
    }
    EXPECT_TRUE(legal) << "no shipped spec took a legal value";
    if (row.kinds != kAllKinds) {
      EXPECT_TRUE(refused_kind) << "no shipped spec of another kind";
    }
  });
  EXPECT_GT(rows, 0);
}

TEST(SpecFields, EveryMacroFieldRoundTripsAndRefusesBadValues) { check_every_field("macro", &HardwareSpec::macro); }
TEST(SpecFields, EveryOrganizationFieldRoundTripsAndRefusesBadValues) {
  check_every_field("organization", &HardwareSpec::organization);
}
TEST(SpecFields, EveryKvFieldRoundTripsAndRefusesBadValues) { check_every_field("kv", &HardwareSpec::kv); }
TEST(SpecFields, EveryPrecisionFieldRoundTripsAndRefusesBadValues) {
  check_every_field("precision", &HardwareSpec::precision);
}
TEST(SpecFields, EveryBaselineFieldRoundTripsAndRefusesBadValues) {
  check_every_field("baseline", &HardwareSpec::baseline);
}
TEST(SpecFields, EveryComparisonFieldRoundTripsAndRefusesBadValues) {
  check_every_field("comparison", &HardwareSpec::comparison);
}
TEST(SpecFields, EveryBufferFieldRoundTripsAndRefusesBadValues) { check_every_field("buffer", &HardwareSpec::buffer); }
TEST(SpecFields, EveryOffchipFieldRoundTripsAndRefusesBadValues) { check_every_field("offchip", &HardwareSpec::offchip); }
TEST(SpecFields, EveryDigitalFieldRoundTripsAndRefusesBadValues) { check_every_field("digital", &HardwareSpec::digital); }

TEST(SpecFields, EveryMacroFileMacroFieldRoundTripsAndRefusesBadValues) {
  check_every_field("macro", &mm::MacroFile::desc);
}
TEST(SpecFields, EveryMacroFilePublishedFieldRoundTripsAndRefusesBadValues) {
  check_every_field("published", &mm::MacroFile::published);
}

// The kv section's analog fields reach the tile by key: every shared row, set to a value of its
// own, arrives in HardwareSpec::tile.
TEST(SpecFields, TheTileGetsEveryAnalogFieldOfTheKvSection) {
  HardwareSpec hw = load_hardware_spec(std::string(KVCIM_SOURCE_DIR) + "/configs/hw/gain_cell_kv.yaml");
  ASSERT_EQ(hw.kv.kind, cmodel::cim::TileKind::analog);
  int shared = 0;
  for_each_spec_field<KvSpec>([&](const auto& row) {
    if (row.kinds == kAllKinds) return;
    auto& v = hw.kv.*row.member;
    using T = std::remove_cvref_t<decltype(v)>;
    if constexpr (std::is_same_v<T, bool>) v = !v;
    else if constexpr (std::is_enum_v<T>) v = static_cast<T>((static_cast<int>(v) + 1) % row.choices.size());
    else v = static_cast<T>(row.lo + (row.hi - row.lo) / 3);
  });
  const cmodel::cim::TileParams p = hw.tile(8);
  for_each_spec_field<KvSpec>([&](const auto& row) {
    if (row.kinds == kAllKinds) return;
    for_each_spec_field<cmodel::cim::TileParams>([&](const auto& t) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(p.*t.member)>,
                                   std::remove_cvref_t<decltype(hw.kv.*row.member)>>)
        if (std::string_view(t.key) == row.key) {
          ++shared;
          EXPECT_TRUE(p.*t.member == hw.kv.*row.member) << row.key;
        }
    });
  });
  EXPECT_GE(shared, 15);
}

// check_fields holds a struct's values to the same ranges (after a program set them).
TEST(SpecFields, CheckFieldsNamesTheFieldAndItsRange) {
  KvSpec k;
  k.kind = cmodel::cim::TileKind::analog;
  k.adc_bits = 40;
  try {
    check_fields(k, "spec", "kv.");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "spec: kv.adc_bits = 40: expected an integer in [2, 30]");
  }
  k.kind = cmodel::cim::TileKind::digital;  // the analog rows do not apply
  EXPECT_NO_THROW(check_fields(k, "spec", "kv."));
}

}  // namespace
