#include "kvcim/cmodel/tokenizer.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "hf_pipeline.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel {

namespace {
// No real vocabulary has pieces this long; a larger length field is a corrupt file, and
// trusting it would mean a huge allocation.
constexpr int kMaxPieceBytes = 1 << 16;
}  // namespace

Tokenizer Tokenizer::load(const std::string& path, int vocab_size) {
  std::error_code dir_ec;
  if (std::filesystem::is_directory(path, dir_ec)) return load_hf(path + "/tokenizer.json", vocab_size);
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) return load_hf(path, vocab_size);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "file", "unreadable", "cannot open the tokenizer");
  std::error_code ec;
  const auto file_bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec) fail(path, "file", "unreadable", ec.message());
  Tokenizer t;
  t.path_ = path;
  int32_t max_len = 0;
  if (!in.read(reinterpret_cast<char*>(&max_len), 4))
    fail(path, "max_token_length", "missing", "truncated: the file must start with an int32");
  if (max_len <= 0 || max_len > kMaxPieceBytes)
    fail(path, "max_token_length", std::to_string(max_len),
         "expected 1.." + std::to_string(kMaxPieceBytes));
  t.max_token_length_ = max_len;
  int64_t offset = 4;
  for (int i = 0; vocab_size < 0 ? offset < file_bytes : i < vocab_size; ++i) {
    if (i >= kMaxVocab) fail(path, "vocabulary", "> " + std::to_string(kMaxVocab), "too many entries");
    const std::string entry = "entry " + std::to_string(i);
    float score;
    int32_t len;
    if (!in.read(reinterpret_cast<char*>(&score), 4) || !in.read(reinterpret_cast<char*>(&len), 4))
      fail(path, entry, "missing", "truncated: expected " +
           (vocab_size < 0 ? std::string("a score and a length") : std::to_string(vocab_size) + " entries"));
    if (!std::isfinite(score)) fail(path, entry + " score", std::to_string(score), "expected a finite number");
    if (len < 0 || len > max_len)
      fail(path, entry + " length", std::to_string(len),
           "expected 0.." + std::to_string(max_len) + " (max_token_length)");
    std::string piece(len, '\0');
    if (!in.read(piece.data(), len)) fail(path, entry + " bytes", "missing", "truncated piece");
    offset += 8 + len;
    t.index_.emplace(piece, i);  // first occurrence wins, as run.c's sorted lookup finds one
    t.vocab_.push_back(std::move(piece));
    t.scores_.push_back(score);
  }
  if (vocab_size >= 0 && in.peek() != EOF)
    fail(path, "vocabulary", std::to_string(vocab_size) + " entries read, more bytes follow",
         "the tokenizer's vocabulary is larger than the model's vocab_size");
  if (t.vocab_.size() < 3 + 256)
    fail(path, "vocabulary", std::to_string(t.vocab_.size()) + " entries",
         "expected at least 259 (<unk>, <s>, </s> and 256 byte pieces)");
  return t;
}

int Tokenizer::lookup(const std::string& piece) const {
  auto it = index_.find(piece);
  return it == index_.end() ? -1 : it->second;
}

std::vector<int> Tokenizer::encode(const std::string& text, bool bos, bool eos) const {
  std::vector<int> tokens;
  if (hf_) {
    if (bos) tokens = prefix_ids_;
    const std::vector<int> body = encode_hf(text);
    tokens.insert(tokens.end(), body.begin(), body.end());
    if (bos) tokens.insert(tokens.end(), suffix_ids_.begin(), suffix_ids_.end());
    if (eos && eos_ >= 0) tokens.push_back(eos_);
    return tokens;
  }
  if (bos) tokens.push_back(kBos);
  // a dummy space before non-empty text, as sentencepiece's add_dummy_prefix
  if (!text.empty()) {
    const int space = lookup(" ");
    if (space >= 0) tokens.push_back(space);
  }
  // UTF-8 code points looked up whole; unknown ones fall back to their bytes (<0xNN> = byte + 3)
  std::string buf;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = text[i];
    if ((c & 0xC0) != 0x80) buf.clear();  // a new code point starts
    buf.push_back(static_cast<char>(c));
    const bool next_continues = i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80;
    if (next_continues && buf.size() < 4) continue;
    const int id = lookup(buf);
    if (id >= 0) {
      tokens.push_back(id);
    } else {
      for (unsigned char b : buf) tokens.push_back(b + 3);
    }
    buf.clear();
  }
  // merge the adjacent pair whose merged piece scores highest, until none merges
  std::string merged;
  while (true) {
    float best_score = -1e10f;
    int best_id = -1;
    size_t best_idx = 0;
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
      merged = vocab_[tokens[i]];
      merged += vocab_[tokens[i + 1]];
      const int id = lookup(merged);
      if (id >= 0 && scores_[id] > best_score) {
        best_score = scores_[id];
        best_id = id;
        best_idx = i;
      }
    }
    if (best_id < 0) break;
    tokens[best_idx] = best_id;
    tokens.erase(tokens.begin() + best_idx + 1);
  }
  if (eos) tokens.push_back(kEos);
  return tokens;
}

