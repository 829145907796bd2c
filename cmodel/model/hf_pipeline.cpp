#include "hf_pipeline.hpp"

#include <algorithm>

#include "kvcim/error.hpp"
#include "unicode.hpp"

namespace kvcim::cmodel {

using json = nlohmann::json;

namespace hf {
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

std::string excerpt(const json& j, size_t n) { return j.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, n); }
}  // namespace hf

using hf::excerpt;
using hf::kMeta;
using hf::replace_all;

namespace {

// GPT-2's pre-tokenizer pattern (ByteLevel with use_regex)
const char* kGpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";


std::string type_of(const json& x) {
  return x.is_object() && x.contains("type") && x["type"].is_string() ? x["type"].get<std::string>() : "?";
}


bool bool_field(const std::string& where, const json& o, const char* key, bool fallback, const std::string& field) {
  if (!o.contains(key) || o[key].is_null()) return fallback;
  if (!o[key].is_boolean()) fail(where, field + "." + key, excerpt(o[key]), "expected true or false");
  return o[key].get<bool>();
}

std::string string_field(const std::string& where, const json& o, const char* key, const std::string& field) {
  if (!o.contains(key) || !o[key].is_string()) fail(where, field + "." + key, o.contains(key) ? excerpt(o[key]) : "missing", "expected a string");
  return o[key].get<std::string>();
}

// Steps of a component that may be a Sequence of them (normalizers / pretokenizers / processors / decoders).
std::vector<std::pair<json, std::string>> steps_of(const std::string& where, const json& c, const std::string& field,
                                                   const char* list_key) {
  std::vector<std::pair<json, std::string>> out;
  if (c.is_null()) return out;
  if (!c.is_object()) fail(where, field, excerpt(c), "expected an object or null");
  if (type_of(c) != "Sequence") {
    out.emplace_back(c, field);
    return out;
  }
  if (!c.contains(list_key) || !c[list_key].is_array())
    fail(where, field + "." + list_key, "missing", "expected the list of a Sequence");
  for (size_t i = 0; i < c[list_key].size(); ++i) {
    const std::string f = field + "." + list_key + "[" + std::to_string(i) + "]";
    for (auto& s : steps_of(where, c[list_key][i], f, list_key)) out.push_back(std::move(s));
  }
  return out;
}

[[noreturn]] void unsupported(const std::string& where, const std::string& field, const json& x, const std::string& supported) {
  fail(where, field, type_of(x) == "?" ? excerpt(x) : type_of(x), "not supported (supported: " + supported + ")");
}

TokenRegex regex_of(const std::string& where, const std::string& field, const std::string& pattern) {
  try {
    return TokenRegex::compile(pattern);
  } catch (const RegexError& e) {
    fail(where, field, "'" + pattern.substr(0, 60) + "'", e.what());
  }
}

void parse_normalizer(const std::string& where, const json& j, HfPipeline& p) {
  for (const auto& [x, field] : steps_of(where, j.value("normalizer", json()), "normalizer", "normalizers")) {
    const std::string type = type_of(x);
    if (type == "NFC") {
      p.normalizer.push_back({HfPipeline::Normalize::Kind::nfc, "", ""});
    } else if (type == "Prepend") {
      p.normalizer.push_back({HfPipeline::Normalize::Kind::prepend, string_field(where, x, "prepend", field), ""});
    } else if (type == "Replace") {
      if (!x.contains("pattern") || !x["pattern"].is_object() || !x["pattern"].contains("String"))
        fail(where, field + ".pattern", x.contains("pattern") ? excerpt(x["pattern"]) : "missing",
             "only a String pattern is supported in a Replace normalizer");
      p.normalizer.push_back({HfPipeline::Normalize::Kind::replace, string_field(where, x["pattern"], "String", field + ".pattern"),
                              string_field(where, x, "content", field)});
    } else {
      unsupported(where, field, x, "Sequence, NFC, Prepend, Replace with a String pattern");
    }
  }
}

void parse_pre_tokenizer(const std::string& where, const json& j, HfPipeline& p) {
  using Pre = HfPipeline::PreTokenize;
  for (const auto& [x, field] : steps_of(where, j.value("pre_tokenizer", json()), "pre_tokenizer", "pretokenizers")) {
    const std::string type = type_of(x);
    Pre step{};
    if (type == "Split") {
      step.kind = Pre::Kind::split;
      if (!x.contains("pattern") || !x["pattern"].is_object())
        fail(where, field + ".pattern", "missing", "expected {\"Regex\": ...} or {\"String\": ...}");
      const json& pat = x["pattern"];
      if (pat.contains("Regex")) {
        step.regex = regex_of(where, field + ".pattern.Regex", string_field(where, pat, "Regex", field + ".pattern"));
      } else {
        // a literal string: escape every character that is not a letter or digit
        std::string escaped;
        for (char32_t cp : unicode::decode_utf8(string_field(where, pat, "String", field + ".pattern"))) {
          if (cp < 0x80 && !unicode::is_letter(cp) && !unicode::is_number(cp)) escaped += '\\';
          if (cp == '\n') escaped += 'n'; else if (cp == '\r') escaped += 'r'; else if (cp == '\t') escaped += 't'; else unicode::append_utf8(escaped, cp);
        }
        step.regex = regex_of(where, field + ".pattern.String", escaped);
      }
      if (bool_field(where, x, "invert", false, field)) fail(where, field + ".invert", "true", "not supported (expected false)");
      const std::string behavior = x.value("behavior", "Isolated");
      if (behavior == "Isolated") step.behavior = Pre::Behavior::isolated;
      else if (behavior == "Removed") step.behavior = Pre::Behavior::removed;
      else if (behavior == "MergedWithPrevious") step.behavior = Pre::Behavior::merged_with_previous;
      else if (behavior == "MergedWithNext") step.behavior = Pre::Behavior::merged_with_next;
      else fail(where, field + ".behavior", "'" + behavior + "'", "not supported (Isolated, Removed, MergedWithPrevious, MergedWithNext)");
    } else if (type == "ByteLevel") {
      step.kind = Pre::Kind::byte_level;
      step.add_prefix_space = bool_field(where, x, "add_prefix_space", true, field);
      if (bool_field(where, x, "use_regex", true, field)) step.regex = regex_of(where, field, kGpt2Pattern);
      p.byte_level = true;
    } else if (type == "Metaspace") {
      step.kind = Pre::Kind::metaspace;
      step.replacement = x.contains("replacement") ? string_field(where, x, "replacement", field) : kMeta;
      if (unicode::decode_utf8(step.replacement).size() != 1)
        fail(where, field + ".replacement", "'" + step.replacement + "'", "expected one character");
      std::string scheme;
      if (x.contains("prepend_scheme") && x["prepend_scheme"].is_string()) scheme = x["prepend_scheme"].get<std::string>();
      else scheme = bool_field(where, x, "add_prefix_space", true, field) ? "always" : "never";
      if (scheme == "always") step.prepend = Pre::Prepend::always;
      else if (scheme == "first") step.prepend = Pre::Prepend::first;
      else if (scheme == "never") step.prepend = Pre::Prepend::never;
      else fail(where, field + ".prepend_scheme", "'" + scheme + "'", "expected always, first or never");
      step.split = bool_field(where, x, "split", true, field);
    } else {
      unsupported(where, field, x, "Sequence, Split, ByteLevel, Metaspace");
    }
    p.pre_tokenizer.push_back(std::move(step));
  }
}

void parse_post_processor(const std::string& where, const json& j, HfPipeline& p) {
  for (const auto& [x, field] : steps_of(where, j.value("post_processor", json()), "post_processor", "processors")) {
    const std::string type = type_of(x);
    if (type == "ByteLevel") continue;  // offsets only
    if (type != "TemplateProcessing") unsupported(where, field, x, "Sequence, TemplateProcessing, ByteLevel");
    if (!x.contains("single") || !x["single"].is_array()) fail(where, field + ".single", "missing", "expected the template's list");
    p.has_template = true;
    bool seen_a = false;
    for (const json& item : x["single"]) {
      if (item.is_object() && item.contains("Sequence")) {
        seen_a = true;
      } else if (item.is_object() && item.contains("SpecialToken") && item["SpecialToken"].is_object()) {
        const std::string name = string_field(where, item["SpecialToken"], "id", field + ".single[].SpecialToken");
        if (!x.contains("special_tokens") || !x["special_tokens"].contains(name))
          fail(where, field + ".special_tokens", "'" + name + "'", "missing: the template names it");
        const json& st = x["special_tokens"][name];
        if (!st.contains("tokens") || !st["tokens"].is_array())
          fail(where, field + ".special_tokens['" + name + "'].tokens", "missing", "expected a list of tokens");
        for (const json& t : st["tokens"]) {
          if (!t.is_string()) fail(where, field + ".special_tokens['" + name + "'].tokens", excerpt(t), "expected strings");
          (seen_a ? p.template_suffix : p.template_prefix).push_back(t.get<std::string>());
        }
      } else {
        fail(where, field + ".single", excerpt(item), "expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
      }
    }
  }
}

void parse_decoder(const std::string& where, const json& j, HfPipeline& p) {
  for (const auto& [x, field] : steps_of(where, j.value("decoder", json()), "decoder", "decoders")) {
    const std::string type = type_of(x);
    if (type == "Strip") {
      const std::string content = string_field(where, x, "content", field);
      if (content != " " || x.value("start", 0) != 1 || x.value("stop", 0) != 0)
        fail(where, field, excerpt(x), "only Strip(\" \", start 1, stop 0) is supported (Llama-2's)");
      p.strip_leading_space = true;
    } else if (type == "Replace") {
      // ▁ -> " " (Llama-2's): the vocabulary is held with ▁ as a space already
      if (!x.contains("pattern") || x["pattern"].value("String", "") != kMeta || x.value("content", "") != " ")
        fail(where, field, excerpt(x), "only Replace(\"▁\", \" \") is supported in a decoder");
    } else if (type == "Metaspace") {
      if (x.value("prepend_scheme", "always") != "never" && bool_field(where, x, "add_prefix_space", true, field))
        p.strip_leading_space = true;
    } else if (type != "ByteFallback" && type != "Fuse" && type != "ByteLevel") {
      unsupported(where, field, x, "Sequence, ByteLevel, ByteFallback, Fuse, Metaspace, Replace(\"▁\", \" \"), Strip");
    }
  }
}

// Pieces of s split at the matches of r, as Hugging Face's Split behaviours place them.
std::vector<std::string> split_by(const HfPipeline::PreTokenize& step, const std::string& s) {
  using B = HfPipeline::PreTokenize::Behavior;
  const std::u32string text = unicode::decode_utf8(s);
  std::vector<std::pair<std::u32string, bool>> parts;  // (piece, is a match)
  size_t at = 0;
  for (const auto& [b, e] : step.regex->find_all(text)) {
    if (b > at) parts.emplace_back(text.substr(at, b - at), false);
    parts.emplace_back(text.substr(b, e - b), true);
    at = e;
  }
  if (at < text.size()) parts.emplace_back(text.substr(at), false);
  std::vector<std::u32string> out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& [piece, match] = parts[i];
    switch (step.behavior) {
      case B::isolated: out.push_back(piece); break;
      case B::removed:
        if (!match) out.push_back(piece);
        break;
      case B::merged_with_previous:
        if (match && !out.empty() && !parts[i - 1].second) out.back() += piece;
        else out.push_back(piece);
        break;
      case B::merged_with_next:
        if (!match && i > 0 && parts[i - 1].second) out.back() += piece;
        else out.push_back(piece);
        break;
    }
  }
  std::vector<std::string> result;
  for (const auto& piece : out) result.push_back(unicode::encode_utf8(piece));
  return result;
}

bool word_char(char32_t cp) { return cp == '_' || (cp < unicode::kRawByte && (unicode::is_letter(cp) || unicode::is_number(cp))); }

}  // namespace

