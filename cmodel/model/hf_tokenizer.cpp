// Hugging Face tokenizer.json (BPE with byte fallback, Llama-2's ▁ handling) behind the
// Tokenizer class: reading, encoding with ranked merges, and writing both formats' files.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <queue>
#include <sstream>

#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel {

using json = nlohmann::json;

namespace {

const std::string kMeta = "\xE2\x96\x81";  // ▁ U+2581
constexpr int64_t kMaxFileBytes = 256 << 20;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// ▁ in the file's pieces is held as a space, as llama2.c holds it.
std::string from_file(const std::string& piece) { return replace_all(piece, kMeta, " "); }
std::string to_file(const std::string& piece) { return replace_all(piece, " ", kMeta); }

std::string byte_piece(int b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "<0x%02X>", b);
  return buf;
}

uint64_t pair_key(int a, int b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

std::string excerpt(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 60); }

// Bytes of the UTF-8 code point starting at s[i] (1 for a byte that does not start a valid one).
size_t code_point_bytes(const std::string& s, size_t i) {
  const unsigned char c = s[i];
  const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
  if (i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  return n;
}

}  // namespace

Tokenizer Tokenizer::load_hf(const std::string& path, int vocab_size) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "file", "missing", "expected a tokenizer.json");
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec || int64_t(bytes) > kMaxFileBytes)
    fail(path, "file", ec ? "unreadable" : std::to_string(bytes) + " bytes", "expected a JSON file below 256 MiB");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in) fail(path, "file", "unreadable", "cannot read the tokenizer");
  return parse_hf(path, s.str(), vocab_size);
}

