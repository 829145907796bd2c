// Hugging Face tokenizer.json (BPE: SentencePiece-style with byte fallback, or byte-level) behind
// the Tokenizer class: reading (with tokenizer_config.json and config.json), encoding with ranked
// merges, and writing both formats' files. The pipeline around the model: hf_pipeline.cpp.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <queue>
#include <sstream>

#include "hf_pipeline.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/error.hpp"
#include "unicode.hpp"

namespace kvcim::cmodel {

using json = nlohmann::json;
using hf::kMeta;
using hf::replace_all;

namespace {

constexpr int64_t kMaxFileBytes = 256 << 20;

// ▁ in the file's pieces is held as a space, as llama2.c holds it.
std::string from_file(const std::string& piece) { return replace_all(piece, kMeta, " "); }
std::string to_file(const std::string& piece) { return replace_all(piece, " ", kMeta); }

std::string byte_piece(int b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "<0x%02X>", b);
  return buf;
}

uint64_t pair_key(int a, int b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

std::string short_excerpt(const json& j) { return hf::excerpt(j, 60); }

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
  auto read = [](const std::string& file, bool required) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
      if (required) fail(file, "file", "missing", "expected a tokenizer.json");
      return std::string();
    }
    const auto bytes = std::filesystem::file_size(file, ec);
    if (ec || int64_t(bytes) > kMaxFileBytes)
      fail(file, "file", ec ? "unreadable" : std::to_string(bytes) + " bytes", "expected a JSON file below 256 MiB");
    std::ifstream in(file, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    if (!in) fail(file, "file", "unreadable", "cannot read the file");
    return s.str();
  };
  const std::string text = read(path, true);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const std::string sep = dir.empty() ? "" : "/";
  return parse_hf(path, text, vocab_size, read(dir + sep + "tokenizer_config.json", false),
                  read(dir + sep + "config.json", false));
}

namespace {

// A piece as the tokenizer holds it: byte-level pieces as the bytes their characters stand for
// (a piece with a character outside GPT-2's alphabet kept as written), others with ▁ as a space.
std::string held(const std::string& piece, bool byte_level) {
  if (!byte_level) return from_file(piece);
  std::string out;
  for (char32_t cp : unicode::decode_utf8(piece)) {
    const int b = unicode_to_byte(cp);
    if (b < 0) return piece;
    out.push_back(static_cast<char>(b));
  }
  return out;
}

// A token named in tokenizer_config.json: a string, {"content": ...} (AddedToken) or null.
std::string token_name(const std::string& where, const json& cfg, const char* key) {
  if (!cfg.contains(key) || cfg[key].is_null()) return "";
  const json& v = cfg[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  fail(where, key, short_excerpt(v), "expected a string, {\"content\": ...} or null");
}

// A JSON object, or one error naming the file.
json json_object(const std::string& where, const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail(where, "JSON", "invalid", e.what());
  }
  if (!j.is_object()) fail(where, "file", j.type_name(), "expected a JSON object");
  return j;
}

}  // namespace

