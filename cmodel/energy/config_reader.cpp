#include "kvcim/cmodel/energy/config_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>

#include "kvcim/error.hpp"
#include "kvcim/text.hpp"

namespace kvcim::cmodel::energy {

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_key(std::string_view key, const std::vector<std::string>& known) {
  std::string best;
  int best_d = std::numeric_limits<int>::max();
  for (const auto& k : known) {
    const int d = edit_distance(key, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best;
}

std::string suggestion(std::string_view key, const std::vector<std::string>& known) {
  const std::string best = closest_key(key, known);
  // A suggestion is only useful when it is plausibly what was meant: at most a third of the
  // longer name differs (a typo), otherwise list what is allowed.
  if (!best.empty()) {
    const int d = edit_distance(key, best);
    const size_t longer = std::max(key.size(), best.size());
    if (d * 3 <= static_cast<int>(longer) || d <= 2) return "did you mean '" + best + "'?";
  }
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return "expected one of: " + list + " (closest: '" + best + "')";
}

std::string show(const YAML::Node& node) {
  if (!node || node.IsNull()) return "(empty)";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "(a list)";
  return "(a mapping)";
}

namespace {

struct UnitDef {
  const char* name;
  Unit unit;
  double factor;  // value in `unit` per one of `name`
};
// Case matters for SI prefixes (mJ vs MJ never occur here, but ms vs Ms would); bytes accept
// both IEC (KiB) and SI (kB) prefixes.
const UnitDef kUnits[] = {
    {"aJ", Unit::pj, 1e-6}, {"fJ", Unit::pj, 1e-3}, {"pJ", Unit::pj, 1.0},
    {"nJ", Unit::pj, 1e3},  {"uJ", Unit::pj, 1e6},  {"fs", Unit::ns, 1e-6},
    {"ps", Unit::ns, 1e-3}, {"ns", Unit::ns, 1.0},  {"us", Unit::ns, 1e3},
    {"ms", Unit::ns, 1e6},  {"B", Unit::bytes, 1.0}, {"kB", Unit::bytes, 1e3},
    {"KB", Unit::bytes, 1e3}, {"MB", Unit::bytes, 1e6}, {"GB", Unit::bytes, 1e9},
    {"TB", Unit::bytes, 1e12}, {"KiB", Unit::bytes, 1024.0},
    {"MiB", Unit::bytes, 1048576.0}, {"GiB", Unit::bytes, 1073741824.0},
    {"TiB", Unit::bytes, 1099511627776.0},
};

const char* unit_name(Unit u) {
  switch (u) {
    case Unit::pj: return "pJ (or aJ, fJ, nJ, uJ)";
    case Unit::ns: return "ns (or fs, ps, us, ms)";
    case Unit::bytes: return "bytes (or B, kB, MB, GB, KiB, MiB, GiB, TiB)";
    case Unit::count: return "a plain number (no unit)";
  }
  return "";
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (...) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::optional<double> parse_quantity(const std::string& text, Unit unit) {
  if (auto v = parse_number(text)) return v;
  if (unit == Unit::count) return std::nullopt;
  // "<number><spaces><unit>"
  size_t split = text.size();
  while (split > 0 && std::isalpha(static_cast<unsigned char>(text[split - 1]))) --split;
  if (split == text.size() || split == 0) return std::nullopt;
  std::string num = text.substr(0, split);
  while (!num.empty() && num.back() == ' ') num.pop_back();
  const std::string u = text.substr(split);
  auto v = parse_number(num);
  if (!v) return std::nullopt;
  for (const auto& d : kUnits)
    if (u == d.name) {
      if (d.unit != unit) return std::nullopt;
      return *v * d.factor;
    }
  return std::nullopt;
}

YAML::Node yaml_from_json_text(const std::string& json_text) {
  try {
    return YAML::Load(json_text);
  } catch (const YAML::Exception& e) {
    fail("<dict>", "text", "(not JSON/YAML)", e.what());
  }
}

YAML::Node yaml_from_text(const std::string& text, const std::string& where) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail(where, "yaml", "(syntax)", e.what());
  }
}

YAML::Node load_yaml_file(const std::string& path, const std::string& what) {
  std::error_code ec;  // a folder opens as a stream and fails on reading: refused here, by name
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "file", "'" + path + "'", "cannot open the " + what);
  try {
    return YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    fail(path, "file", "'" + path + "'", "cannot open the " + what);
  } catch (const YAML::Exception& e) {
    fail(path, "yaml", "(syntax)", e.what());
  }
}

Section::Section(YAML::Node node, std::string file, std::string path, std::string folder)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)), folder_(std::move(folder)) {
  if (!node_.IsMap())
    fail(where(), path_.empty() ? "(top level)" : path_, show(node_), "expected a mapping of keys");
}

std::string Section::where(const std::string& key) const {
  YAML::Mark mark = node_.Mark();
  if (!key.empty() && node_.IsMap()) {
    for (const auto& kv : node_)
      if (kv.first.Scalar() == key) {
        mark = kv.first.Mark();
        break;
      }
  }
  if (mark.line < 0) return file_;
  return file_ + ":" + std::to_string(mark.line + 1);
}

