// What a tokenizer.json does around its BPE model, as Hugging Face's tokenizers library runs it:
// added tokens matched in the raw text first, then per remaining segment the normalizer and the
// pre-tokenizer, whose pieces the model encodes; the post-processor's special tokens around the
// result. Read from the file by parse_pipeline(), run by Tokenizer::encode_hf (hf_tokenizer.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "token_regex.hpp"

namespace kvcim::cmodel {

// Shared by hf_pipeline.cpp and hf_tokenizer.cpp.
namespace hf {
inline const std::string kMeta = "\xE2\x96\x81";  // ▁ U+2581, SentencePiece's space
std::string replace_all(std::string s, const std::string& from, const std::string& to);
// The start of a JSON value as an error message quotes it (at most `n` characters).
std::string excerpt(const nlohmann::json& j, size_t n = 80);
}  // namespace hf

struct HfPipeline {
  struct AddedToken {
    std::string content;  // as written in the text
    int id;
    bool special, lstrip, rstrip, single_word;
  };
  std::vector<AddedToken> added;
  std::vector<std::vector<int>> added_by_byte;  // first byte -> indices into added, longest first

  struct Normalize {
    enum class Kind { nfc, prepend, replace } kind;
    std::string a, b;  // prepend: a; replace: a -> b
  };
  std::vector<Normalize> normalizer;

  struct PreTokenize {
    enum class Kind { split, byte_level, metaspace } kind;
    std::optional<TokenRegex> regex;  // split; byte_level with use_regex (GPT-2's pattern)
    enum class Behavior { isolated, removed, merged_with_previous, merged_with_next } behavior = Behavior::isolated;
    bool add_prefix_space = false;  // byte_level
    // metaspace: ' ' -> replacement; prepend it (always / first segment only / never); split at it
    std::string replacement;
    enum class Prepend { always, first, never } prepend = Prepend::always;
    bool split = true;
  };
  std::vector<PreTokenize> pre_tokenizer;

  bool byte_level = false;  // the vocabulary is in GPT-2's byte-to-unicode form (held as bytes)
  bool has_template = false;  // the post-processor has a TemplateProcessing
  std::vector<std::string> template_prefix, template_suffix;  // its special tokens around the text
  bool strip_leading_space = false;  // decoder Strip(" ", 1, 0): Llama-2's

  // Splits text into pieces of the added tokens (id >= 0) and of text between them (id = -1),
  // lstrip/rstrip/single_word honoured.
  struct Segment {
    std::string text;
    int id;
    bool at_start;  // the segment starts the text (Metaspace prepend_scheme "first")
  };
  std::vector<Segment> split_added(const std::string& text) const;
  std::string normalize(std::string text) const;
  std::vector<std::string> pre_tokenize(const std::string& text, bool at_start) const;
};

// Reads normalizer, pre_tokenizer, post_processor and decoder of the tokenizer.json `j` (not the
// model, nor added tokens); throws kvcim::Error naming `where` and the component not supported.
void parse_pipeline(const std::string& where, const nlohmann::json& j, HfPipeline& p);

// GPT-2's byte-level alphabet: the code point standing for each byte, and back (-1: none).
char32_t byte_to_unicode(unsigned char b);
int unicode_to_byte(char32_t cp);

}  // namespace kvcim::cmodel