char32_t byte_to_unicode(unsigned char b) {
  if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE)) return b;
  int n = 0;  // the bytes GPT-2 moves, in order, to 256, 257, ...
  for (int x = 0; x < b; ++x)
    if (!((x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE)) ++n;
  return static_cast<char32_t>(256 + n);
}

int unicode_to_byte(char32_t cp) {
  static const std::vector<int> back = [] {
    std::vector<int> v(512, -1);
    for (int b = 0; b < 256; ++b) v[byte_to_unicode(static_cast<unsigned char>(b))] = b;
    return v;
  }();
  return cp < back.size() ? back[cp] : -1;
}

void parse_pipeline(const std::string& where, const json& j, HfPipeline& p) {
  parse_normalizer(where, j, p);
  parse_pre_tokenizer(where, j, p);
  parse_post_processor(where, j, p);
  parse_decoder(where, j, p);
}

std::vector<HfPipeline::Segment> HfPipeline::split_added(const std::string& text) const {
  std::vector<Segment> out;
  size_t start = 0;  // of the pending text segment
  auto flush = [&](size_t end) {
    if (end > start) out.push_back({text.substr(start, end - start), -1, start == 0});
  };
  for (size_t i = 0; i < text.size();) {
    const auto& candidates = added_by_byte[static_cast<unsigned char>(text[i])];
    const AddedToken* hit = nullptr;
    for (int k : candidates) {  // longest first: leftmost-longest, as Hugging Face's matcher
      const AddedToken& a = added[static_cast<size_t>(k)];
      if (text.compare(i, a.content.size(), a.content) != 0) continue;
      if (a.single_word) {
        const std::u32string before = unicode::decode_utf8(text.substr(i >= 4 ? i - 4 : 0, i >= 4 ? 4 : i));
        const std::u32string after = unicode::decode_utf8(text.substr(i + a.content.size(), 4));
        if ((!before.empty() && word_char(before.back())) || (!after.empty() && word_char(after.front()))) continue;
      }
      hit = &a;
      break;
    }
    if (!hit) {
      ++i;
      continue;
    }
    size_t b = i, e = i + hit->content.size();
    if (hit->lstrip)
      while (b > start && unicode::is_space(static_cast<unsigned char>(text[b - 1]))) --b;
    if (hit->rstrip)
      while (e < text.size() && unicode::is_space(static_cast<unsigned char>(text[e]))) ++e;
    flush(b);
    out.push_back({hit->content, hit->id, b == 0});
    start = e;
    i = e;
  }
  flush(text.size());
  return out;
}