std::string Section::field(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void Section::error(const std::string& key, const std::string& expected) const {
  const YAML::Node v = has(key) ? node_[key] : YAML::Node();
  fail(where(key), field(key), show(v), expected);
}

void Section::check_keys(const std::vector<std::string>& known) const {
  std::vector<std::string> seen;
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar())
      fail(where(), path_.empty() ? "(top level)" : path_, "(non-scalar key)", "keys are names");
    const std::string k = kv.first.Scalar();
    // YAML keys are unique; yaml-cpp would silently read the first of two.
    if (std::find(seen.begin(), seen.end(), k) != seen.end()) {
      const int line = kv.first.Mark().line;  // the second occurrence
      fail(line < 0 ? file_ : file_ + ":" + std::to_string(line + 1), field(k), show(kv.second),
           "duplicate key: given twice in this section");
    }
    seen.push_back(k);
    if (std::find(known.begin(), known.end(), k) == known.end())
      fail(where(k), field(k), show(kv.second), "unknown key; " + suggestion(k, known));
  }
}

bool Section::has(const std::string& key) const {
  for (const auto& kv : node_)
    if (kv.first.Scalar() == key) return true;
  return false;
}

std::vector<std::string> Section::keys() const {
  std::vector<std::string> out;
  for (const auto& kv : node_) out.push_back(kv.first.Scalar());
  return out;
}

Section Section::child(const std::string& key) const {
  if (!has(key)) error(key, "required section is missing");
  const YAML::Node n = node_[key];
  if (!n.IsMap()) error(key, "expected a mapping of keys");
  return Section(n, file_, field(key), folder_);
}

std::optional<Section> Section::optional_child(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return child(key);
}

int64_t Section::get_int(const std::string& key, int64_t lo, int64_t hi) const {
  if (!has(key)) error(key, "required field is missing");
  const YAML::Node n = node_[key];
  if (!n.IsScalar()) error(key, "expected an integer");
  auto v = parse_integer(n.Scalar());
  if (!v) {
    // 1e6 style integers are accepted when they are whole numbers.
    auto d = parse_number(n.Scalar());
    if (d && std::floor(*d) == *d && std::fabs(*d) < 9e15) v = static_cast<int64_t>(*d);
  }
  if (!v) error(key, "expected an integer");
  if (*v < lo || *v > hi)
    error(key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return *v;
}

int64_t Section::get_int(const std::string& key, int64_t lo, int64_t hi, int64_t fallback) const {
  return has(key) ? get_int(key, lo, hi) : fallback;
}

double Section::get_number(const std::string& key, double lo, double hi) const {
  if (!has(key)) error(key, "required field is missing");
  const YAML::Node n = node_[key];
  if (!n.IsScalar()) error(key, "expected a number");
  auto v = parse_number(n.Scalar());
  if (!v) error(key, "expected a number");
  if (*v < lo || *v > hi) error(key, "expected a number in [" + fmt(lo) + ", " + fmt(hi) + "]");
  return *v;
}

double Section::get_number(const std::string& key, double lo, double hi, double fallback) const {
  return has(key) ? get_number(key, lo, hi) : fallback;
}

bool Section::get_bool(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node n = node_[key];
  if (n.IsScalar()) {
    const std::string s = n.Scalar();
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  error(key, "expected true or false");
}

std::string Section::get_string(const std::string& key) const {
  if (!has(key)) error(key, "required field is missing");
  const YAML::Node n = node_[key];
  if (!n.IsScalar() || n.Scalar().empty()) error(key, "expected a non-empty text");
  return n.Scalar();
}

std::string Section::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

std::string Section::get_file(const std::string& key, const std::string& expected) const {
  const std::string given = get_string(key);
  const std::filesystem::path p = std::filesystem::path(given).is_absolute() ? std::filesystem::path(given)
                                                                             : std::filesystem::path(folder_) / given;
  std::error_code ec;  // a path the OS rejects (too long, ...) is "no such file", not a throw
  if (!std::filesystem::is_regular_file(p, ec)) error(key, expected + "; no such file: " + p.lexically_normal().string());
  return p.lexically_normal().string();
}

int Section::get_choice(const std::string& key, const std::vector<std::string>& choices) const {
  const std::string s = get_string(key);
  for (size_t i = 0; i < choices.size(); ++i)
    if (choices[i] == s) return static_cast<int>(i);
  error(key, suggestion(s, choices));
}

int Section::get_choice(const std::string& key, const std::vector<std::string>& choices,
                        int fallback) const {
  return has(key) ? get_choice(key, choices) : fallback;
}

double Section::get_quantity(const std::string& key, Unit unit) const {
  if (!has(key)) error(key, "required field is missing");
  const YAML::Node n = node_[key];
  if (!n.IsScalar()) error(key, std::string("expected a quantity in ") + unit_name(unit));
  auto v = parse_quantity(n.Scalar(), unit);
  if (!v) error(key, std::string("expected a quantity in ") + unit_name(unit));
  if (*v < 0) error(key, "expected a non-negative quantity");
  return *v;
}

double Section::get_quantity(const std::string& key, Unit unit, double fallback) const {
  return has(key) ? get_quantity(key, unit) : fallback;
}

Sourced get_sourced(const Section& parent, const std::string& key, double lo, double hi) {
  constexpr size_t kMinProvenance = 16;  // a citation or a reasoning is a sentence, not a word
  const Section s = parent.child(key);
  s.check_keys({"value", "source", "assumption"});
  Sourced out;
  out.value = s.get_number("value", lo, hi);
  const bool has_src = s.has("source"), has_asm = s.has("assumption");
  if (has_src == has_asm)
    s.error(has_src ? "assumption" : "value",
            "give exactly one of source: (where the figure is published) or assumption: (the reasoning)");
  const std::string which = has_src ? "source" : "assumption";
  const std::string text = s.get_string(which);
  if (text.size() < kMinProvenance) s.error(which, "state the citation or the reasoning in a sentence");
  out.provenance = which + ": " + text;
  return out;
}

}  // namespace kvcim::cmodel::energy