std::string Tokenizer::decode(int prev, int token) const {
  if (token < 0 || token >= vocab_size())
    throw Error("decode: token = " + std::to_string(token) + ": outside the vocabulary of " +
                std::to_string(vocab_size()));
  std::string piece = vocab_[token];
  if (strip_after_bos_ && prev == bos_ && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
  unsigned int byte = 0;
  if (byte_pieces_ && piece.size() == 6 && std::sscanf(piece.c_str(), "<0x%02X>", &byte) == 1)
    return std::string(1, static_cast<char>(byte));
  return piece;
}

std::string Tokenizer::printable(int prev, int token) const {
  std::string piece = decode(prev, token);
  if (piece.size() == 1) {
    const unsigned char b = piece[0];
    // run.c drops every lone non-printable byte; a Hugging Face tokenizer's pieces of a UTF-8
    // character (byte-level BPE splits emoji and CJK into bytes) are kept, so the text joins up
    if (!(std::isprint(b) || std::isspace(b) || (hf_ && b >= 0x80))) return "";
  }
  return piece;
}

std::string Tokenizer::decode_text(const std::vector<int>& ids) const {
  std::string text;
  for (int id : ids) {
    if (id < 0 || id >= vocab_size())
      throw Error("decode: token = " + std::to_string(id) + ": outside the vocabulary of " +
                  std::to_string(vocab_size()));
    const bool special = hf_ ? std::find(special_.begin(), special_.end(), id) != special_.end()
                             : id < 3;  // llama2.c: <unk>, <s>, </s>
    if (!special) text += decode(-1, id);
  }
  if (strip_after_bos_ && !text.empty() && text[0] == ' ') text.erase(0, 1);
  return text;
}

std::vector<int> Tokenizer::encode_prompt(const std::string& text) const {
  std::vector<int> ids = encode(text, true, false);
  if (ids.empty())
    fail("prompt", "text", "''", "gives no token: " + path_ + " adds no BOS, so a prompt must hold some text");
  return ids;
}

bool Tokenizer::ends_text(int id) const {
  if (!hf_) return id == kBos;  // run.c: BOS ends the story
  return id == bos_ || std::find(eos_ids_.begin(), eos_ids_.end(), id) != eos_ids_.end();
}

std::string Tokenizer::llama2c_bytes() const {
  // llama2.c's encoder looks text up by UTF-8 characters: it cannot give byte-level BPE's ids
  if (hf_ && pipe_->byte_level)
    fail(path_, "pre_tokenizer", "ByteLevel", "a byte-level tokenizer cannot be written in llama2.c's format");
  std::string out;
  auto put32 = [&](const void* p) { out.append(static_cast<const char*>(p), 4); };
  int32_t max_len = 1;
  for (const auto& p : vocab_) max_len = std::max<int32_t>(max_len, static_cast<int32_t>(p.size()));
  put32(&max_len);
  for (size_t i = 0; i < vocab_.size(); ++i) {
    const float score = scores_[i];
    const int32_t len = static_cast<int32_t>(vocab_[i].size());
    put32(&score);
    put32(&len);
    out += vocab_[i];
  }
  return out;
}

std::string Tokenizer::decode_all(const std::vector<int>& ids) const {
  std::string text;
  for (size_t i = 1; i < ids.size(); ++i) text += printable(ids[i - 1], ids[i]);
  return text;
}

}  // namespace kvcim::cmodel