std::string HfPipeline::normalize(std::string text) const {
  for (const Normalize& n : normalizer) {
    if (text.empty()) break;
    switch (n.kind) {
      case Normalize::Kind::nfc: text = unicode::nfc(text); break;
      case Normalize::Kind::prepend: text.insert(0, n.a); break;
      case Normalize::Kind::replace: text = replace_all(std::move(text), n.a, n.b); break;
    }
  }
  return text;
}

std::vector<std::string> HfPipeline::pre_tokenize(const std::string& text, bool at_start) const {
  std::vector<std::string> pieces{text};
  for (const PreTokenize& step : pre_tokenizer) {
    std::vector<std::string> next;
    for (std::string& piece : pieces) {
      if (piece.empty()) continue;
      switch (step.kind) {
        case PreTokenize::Kind::split:
          for (auto& s : split_by(step, piece)) next.push_back(std::move(s));
          break;
        case PreTokenize::Kind::byte_level:
          if (step.add_prefix_space && piece[0] != ' ') piece.insert(0, 1, ' ');
          if (step.regex) {
            for (auto& s : split_by(step, piece)) next.push_back(std::move(s));
          } else {
            next.push_back(std::move(piece));
          }
          break;
        case PreTokenize::Kind::metaspace: {
          std::string s = replace_all(std::move(piece), " ", step.replacement);
          const bool prepend = step.prepend == PreTokenize::Prepend::always ||
                               (step.prepend == PreTokenize::Prepend::first && at_start);
          if (prepend && s.compare(0, step.replacement.size(), step.replacement) != 0) s.insert(0, step.replacement);
          if (!step.split) {
            next.push_back(std::move(s));
            break;
          }
          size_t begin = 0;
          for (size_t at = s.find(step.replacement, 1); at != std::string::npos; at = s.find(step.replacement, at + 1)) {
            next.push_back(s.substr(begin, at - begin));
            begin = at;
          }
          next.push_back(s.substr(begin));
          break;
        }
      }
    }
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace kvcim::cmodel