// A function-try-block: a value of the wrong JSON type deep inside (nlohmann's value() and get()
// throw type_error) is refused like any other bad field, one kvcim::Error naming the file.
Tokenizer Tokenizer::parse_hf(const std::string& where, const std::string& text, int vocab_size) try {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail(where, "JSON", "invalid", e.what());
  }
  if (!j.is_object()) fail(where, "tokenizer", j.type_name(), "expected a JSON object");
  if (!j.contains("model") || !j["model"].is_object())
    fail(where, "model", "missing", "expected the tokenizer model object");
  const json& m = j["model"];
  if (!m.contains("type") || !m["type"].is_string() || m["type"] != "BPE")
    fail(where, "model.type", m.contains("type") ? excerpt(m["type"]) : "missing",
         "only \"BPE\" (Llama-2's byte-fallback BPE) is supported");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (m.contains(key) && !m[key].is_null() && m[key] != "")
      fail(where, std::string("model.") + key, excerpt(m[key]), "not supported (expected null)");
  if (m.contains("dropout") && !m["dropout"].is_null() && m["dropout"] != 0 && m["dropout"] != 0.0)
    fail(where, "model.dropout", excerpt(m["dropout"]), "not supported (expected null)");
  auto get_bool = [&](const json& o, const char* key, bool fallback, const std::string& field) {
    if (!o.contains(key) || o[key].is_null()) return fallback;
    if (!o[key].is_boolean()) fail(where, field, excerpt(o[key]), "expected true or false");
    return o[key].get<bool>();
  };

  Tokenizer t;
  t.path_ = where;
  t.hf_ = true;
  t.byte_fallback_ = get_bool(m, "byte_fallback", false, "model.byte_fallback");
  t.fuse_unk_ = get_bool(m, "fuse_unk", false, "model.fuse_unk");
  const bool ignore_merges = get_bool(m, "ignore_merges", false, "model.ignore_merges");
  if (ignore_merges) fail(where, "model.ignore_merges", "true", "not supported (Llama-3's byte-level BPE)");

  // vocabulary: piece -> id, dense 0..N-1; added tokens may extend it
  if (!m.contains("vocab") || !m["vocab"].is_object()) fail(where, "model.vocab", "missing", "expected an object piece -> id");
  std::vector<std::string> pieces;
  std::vector<bool> present;
  // Ids are dense, so none reaches the number of entries (checked before any allocation).
  const int64_t entries = static_cast<int64_t>(m["vocab"].size()) +
                          (j.contains("added_tokens") && j["added_tokens"].is_array() ? int64_t(j["added_tokens"].size()) : 0);
  const int64_t id_limit = std::min<int64_t>(entries, kMaxVocab);
  auto place = [&](const std::string& piece, const json& id, const std::string& field) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= id_limit)
      fail(where, field, excerpt(id), "expected an id in 0.." + std::to_string(id_limit - 1) +
                                          " (ids are dense: below the number of entries)");
    const size_t i = static_cast<size_t>(id.get<int64_t>());
    if (i >= pieces.size()) {
      pieces.resize(i + 1);
      present.resize(i + 1, false);
    }
    if (present[i] && pieces[i] != piece)
      fail(where, field, std::to_string(i), "id already taken by '" + to_file(pieces[i]) + "'");
    pieces[i] = piece;
    present[i] = true;
  };
  for (auto it = m["vocab"].begin(); it != m["vocab"].end(); ++it)
    place(from_file(it.key()), it.value(), "model.vocab['" + it.key() + "']");
  if (j.contains("added_tokens") && !j["added_tokens"].is_null()) {
    const json& added = j["added_tokens"];
    if (!added.is_array()) fail(where, "added_tokens", excerpt(added), "expected a list");
    for (size_t i = 0; i < added.size(); ++i) {
      const json& a = added[i];
      const std::string field = "added_tokens[" + std::to_string(i) + "]";
      if (!a.is_object() || !a.contains("id") || !a.contains("content") || !a["content"].is_string())
        fail(where, field, excerpt(a), "expected {\"id\": N, \"content\": \"...\"}");
      place(from_file(a["content"].get<std::string>()), a["id"], field + ".id");
      if (get_bool(a, "special", false, field + ".special")) t.special_.push_back(a["id"].get<int>());
    }
  }
  for (size_t i = 0; i < pieces.size(); ++i)
    if (!present[i]) fail(where, "model.vocab", "id " + std::to_string(i) + " missing", "expected ids 0..N-1 without gaps");
  if (vocab_size >= 0 && static_cast<int>(pieces.size()) != vocab_size)
    fail(where, "vocabulary", std::to_string(pieces.size()) + " entries",
         "the model's vocab_size is " + std::to_string(vocab_size));
  for (size_t i = 0; i < pieces.size(); ++i) {
    t.index_.emplace(pieces[i], static_cast<int>(i));
    t.max_token_length_ = std::max(t.max_token_length_, static_cast<int>(pieces[i].size()));
  }
  t.vocab_ = std::move(pieces);
  if (t.lookup("<s>") != kBos || t.lookup("</s>") != kEos)
    fail(where, "added_tokens", "<s> = " + std::to_string(t.lookup("<s>")) + ", </s> = " + std::to_string(t.lookup("</s>")),
         "kvcim feeds BOS as id 1 and EOS as id 2 (Llama-2's <s> and </s>)");
  if (m.contains("unk_token") && !m["unk_token"].is_null()) {
    if (!m["unk_token"].is_string()) fail(where, "model.unk_token", excerpt(m["unk_token"]), "expected a string");
    t.unk_ = t.lookup(from_file(m["unk_token"].get<std::string>()));
    if (t.unk_ < 0) fail(where, "model.unk_token", excerpt(m["unk_token"]), "not in the vocabulary");
  }
  t.byte_ids_.assign(256, -1);
  for (int b = 0; b < 256; ++b) t.byte_ids_[b] = t.lookup(byte_piece(b));

  // merges, in rank order: "a b" strings or ["a", "b"] pairs
  if (!m.contains("merges") || !m["merges"].is_array()) fail(where, "model.merges", "missing", "expected a list");
  const json& merges = m["merges"];
  t.scores_.assign(t.vocab_.size(), -1e10f);  // pieces that no merge makes: never merged by llama2.c
  for (size_t r = 0; r < merges.size(); ++r) {
    const json& e = merges[r];
    const std::string field = "model.merges[" + std::to_string(r) + "]";
    std::string a, b;
    if (e.is_string()) {
      const std::string s = e.get<std::string>();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        fail(where, field, excerpt(e), "expected two pieces separated by one space");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      a = e[0].get<std::string>();
      b = e[1].get<std::string>();
    } else {
      fail(where, field, excerpt(e), "expected \"a b\" or [\"a\", \"b\"]");
    }
    a = from_file(a);
    b = from_file(b);
    const int ia = t.lookup(a), ib = t.lookup(b), im = t.lookup(a + b);
    if (ia < 0 || ib < 0 || im < 0)
      fail(where, field, excerpt(e), "'" + to_file(ia < 0 ? a : ib < 0 ? b : a + b) + "' is not in the vocabulary");
    if (t.merges_.emplace(pair_key(ia, ib), std::make_pair(static_cast<int>(r), im)).second &&
        t.scores_[im] == -1e10f)
      t.scores_[im] = -static_cast<float>(r);
  }
  for (size_t i = 0; i < t.vocab_.size(); ++i)
    if (t.vocab_[i].size() == 6 && t.vocab_[i].compare(0, 3, "<0x") == 0) t.scores_[i] = 0.0f;

  // Llama-2's ▁: a normalizer Prepend("▁") + Replace(" ", "▁"), or a Metaspace pre-tokenizer
  bool spaces = false;
  t.prefix_ = Prefix::none;
  if (j.contains("normalizer") && !j["normalizer"].is_null()) {
    const json& n = j["normalizer"];
    std::vector<json> steps;
    if (n.is_object() && n.value("type", "") == "Sequence" && n.contains("normalizers") && n["normalizers"].is_array())
      for (const json& x : n["normalizers"]) steps.push_back(x);
    else
      steps.push_back(n);
    for (const json& x : steps) {
      const std::string type = x.is_object() && x.contains("type") && x["type"].is_string() ? x["type"].get<std::string>() : "?";
      if (type == "Prepend" && x.value("prepend", "") == kMeta) {
        t.prefix_ = Prefix::always;
      } else if (type == "Replace" && x.contains("pattern") && x["pattern"].is_object() &&
                 x["pattern"].value("String", "") == " " && x.value("content", "") == kMeta) {
        spaces = true;
      } else {
        fail(where, "normalizer", excerpt(x),
             "supported: Prepend(\"▁\") and Replace(\" \", \"▁\") (Llama-2's)");
      }
    }
  }
  if (j.contains("pre_tokenizer") && !j["pre_tokenizer"].is_null()) {
    const json& p = j["pre_tokenizer"];
    if (!p.is_object() || p.value("type", "") != "Metaspace" || p.value("replacement", kMeta) != kMeta)
      fail(where, "pre_tokenizer", excerpt(p), "supported: Metaspace with replacement \"▁\" (Llama-2's)");
    spaces = true;
    const std::string scheme = p.contains("prepend_scheme") && p["prepend_scheme"].is_string()
                                   ? p["prepend_scheme"].get<std::string>()
                                   : (get_bool(p, "add_prefix_space", true, "pre_tokenizer.add_prefix_space") ? "always" : "never");
    if (scheme == "always" || scheme == "first") t.prefix_ = Prefix::unless_space;
    else if (scheme != "never") fail(where, "pre_tokenizer.prepend_scheme", "'" + scheme + "'", "expected always, first or never");
    t.split_words_ = get_bool(p, "split", true, "pre_tokenizer.split");
  }
  if (!spaces)
    fail(where, "normalizer", "no ▁ handling",
         "expected Llama-2's Replace(\" \", \"▁\") normalizer or a Metaspace pre-tokenizer");
  return t;
} catch (const json::exception& e) {
  fail(where, "tokenizer.json", "a value of the wrong type", e.what());
}

