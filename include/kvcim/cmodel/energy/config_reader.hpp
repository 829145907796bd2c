// Strict reading of YAML configuration files (technology tables, hardware specs).
//
// Every field is checked: an unknown key is an error that suggests the closest known key (edit
// distance); a value of the wrong type, with the wrong unit, negative or out of range is an
// error naming the file, line, field and value. Shared by the technology-table parser and the
// mapper's hardware-spec parser so that both speak the same error language.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvcim::cmodel::energy {

// Levenshtein distance (insert, delete, substitute each cost 1).
int edit_distance(std::string_view a, std::string_view b);
// The element of `known` closest to `key` by edit distance (ties: the first); "" if empty.
std::string closest_key(std::string_view key, const std::vector<std::string>& known);
// " (did you mean 'x'?)" when some known key is plausibly meant, else a list of known keys.
std::string suggestion(std::string_view key, const std::vector<std::string>& known);

// Physical quantities written either as a plain number in the field's unit (the unit is in the
// field name: energy_pj, latency_ns, bytes) or as a string "1.67 pJ", "800 ps", "2 MiB".
enum class Unit { pj, ns, bytes, count };  // count: a plain number, no unit

// A mapping node of a configuration file. `file` names the source (a path, or "<dict>" for
// in-memory trees); `path` is the dotted name of this section ("" at the top level); `folder` the
// one the file names other files from (its own folder; a dict's: the caller's), which its child
// sections share.
class Section {
 public:
  Section(YAML::Node node, std::string file, std::string path, std::string folder = "");

  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  // "file:line" of the key (or of this section when the key is absent).
  std::string where(const std::string& key = "") const;
  // "path.key" (or "key" at the top level).
  std::string field(const std::string& key) const;

  // Every key must be one of `known`; otherwise throws with a suggestion.
  void check_keys(const std::vector<std::string>& known) const;
  bool has(const std::string& key) const;
  std::vector<std::string> keys() const;

  Section child(const std::string& key) const;            // required mapping
  std::optional<Section> optional_child(const std::string& key) const;

  int64_t get_int(const std::string& key, int64_t lo, int64_t hi) const;
  int64_t get_int(const std::string& key, int64_t lo, int64_t hi, int64_t fallback) const;
  double get_number(const std::string& key, double lo, double hi) const;
  double get_number(const std::string& key, double lo, double hi, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  // A file named relative to the folder (or absolute), as a lexically normal path; an error
  // "<expected>; no such file: <path>" unless it is a regular file (a FIFO or a device would
  // block the reader).
  std::string get_file(const std::string& key, const std::string& expected) const;
  // One of `choices`; the index of the choice.
  int get_choice(const std::string& key, const std::vector<std::string>& choices) const;
  int get_choice(const std::string& key, const std::vector<std::string>& choices,
                 int fallback) const;
  // A non-negative quantity in `unit` (number, or string with a unit of the same dimension).
  double get_quantity(const std::string& key, Unit unit) const;
  double get_quantity(const std::string& key, Unit unit, double fallback) const;

  // Throws kvcim::Error "<file>:<line>: <path.key> = <value>: <expected>".
  [[noreturn]] void error(const std::string& key, const std::string& expected) const;

 private:
  YAML::Node node_;
  std::string file_, path_, folder_;
};

// A field written `key: {value: V, source: "..."}` or `{value: V, assumption: "..."}` (machine
// files, the SRAM node table): V in [lo, hi], and exactly one of the two texts, a sentence (a
// word is no reasoning). provenance is "source: ..." or "assumption: ...".
struct Sourced {
  double value = 0;
  std::string provenance;
};
Sourced get_sourced(const Section& parent, const std::string& key, double lo, double hi);

// A scalar as written (for messages); maps and sequences summarised.
std::string show(const YAML::Node& node);

// Parses "<number> [unit]" for `unit`'s dimension and returns the value in `unit`; nullopt when
// it is not a number or the unit is unknown or of another dimension.
std::optional<double> parse_quantity(const std::string& text, Unit unit);

// Converts a JSON-like tree to a YAML node (YAML is a superset of JSON), so a spec built as a
// Python dict or nlohmann::json goes through the very same checks as a file.
YAML::Node yaml_from_json_text(const std::string& json_text);
// A YAML text's tree; kvcim::Error naming `where` when it is not YAML (the parser's message).
YAML::Node yaml_from_text(const std::string& text, const std::string& where);
// A YAML file's tree; kvcim::Error naming the file when it cannot be opened ("cannot open the
// <what>") or is not YAML (the parser's message).
YAML::Node load_yaml_file(const std::string& path, const std::string& what);

}  // namespace kvcim::cmodel::energy
