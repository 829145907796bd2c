// llama2.c's tokenizer format and algorithm: int32 max_token_length, then per token a float32
// score, an int32 length and the bytes. encode() is run.c's: a leading dummy space for non-empty
// text, UTF-8 code points looked up whole, unknown bytes as <0xNN> pieces (id = byte + 3), then
// greedy merges of the adjacent pair whose merged piece has the highest score.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

namespace kvcim::cmodel {

inline constexpr int kBos = 1;
inline constexpr int kEos = 2;

class Tokenizer {
 public:
  // Reads the file; vocab_size < 0 reads entries until the end of the file.
  // Throws kvcim::Error naming the file, the entry and the value at fault.
  static Tokenizer load(const std::string& path, int vocab_size = -1);

  std::vector<int> encode(const std::string& text, bool bos, bool eos) const;
  // The piece printed when `token` follows `prev`: a leading space after BOS stripped,
  // <0xNN> pieces as the raw byte.
  std::string decode(int prev, int token) const;
  // decode() filtered as run.c's safe_printf: lone non-printable bytes print nothing.
  std::string printable(int prev, int token) const;
  // Text of a whole id sequence (ids[0] is the first token fed; each later id printed).
  std::string decode_all(const std::vector<int>& ids) const;

  int vocab_size() const { return static_cast<int>(vocab_.size()); }
  const std::string& piece(int id) const { return vocab_.at(id); }
  float score(int id) const { return scores_.at(id); }
  const std::string& path() const { return path_; }

 private:
  int lookup(const std::string& piece) const;
  std::vector<std::string> vocab_;
  std::vector<float> scores_;
  std::unordered_map<std::string, int> index_;
  int max_token_length_ = 0;
  std::string path_;
};

}  // namespace kvcim::cmodel
