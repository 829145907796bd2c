// The regular expressions of tokenizer.json pre-tokenizers (Split's pattern.Regex, ByteLevel's
// GPT-2 pattern), matched as Hugging Face's engine (Oniguruma) matches them: backtracking over
// code points, leftmost alternative first, greedy quantifiers.
//
// Syntax: literals and escapes (\r \n \t \f \v \\ and escaped punctuation), . (not \n),
// classes [...] / [^...] with ranges, \s \S (White_Space), \p{L} \p{N} \P{L} \P{N} (also as
// \pL \pN), groups (...) (?:...), (?i:...) (ASCII letters fold case), lookahead (?=...) (?!...),
// quantifiers ? * + {n} {n,} {n,m} and their lazy forms. Anything else (\d, \w, \b, anchors,
// other properties, backreferences, inline flags) is refused by compile() with the reason.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kvcim::cmodel {

struct RegexError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class TokenRegex {
 public:
  // Throws RegexError naming the construct not supported, or the syntax error.
  static TokenRegex compile(const std::string& pattern);
  // The non-overlapping leftmost matches in text, as [begin, end) code-point offsets, scanning
  // left to right as a global search does (empty matches are skipped). Throws RegexError when a
  // search backtracks beyond a budget proportional to the text (a pattern that would take
  // exponential time).
  std::vector<std::pair<size_t, size_t>> find_all(const std::u32string& text) const;

  struct Program;

 private:
  std::shared_ptr<const Program> program_;
};

}  // namespace kvcim::cmodel