std::vector<int> Tokenizer::encode_hf(const std::string& raw) const {
  std::vector<int> out;
  if (raw.empty()) return out;
  std::string text = replace_all(raw, kMeta, " ");
  if (prefix_ == Prefix::always || (prefix_ == Prefix::unless_space && text[0] != ' ')) text.insert(0, 1, ' ');
  // words: the whole text, or (Metaspace split) a word starting at each ▁
  std::vector<std::string> words;
  if (split_words_) {
    size_t start = 0;
    for (size_t i = 1; i <= text.size(); ++i)
      if (i == text.size() || text[i] == ' ') {
        words.push_back(text.substr(start, i - start));
        start = i;
      }
  } else {
    words.push_back(text);
  }
  struct Symbol {
    int id, prev, next;
    bool alive;
  };
  struct Candidate {
    int rank, pos, merged;
    bool operator<(const Candidate& o) const {  // priority_queue pops the largest: invert
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  for (const std::string& word : words) {
    // characters, else their <0xNN> bytes, else <unk> (fused when fuse_unk)
    std::vector<Symbol> sym;
    bool last_unk = false;
    auto push = [&](int id) { sym.push_back({id, static_cast<int>(sym.size()) - 1, -1, true}); };
    for (size_t i = 0; i < word.size();) {
      const size_t n = code_point_bytes(word, i);
      const std::string ch = word.substr(i, n);
      i += n;
      const int id = lookup(ch);
      if (id >= 0) {
        push(id);
        last_unk = false;
        continue;
      }
      bool bytes_ok = byte_fallback_;
      for (unsigned char b : ch) bytes_ok = bytes_ok && byte_ids_[b] >= 0;
      if (bytes_ok) {
        for (unsigned char b : ch) push(byte_ids_[b]);
        last_unk = false;
        continue;
      }
      if (unk_ < 0)
        throw Error(path_ + ": model.unk_token = null: the text holds a character outside the vocabulary and byte_fallback cannot encode it");
      if (!(fuse_unk_ && last_unk)) push(unk_);
      last_unk = true;
    }
    for (size_t i = 0; i + 1 < sym.size(); ++i) sym[i].next = static_cast<int>(i + 1);
    // merges, lowest rank first, leftmost on ties
    std::priority_queue<Candidate> queue;
    auto offer = [&](int left) {
      if (left < 0 || sym[left].next < 0) return;
      auto it = merges_.find(pair_key(sym[left].id, sym[sym[left].next].id));
      if (it != merges_.end()) queue.push({it->second.first, left, it->second.second});
    };
    for (size_t i = 0; i + 1 < sym.size(); ++i) offer(static_cast<int>(i));
    while (!queue.empty()) {
      const Candidate c = queue.top();
      queue.pop();
      Symbol& s = sym[c.pos];
      if (!s.alive || s.next < 0) continue;
      auto it = merges_.find(pair_key(s.id, sym[s.next].id));
      if (it == merges_.end() || it->second.first != c.rank || it->second.second != c.merged) continue;
      Symbol& right = sym[s.next];
      right.alive = false;
      s.id = c.merged;
      s.next = right.next;
      if (s.next >= 0) sym[s.next].prev = c.pos;
      offer(s.prev);
      offer(c.pos);
    }
    for (const Symbol& s : sym)
      if (s.alive) out.push_back(s.id);
  }
  return out;
}

std::string Tokenizer::hf_json() const {
  const std::string where = path_.empty() ? std::string("tokenizer") : path_;
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  std::vector<std::string> file_pieces(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) {
    std::string p = to_file(vocab_[i]);
    if (!hf_ && i < 3) p = i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>";  // llama2.c's "\n<s>\n"
    if (vocab.contains(p))
      fail(where, "entry " + std::to_string(i), "'" + p + "'", "a piece held twice cannot be written to tokenizer.json");
    vocab[p] = i;
    file_pieces[i] = p;
  }
  // merges: the file's own, or every split of every llama2.c piece ranked by score
  struct Merge {
    float score;
    int merged, left, right;
  };
  std::vector<Merge> list;
  if (hf_) {
    for (const auto& [key, value] : merges_)
      list.push_back({-static_cast<float>(value.first), value.second, int(key >> 32), int(key & 0xffffffffu)});
  } else {
    for (size_t i = 3; i < vocab_.size(); ++i) {
      const std::string& p = vocab_[i];
      for (size_t k = 1; k < p.size(); ++k) {
        const int a = lookup(p.substr(0, k)), b = lookup(p.substr(k));
        if (a >= 3 && b >= 3) list.push_back({scores_[i], static_cast<int>(i), a, b});
      }
    }
  }
  std::stable_sort(list.begin(), list.end(), [](const Merge& x, const Merge& y) {
    return x.score != y.score ? x.score > y.score : x.merged < y.merged;
  });
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  for (const Merge& mg : list) merges.push_back(file_pieces[mg.left] + " " + file_pieces[mg.right]);

  nlohmann::ordered_json j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = nlohmann::ordered_json::array();
  for (int i = 0; i < 3 && i < static_cast<int>(vocab_.size()); ++i)
    j["added_tokens"].push_back({{"id", i}, {"content", file_pieces[i]}, {"single_word", false},
                                 {"lstrip", false}, {"rstrip", false}, {"normalized", false},
                                 {"special", true}});
  if (prefix_ == Prefix::always || !hf_) {
    j["normalizer"] = {{"type", "Sequence"},
                       {"normalizers",
                        {{{"type", "Prepend"}, {"prepend", kMeta}},
                         {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kMeta}}}}};
    j["pre_tokenizer"] = nullptr;
  } else {
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", kMeta},
                          {"prepend_scheme", prefix_ == Prefix::none ? "never" : "first"},
                          {"split", split_words_}};
  }
  j["post_processor"] = nullptr;
  j["decoder"] = {{"type", "Sequence"},
                  {"decoders",
                   {{{"type", "Replace"}, {"pattern", {{"String", kMeta}}}, {"content", " "}},
                    {{"type", "ByteFallback"}},
                    {{"type", "Fuse"}},
                    {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  j["model"] = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", hf_ ? (unk_ >= 0 ? nlohmann::ordered_json(file_pieces[unk_]) : nullptr)
                                  : nlohmann::ordered_json("<unk>")},
                {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr},
                {"fuse_unk", hf_ ? fuse_unk_ : true},
                {"byte_fallback", hf_ ? byte_fallback_ : true},
                {"vocab", vocab},
                {"merges", merges}};
  try {
    return j.dump(1) + "\n";
  } catch (const nlohmann::json::exception& e) {
    fail(where, "pieces", "not UTF-8", std::string("tokenizer.json holds UTF-8 text: ") + e.what());
  }
}

}  // namespace kvcim::cmodel
