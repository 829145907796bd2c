// llama2.c's tokenizer format and algorithm: int32 max_token_length, then per token a float32
// score, an int32 length and the bytes. encode() is run.c's: a leading dummy space for non-empty
// text, UTF-8 code points looked up whole, unknown bytes as <0xNN> pieces (id = byte + 3), then
// greedy merges of the adjacent pair whose merged piece has the highest score.
//
// The same class reads a Hugging Face tokenizer.json of Llama-2's kind (hf_tokenizer.cpp): model
// BPE with byte fallback, Llama-2's "▁" handling (normalizer Prepend("▁") + Replace(" ", "▁"), or
// a Metaspace pre-tokenizer), added tokens <unk> <s> </s> with <s> = 1 and </s> = 2. Its pieces
// are held as llama2.c holds them (▁ shown as a space), so decode() is one for both; encode() then
// applies the file's ranked merges, lowest rank first (leftmost on ties), as the tokenizers
// library does. Added tokens written in the text are not recognised (as in llama2.c).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvcim::cmodel {

inline constexpr int kBos = 1;
inline constexpr int kEos = 2;
// The largest vocabulary a tokenizer file may declare: more is a corrupt file, not a model.
inline constexpr int kMaxVocab = 1 << 24;

class Tokenizer {
 public:
  // Reads the file; vocab_size < 0 reads entries until the end of the file.
  // Throws kvcim::Error naming the file, the entry and the value at fault.
  // A path ending in .json, or a folder (its tokenizer.json), is read by load_hf().
  static Tokenizer load(const std::string& path, int vocab_size = -1);
  // A Hugging Face tokenizer.json (see above); vocab_size >= 0: the vocabulary must have that
  // many entries. `where` names the file in errors.
  static Tokenizer load_hf(const std::string& path, int vocab_size = -1);
  static Tokenizer parse_hf(const std::string& where, const std::string& json_text, int vocab_size = -1);
  // This tokenizer as a Hugging Face tokenizer.json (Llama-2's layout). For a llama2.c tokenizer
  // the merges are every split of a piece into two pieces, ranked by the piece's score (higher
  // first), which makes the two encoders agree when scores are distinct.
  std::string hf_json() const;
  // This tokenizer in llama2.c's format (for a tokenizer.json: scores are minus the rank of the
  // first merge making each piece; pieces no merge makes score -1e10, which llama2.c never merges).
  std::string llama2c_bytes() const;
  bool is_hf() const { return hf_; }

  std::vector<int> encode(const std::string& text, bool bos, bool eos) const;
  // The piece printed when `token` follows `prev`: a leading space after BOS stripped,
  // <0xNN> pieces as the raw byte.
  std::string decode(int prev, int token) const;
  // decode() filtered as run.c's safe_printf: lone non-printable bytes print nothing.
  std::string printable(int prev, int token) const;
  // Text of a whole id sequence (ids[0] is the first token fed; each later id printed).
  std::string decode_all(const std::vector<int>& ids) const;
  // Text of ids as Hugging Face's decode(skip_special_tokens=True) gives it: special tokens
  // (<unk> <s> </s>) dropped, byte pieces as raw bytes, one leading space removed.
  std::string decode_text(const std::vector<int>& ids) const;

  int vocab_size() const { return static_cast<int>(vocab_.size()); }
  const std::string& piece(int id) const { return vocab_.at(id); }
  float score(int id) const { return scores_.at(id); }
  const std::string& path() const { return path_; }

 private:
  int lookup(const std::string& piece) const;
  std::vector<int> encode_hf(const std::string& text) const;
  std::vector<std::string> vocab_;
  std::vector<float> scores_;
  std::unordered_map<std::string, int> index_;
  int max_token_length_ = 0;
  std::string path_;
  // tokenizer.json only
  enum class Prefix { none, always, unless_space };  // Prepend("▁") / Metaspace / neither
  bool hf_ = false;
  Prefix prefix_ = Prefix::always;
  bool split_words_ = false;    // Metaspace split: each ▁-word encoded on its own
  bool byte_fallback_ = true;
  bool fuse_unk_ = true;
  int unk_ = -1;
  std::vector<int> special_;    // ids of added special tokens
  std::vector<int> byte_ids_;   // <0xNN> piece of each byte, -1 when absent
  // (left id << 32 | right id) -> (rank, merged id)
  std::unordered_map<uint64_t, std::pair<int, int>> merges_;
};

}  // namespace kvcim::cmodel