// A function-try-block: a value of the wrong JSON type deep inside (nlohmann's value() and get()
// throw type_error) is refused like any other bad field, one kvcim::Error naming the file.
Tokenizer Tokenizer::parse_hf(const std::string& where, const std::string& text, int vocab_size,
                              const std::string& tokenizer_config, const std::string& model_config) try {
  const json j = json_object(where, text);
  if (!j.contains("model") || !j["model"].is_object())
    fail(where, "model", "missing", "expected the tokenizer model object");
  const json& m = j["model"];
  if (!m.contains("type") || !m["type"].is_string() || m["type"] != "BPE")
    fail(where, "model.type", m.contains("type") ? short_excerpt(m["type"]) : "missing",
         "not supported (supported: BPE, SentencePiece-style with byte fallback or byte-level)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (m.contains(key) && !m[key].is_null() && m[key] != "")
      fail(where, std::string("model.") + key, short_excerpt(m[key]), "not supported (expected null)");
  if (m.contains("dropout") && !m["dropout"].is_null() && m["dropout"] != 0 && m["dropout"] != 0.0)
    fail(where, "model.dropout", short_excerpt(m["dropout"]), "not supported (expected null)");
  auto get_bool = [&](const json& o, const char* key, bool fallback, const std::string& field) {
    if (!o.contains(key) || o[key].is_null()) return fallback;
    if (!o[key].is_boolean()) fail(where, field, short_excerpt(o[key]), "expected true or false");
    return o[key].get<bool>();
  };

  Tokenizer t;
  t.path_ = where;
  t.hf_ = true;
  auto pipe = std::make_shared<HfPipeline>();
  parse_pipeline(where, j, *pipe);
  const bool byte_level = pipe->byte_level;
  t.byte_fallback_ = get_bool(m, "byte_fallback", false, "model.byte_fallback");
  t.fuse_unk_ = get_bool(m, "fuse_unk", false, "model.fuse_unk");
  t.ignore_merges_ = get_bool(m, "ignore_merges", false, "model.ignore_merges");
  t.byte_pieces_ = !byte_level && t.byte_fallback_;
  t.strip_after_bos_ = pipe->strip_leading_space;

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
      fail(where, field, short_excerpt(id), "expected an id in 0.." + std::to_string(id_limit - 1) +
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
    place(held(it.key(), byte_level), it.value(), "model.vocab['" + it.key() + "']");
  t.model_vocab_ = static_cast<int>(pieces.size());
  if (j.contains("added_tokens") && !j["added_tokens"].is_null()) {
    const json& added = j["added_tokens"];
    if (!added.is_array()) fail(where, "added_tokens", short_excerpt(added), "expected a list");
    for (size_t i = 0; i < added.size(); ++i) {
      const json& a = added[i];
      const std::string field = "added_tokens[" + std::to_string(i) + "]";
      if (!a.is_object() || !a.contains("id") || !a.contains("content") || !a["content"].is_string() ||
          a["content"].get<std::string>().empty())
        fail(where, field, short_excerpt(a), "expected {\"id\": N, \"content\": \"...\"}");
      const std::string content = a["content"].get<std::string>();
      place(byte_level ? content : from_file(content), a["id"], field + ".id");
      const int id = a["id"].get<int>();
      const bool special = get_bool(a, "special", false, field + ".special");
      if (special) t.special_.push_back(id);
      pipe->added.push_back({content, id, special, get_bool(a, "lstrip", false, field + ".lstrip"),
                             get_bool(a, "rstrip", false, field + ".rstrip"),
                             get_bool(a, "single_word", false, field + ".single_word")});
    }
  }
  for (size_t i = 0; i < pieces.size(); ++i)
    if (!present[i]) fail(where, "model.vocab", "id " + std::to_string(i) + " missing", "expected ids 0..N-1 without gaps");
  if (vocab_size >= 0 && static_cast<int>(pieces.size()) > vocab_size)
    fail(where, "vocabulary", std::to_string(pieces.size()) + " entries",
         "more than the model's vocab_size of " + std::to_string(vocab_size));
  const size_t entries_used = pieces.size();
  // A model's embedding may have rows past the tokenizer's ids (Qwen pads 151,669 to 151,936):
  // those ids are held as empty pieces, never produced by encode() and decoded to nothing.
  if (vocab_size > static_cast<int>(pieces.size())) pieces.resize(static_cast<size_t>(vocab_size));
  for (size_t i = 0; i < entries_used; ++i) {
    t.index_.emplace(pieces[i], static_cast<int>(i));
    t.max_token_length_ = std::max(t.max_token_length_, static_cast<int>(pieces[i].size()));
  }
  t.vocab_ = std::move(pieces);
  if (m.contains("unk_token") && !m["unk_token"].is_null()) {
    if (!m["unk_token"].is_string()) fail(where, "model.unk_token", short_excerpt(m["unk_token"]), "expected a string");
    t.unk_ = t.lookup(held(m["unk_token"].get<std::string>(), byte_level));
    if (t.unk_ < 0) fail(where, "model.unk_token", short_excerpt(m["unk_token"]), "not in the vocabulary");
  }
  t.byte_ids_.assign(256, -1);
  for (int b = 0; b < 256; ++b) t.byte_ids_[b] = t.lookup(byte_level ? std::string(1, static_cast<char>(b)) : byte_piece(b));

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
        fail(where, field, short_excerpt(e), "expected two pieces separated by one space");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      a = e[0].get<std::string>();
      b = e[1].get<std::string>();
    } else {
      fail(where, field, short_excerpt(e), "expected \"a b\" or [\"a\", \"b\"]");
    }
    a = held(a, byte_level);
    b = held(b, byte_level);
    const int ia = t.lookup(a), ib = t.lookup(b), im = t.lookup(a + b);
    if (ia < 0 || ib < 0 || im < 0)
      fail(where, field, short_excerpt(e), "'" + to_file(ia < 0 ? a : ib < 0 ? b : a + b) + "' is not in the vocabulary");
    if (t.merges_.emplace(pair_key(ia, ib), std::make_pair(static_cast<int>(r), im)).second &&
        t.scores_[im] == -1e10f)
      t.scores_[im] = -static_cast<float>(r);
  }
  for (size_t i = 0; i < t.vocab_.size(); ++i)
    if (t.vocab_[i].size() == 6 && t.vocab_[i].compare(0, 3, "<0x") == 0) t.scores_[i] = 0.0f;

  // SentencePiece-style pieces hold ▁ for a space: the text's spaces must become ▁ on the way
  if (!byte_level) {
    bool spaces = false;
    for (const auto& n : pipe->normalizer)
      spaces = spaces || (n.kind == HfPipeline::Normalize::Kind::replace && n.a == " " && n.b == kMeta);
    for (const auto& p : pipe->pre_tokenizer)
      spaces = spaces || (p.kind == HfPipeline::PreTokenize::Kind::metaspace && p.replacement == kMeta);
    if (!spaces)
      fail(where, "normalizer", "no ▁ handling",
           "expected a byte-level pre-tokenizer, Llama-2's Replace(\" \", \"▁\") normalizer or a Metaspace pre-tokenizer");
  }

  // added tokens by first byte, longest first (leftmost-longest matching)
  pipe->added_by_byte.assign(256, {});
  for (size_t k = 0; k < pipe->added.size(); ++k)
    pipe->added_by_byte[static_cast<unsigned char>(pipe->added[k].content[0])].push_back(static_cast<int>(k));
  for (auto& list : pipe->added_by_byte)
    std::stable_sort(list.begin(), list.end(), [&](int x, int y) {
      return pipe->added[size_t(x)].content.size() > pipe->added[size_t(y)].content.size();
    });

  // BOS, EOS, pad and what encode(bos = true) adds
  const std::string config_where = std::filesystem::path(where).parent_path().string();
  const std::string tc_where = (config_where.empty() ? "" : config_where + "/") + "tokenizer_config.json";
  const std::string mc_where = (config_where.empty() ? "" : config_where + "/") + "config.json";
  const json tc = tokenizer_config.empty() ? json::object() : json_object(tc_where, tokenizer_config);
  const json mc = model_config.empty() ? json::object() : json_object(mc_where, model_config);
  auto id_of = [&](const std::string& file, const std::string& field, const std::string& name) {
    const int id = t.lookup(byte_level ? name : from_file(name));
    if (id < 0) fail(file, field, "'" + name + "'", "not in the tokenizer's vocabulary");
    return id;
  };
  auto config_id = [&](const char* key) -> std::vector<int> {
    if (!mc.contains(key) || mc[key].is_null()) return {};
    std::vector<int> ids;
    for (const json& v : mc[key].is_array() ? mc[key] : json::array({mc[key]})) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= t.vocab_size())
        fail(mc_where, key, short_excerpt(mc[key]), "expected ids in 0.." + std::to_string(t.vocab_size() - 1));
      ids.push_back(v.get<int>());
    }
    return ids;
  };
  const bool has_tc = !tokenizer_config.empty();
  const std::string bos_name = token_name(tc_where, tc, "bos_token");
  const std::string eos_name = token_name(tc_where, tc, "eos_token");
  const std::string pad_name = token_name(tc_where, tc, "pad_token");
  const std::vector<int> cfg_bos = config_id("bos_token_id"), cfg_eos = config_id("eos_token_id"), cfg_pad = config_id("pad_token_id");
  t.bos_ = !bos_name.empty() ? id_of(tc_where, "bos_token", bos_name)
           : has_tc          ? -1
           : !cfg_bos.empty() ? cfg_bos[0]
                              : t.lookup("<s>");
  t.eos_ids_.clear();
  if (!eos_name.empty()) t.eos_ids_.push_back(id_of(tc_where, "eos_token", eos_name));
  for (int id : cfg_eos)
    if (std::find(t.eos_ids_.begin(), t.eos_ids_.end(), id) == t.eos_ids_.end()) t.eos_ids_.push_back(id);
  if (t.eos_ids_.empty() && !has_tc && t.lookup("</s>") >= 0) t.eos_ids_.push_back(t.lookup("</s>"));
  t.eos_ = t.eos_ids_.empty() ? -1 : t.eos_ids_[0];
  t.pad_ = !pad_name.empty() ? id_of(tc_where, "pad_token", pad_name) : !cfg_pad.empty() ? cfg_pad[0] : -1;
  if (tc.contains("add_bos_token") || tc.contains("add_eos_token")) {
    // transformers' Llama-style tokenizer classes rebuild the post-processor from these two
    if (get_bool(tc, "add_bos_token", false, "add_bos_token")) {
      if (t.bos_ < 0) fail(tc_where, "add_bos_token", "true", "there is no bos_token");
      t.prefix_ids_.push_back(t.bos_);
    }
    if (get_bool(tc, "add_eos_token", false, "add_eos_token")) {
      if (t.eos_ < 0) fail(tc_where, "add_eos_token", "true", "there is no eos_token");
      t.suffix_ids_.push_back(t.eos_);
    }
  } else if (pipe->has_template) {
    for (const std::string& name : pipe->template_prefix) t.prefix_ids_.push_back(id_of(where, "post_processor", name));
    for (const std::string& name : pipe->template_suffix) t.suffix_ids_.push_back(id_of(where, "post_processor", name));
  } else if (!has_tc && j.value("post_processor", json()).is_null() && t.bos_ >= 0) {
    t.prefix_ids_.push_back(t.bos_);  // neither says: BOS as llama2.c (kvcim's own files before templates)
  }
  t.pipe_ = std::move(pipe);
  return t;
} catch (const json::exception& e) {
  fail(where, "tokenizer.json", "a value of the wrong type", e.what());
}

