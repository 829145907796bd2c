// llama2.c's tokenizer format and algorithm: int32 max_token_length, then per token a float32
// score, an int32 length and the bytes. encode() is run.c's: a leading dummy space for non-empty
// text, UTF-8 code points looked up whole, unknown bytes as <0xNN> pieces (id = byte + 3), then
// greedy merges of the adjacent pair whose merged piece has the highest score. BOS is id 1.
//
// The same class reads a Hugging Face tokenizer.json with its BPE model (hf_tokenizer.cpp,
// hf_pipeline.cpp; docs/models.md): SentencePiece-style BPE with byte fallback (Llama-2,
// Mistral: pieces held as llama2.c holds them, ▁ as a space) and byte-level BPE (GPT-2's byte
// alphabet: Llama-3, Qwen; pieces held as the bytes they stand for), so decode() is one for all.
// encode() runs the file's pipeline as Hugging Face's tokenizers library does: added tokens
// matched in the text, normalizer, pre-tokenizer (Split regexes, ByteLevel, Metaspace), ranked
// merges (lowest rank first, leftmost on ties), and with `bos` the post-processor's special
// tokens. BOS, EOS and whether BOS is added come from tokenizer_config.json and config.json
// beside the file when present.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvcim::cmodel {

struct HfPipeline;

// llama2.c's BOS and EOS (a Hugging Face tokenizer's are bos_id() and eos_id())
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
  // A Hugging Face tokenizer.json (see above) and, when they exist beside it,
  // tokenizer_config.json and config.json; vocab_size >= 0: the vocabulary must have that many
  // entries. `where` names the file in errors; config texts empty: no such file.
  static Tokenizer load_hf(const std::string& path, int vocab_size = -1);
  static Tokenizer parse_hf(const std::string& where, const std::string& json_text, int vocab_size = -1,
                            const std::string& tokenizer_config = "", const std::string& model_config = "");
  // This tokenizer as a Hugging Face tokenizer.json (Llama-2's layout). For a llama2.c tokenizer
  // the merges are every split of a piece into two pieces, ranked by the piece's score (higher
  // first), which makes the two encoders agree when scores are distinct.
  std::string hf_json() const;
  // This tokenizer in llama2.c's format (for a tokenizer.json: scores are minus the rank of the
  // first merge making each piece; pieces no merge makes score -1e10, which llama2.c never merges).
  std::string llama2c_bytes() const;
  bool is_hf() const { return hf_; }

  // bos: the special tokens the tokenizer adds (llama2.c: BOS; Hugging Face: the post-processor's
  // template, or add_bos_token/add_eos_token of tokenizer_config.json); eos: EOS after them.
  std::vector<int> encode(const std::string& text, bool bos, bool eos) const;
  // encode(text, true, false), refused when it gives no token (a tokenizer without BOS, Qwen's,
  // and an empty prompt): a model needs a first token to feed.
  std::vector<int> encode_prompt(const std::string& text) const;
  int bos_id() const { return bos_; }  // -1: the tokenizer has none (Qwen)
  int eos_id() const { return eos_; }  // -1: none
  int pad_id() const { return pad_; }  // -1: none
  // Generation ends at this token: llama2.c's BOS (run.c); a Hugging Face tokenizer's BOS or any
  // of its EOS ids (tokenizer_config.json's eos_token, config.json's eos_token_id).
  bool ends_text(int id) const;
  // The piece printed when `token` follows `prev`: a leading space after BOS stripped (when the
  // tokenizer's decoder strips it), <0xNN> byte-fallback pieces as the raw byte.
  std::string decode(int prev, int token) const;
  // decode() filtered as run.c's safe_printf: lone non-printable bytes print nothing (a Hugging
  // Face tokenizer's bytes >= 0x80 are kept: pieces of a UTF-8 character).
  std::string printable(int prev, int token) const;
  // Text of a whole id sequence (ids[0] is the first token fed; each later id printed).
  std::string decode_all(const std::vector<int>& ids) const;
  // Text of ids as Hugging Face's decode(skip_special_tokens=True) gives it: special tokens
  // (<unk> <s> </s>; a tokenizer.json's special added tokens) dropped, byte pieces as raw bytes,
  // one leading space removed (llama2.c, Llama-2's Strip decoder).
  std::string decode_text(const std::vector<int>& ids) const;

  int vocab_size() const { return static_cast<int>(vocab_.size()); }
  const std::string& piece(int id) const { return vocab_.at(id); }
  float score(int id) const { return scores_.at(id); }
  const std::string& path() const { return path_; }

 private:
  int lookup(const std::string& piece) const;
  std::vector<int> encode_hf(const std::string& text) const;
  void encode_word(const std::string& word, std::vector<int>& out) const;
  std::vector<std::string> vocab_;
  std::vector<float> scores_;
  std::unordered_map<std::string, int> index_;
  int max_token_length_ = 0;
  std::string path_;
  int bos_ = kBos, eos_ = kEos, pad_ = -1;
  std::vector<int> eos_ids_{kEos};
  bool byte_pieces_ = true;       // <0xNN> pieces decode to their byte (llama2.c, byte fallback)
  bool strip_after_bos_ = true;   // decode() drops a piece's leading space after BOS
  // tokenizer.json only
  bool hf_ = false;
  std::shared_ptr<const HfPipeline> pipe_;
  std::vector<int> prefix_ids_, suffix_ids_;  // encode(bos = true) puts these around the text
  bool ignore_merges_ = false;  // a pre-token that is a piece of the vocabulary is not merged
  int model_vocab_ = 0;         // ids below: model.vocab; above: added tokens
  bool byte_fallback_ = true;
  bool fuse_unk_ = true;
  int unk_ = -1;
  std::vector<int> special_;    // ids of added special tokens
  std::vector<int> byte_ids_;   // <0xNN> piece of each byte, -1 when absent
  // (left id << 32 | right id) -> (rank, merged id)
  std::unordered_map<uint64_t, std::pair<int, int>> merges_;
};

}  // namespace kvcim::cmodel