void Tokenizer::encode_word(const std::string& file_word, std::vector<int>& out) const {
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
  const bool byte_level = pipe_->byte_level;
  const std::string word = byte_level ? file_word : replace_all(file_word, kMeta, " ");
  if (ignore_merges_) {
    const int id = lookup(word);
    if (id >= 0 && id < model_vocab_) {
      out.push_back(id);
      return;
    }
  }
  // characters (byte-level: bytes), else their <0xNN> bytes, else <unk> (fused when fuse_unk)
  std::vector<Symbol> sym;
  bool last_unk = false;
  auto push = [&](int id) { sym.push_back({id, static_cast<int>(sym.size()) - 1, -1, true}); };
  for (size_t i = 0; i < word.size();) {
    const size_t n = byte_level ? 1 : code_point_bytes(word, i);
    const std::string ch = word.substr(i, n);
    i += n;
    const int id = byte_level ? byte_ids_[static_cast<unsigned char>(ch[0])] : lookup(ch);
    if (id >= 0) {
      push(id);
      last_unk = false;
      continue;
    }
    bool bytes_ok = byte_fallback_ && !byte_level;
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

std::vector<int> Tokenizer::encode_hf(const std::string& text) const {
  std::vector<int> out;
  for (const HfPipeline::Segment& seg : pipe_->split_added(text)) {
    if (seg.id >= 0) {
      out.push_back(seg.id);
      continue;
    }
    std::vector<std::string> words;
    try {
      words = pipe_->pre_tokenize(pipe_->normalize(seg.text), seg.at_start);
    } catch (const RegexError& e) {
      fail(path_, "pre_tokenizer", "a Split pattern", e.what());
    }
    for (const std::string& word : words)
      if (!word.empty()) encode_word(word, out);
  }
  return out;
}

std::string Tokenizer::hf_json() const {
  const std::string where = path_.empty() ? std::string("tokenizer") : path_;
  if (hf_ && pipe_->byte_level)
    fail(where, "pre_tokenizer", "ByteLevel", "kvcim writes SentencePiece-style tokenizer.json files only");
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
  auto added = [&](int id, const std::string& content, bool special, bool lstrip, bool rstrip, bool single_word) {
    j["added_tokens"].push_back({{"id", id}, {"content", content}, {"single_word", single_word},
                                 {"lstrip", lstrip}, {"rstrip", rstrip}, {"normalized", false},
                                 {"special", special}});
  };
  if (hf_) {
    for (const auto& a : pipe_->added) added(a.id, a.content, a.special, a.lstrip, a.rstrip, a.single_word);
  } else {
    for (int i = 0; i < 3 && i < static_cast<int>(vocab_.size()); ++i) added(i, file_pieces[i], true, false, false, false);
  }
  const HfPipeline::PreTokenize* meta = nullptr;
  if (hf_)
    for (const auto& p : pipe_->pre_tokenizer)
      if (p.kind == HfPipeline::PreTokenize::Kind::metaspace) meta = &p;
  if (!meta) {
    j["normalizer"] = {{"type", "Sequence"},
                       {"normalizers",
                        {{{"type", "Prepend"}, {"prepend", kMeta}},
                         {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kMeta}}}}};
    j["pre_tokenizer"] = nullptr;
  } else {
    using P = HfPipeline::PreTokenize::Prepend;
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", kMeta},
                          {"prepend_scheme", meta->prepend == P::never ? "never" : meta->prepend == P::first ? "first" : "always"},
                          {"split", meta->split}};
  }
  // the special tokens encode(bos = true) adds, as Llama-2's template
  const std::vector<int> before = hf_ ? prefix_ids_ : std::vector<int>{kBos};
  const std::vector<int> after = hf_ ? suffix_ids_ : std::vector<int>{};
  nlohmann::ordered_json single = nlohmann::ordered_json::array(), specials = nlohmann::ordered_json::object();
  auto special = [&](int id) {
    single.push_back({{"SpecialToken", {{"id", file_pieces[size_t(id)]}, {"type_id", 0}}}});
    specials[file_pieces[size_t(id)]] = {{"id", file_pieces[size_t(id)]}, {"ids", {id}}, {"tokens", {file_pieces[size_t(id)]}}};
  };
  for (int id : before) special(id);
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  for (int id : after) special(id);
  nlohmann::ordered_json pair = single;
  pair.push_back({{"Sequence", {{"id", "B"}, {"type_id", 1}}}});
  j["post_processor"] = {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", specials}};
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
