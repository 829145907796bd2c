// A hand-made tokenizer.json (Llama-2's layout: BPE, byte fallback, Prepend("▁") + Replace) and
// the ids each text must give, worked out by hand from the merge ranks below.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "error_of.hpp"
#include "kvcim/cmodel/tokenizer.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;

namespace {

// ids: 0 <unk> 1 <s> 2 </s> 3 <0xE2> 4 <0x82> 5 <0xAC> 6 <0x0A> 7 ▁ 8 h 9 e 10 l 11 o 12 w 13 r
// 14 d 15 é 16 ▁h 17 ll 18 ▁he 19 llo 20 ▁hello 21 ▁w 22 or 23 ▁wor 24 ld 25 ▁world 26 ▁▁
const char* kVocab = R"("vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0xE2>": 3, "<0x82>": 4,
  "<0xAC>": 5, "<0x0A>": 6, "▁": 7, "h": 8, "e": 9, "l": 10, "o": 11, "w": 12, "r": 13, "d": 14,
  "é": 15, "▁h": 16, "ll": 17, "▁he": 18, "llo": 19, "▁hello": 20, "▁w": 21, "or": 22, "▁wor": 23,
  "ld": 24, "▁world": 25, "▁▁": 26},
  "merges": ["▁ h", "l l", "▁h e", "ll o", "▁he llo", "▁ w", "o r", "▁w or", "l d", "▁wor ld", "▁ ▁"])";

const char* kAdded = R"("added_tokens": [
  {"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true},
  {"id": 2, "content": "</s>", "special": true}])";

std::string llama2_json(const std::string& model_type = "BPE") {
  return std::string("{") + kAdded + R"(,
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                 {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "pre_tokenizer": null,
  "model": {"type": ")" + model_type + R"(", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true, )" +
         kVocab + "}}";
}

std::string metaspace_json() {
  return std::string("{") + kAdded + R"(, "normalizer": null,
  "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false},
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true, )" + kVocab + "}}";
}

std::string file_with(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/kvcim_tok_" + name + ".json";
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

}  // namespace

TEST(HfTokenizer, EncodesByRankWithByteFallbackAndDecodes) {
  const Tokenizer t = Tokenizer::load(file_with("llama2", llama2_json()));
  ASSERT_TRUE(t.is_hf());
  EXPECT_EQ(t.vocab_size(), 27);
  struct Case {
    std::string text;
    std::vector<int> ids;  // BOS first
    std::string decoded;
  };
  const std::vector<Case> cases = {
      {"hello world", {1, 20, 25}, "hello world"},
      // (▁,w) ranks 5, before (▁,▁) at 10: the second space stays alone
      {"hello  world", {1, 20, 7, 25}, "hello  world"},
      // é is a piece; € (E2 82 AC) is not: its three bytes
      {"\xC3\xA9\xE2\x82\xAC", {1, 7, 15, 3, 4, 5}, "\xC3\xA9\xE2\x82\xAC"},
      {"\n", {1, 7, 6}, "\n"},
      // no piece and no byte piece for 'a', 'b': one fused <unk>, dropped when decoding
      {"ab", {1, 7, 0}, ""},
      {"hello ab", {1, 20, 7, 0}, "hello "},
      {"", {1}, ""},
      // Prepend always adds ▁: a leading space gives ▁▁hello, (▁,h) merging first
      {" hello", {1, 7, 20}, " hello"},
      // a ▁ written in the text is a space
      {"\xE2\x96\x81hello", {1, 7, 20}, " hello"},
      {"world\nhello", {1, 25, 6, 8, 9, 19}, "world\nhello"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(t.encode(c.text, true, false), c.ids) << "'" << c.text << "'";
    EXPECT_EQ(t.decode_text(c.ids), c.decoded) << "'" << c.text << "'";
  }
  EXPECT_EQ(t.encode("hello", true, true), (std::vector<int>{1, 20, 2}));
  // pieces are held as llama2.c holds them: ▁ as a space, byte pieces as the byte when decoded
  EXPECT_EQ(t.piece(20), " hello");
  EXPECT_EQ(t.decode(1, 20), "hello");
  EXPECT_EQ(t.decode(20, 3), "\xE2");
}

TEST(HfTokenizer, MetaspaceDoesNotPrependBeforeASpace) {
  const Tokenizer t = Tokenizer::load(file_with("metaspace", metaspace_json()));
  EXPECT_EQ(t.encode("hello world", true, false), (std::vector<int>{1, 20, 25}));
  EXPECT_EQ(t.encode(" hello", true, false), (std::vector<int>{1, 20}));
}

TEST(HfTokenizer, WrittenAndReadBackAgrees) {
  const Tokenizer t = Tokenizer::load(file_with("llama2b", llama2_json()));
  const Tokenizer back = Tokenizer::parse_hf("back", t.hf_json());
  for (const char* s : {"hello world", "hello  world", " hello", "\xC3\xA9\xE2\x82\xAC", "ab"})
    EXPECT_EQ(back.encode(s, true, false), t.encode(s, true, false)) << s;
}

TEST(HfTokenizer, UnsupportedOrBrokenFilesNameTheFileAndField) {
  for (const char* type : {"Unigram", "WordPiece", "WordLevel"}) {
    const std::string path = file_with(std::string("type_") + type, llama2_json(type));
    const std::string msg = test::error_of([&] { Tokenizer::load(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("model.type"), std::string::npos) << msg;
    EXPECT_NE(msg.find(type), std::string::npos) << msg;
  }
  struct Bad {
    std::string name, text, field;
  };
  std::string no_bos = llama2_json();
  no_bos.replace(no_bos.find("\"<s>\": 1"), 8, "\"<S>\": 1");
  no_bos.replace(no_bos.find("\"content\": \"<s>\""), 16, "\"content\": \"<S>\"");
  std::string bad_merge = llama2_json();
  bad_merge.replace(bad_merge.find("\"l d\""), 5, "\"l q\"");
  std::string bytelevel = llama2_json();
  bytelevel.replace(bytelevel.find("\"pre_tokenizer\": null"), 21, "\"pre_tokenizer\": {\"type\": \"ByteLevel\"}");
  std::string wrong_type = llama2_json();
  const std::string prepend = "\"prepend\": \"▁\"";
  wrong_type.replace(wrong_type.find(prepend), prepend.size(), "\"prepend\": 5");
  const std::vector<Bad> bad = {
      {"wrongtype", wrong_type, "wrong type"},  // nlohmann's type_error, before: not a kvcim::Error
      {"notjson", "{\"model\": ", "JSON"},
      {"nomodel", "{}", "model"},
      {"nobos", no_bos, "added_tokens"},
      {"badmerge", bad_merge, "model.merges[8]"},
      {"bytelevel", bytelevel, "pre_tokenizer"},
  };
  for (const Bad& b : bad) {
    const std::string path = file_with(b.name, b.text);
    const std::string msg = test::error_of([&] { Tokenizer::load(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << b.name << ": " << msg;
    EXPECT_NE(msg.find(b.field), std::string::npos) << b.name << ": " << msg;
  }
  // the model's vocabulary must match
  const std::string msg = test::error_of([&] { Tokenizer::load(file_with("llama2c", llama2_json()), 32); });
  EXPECT_NE(msg.find("vocabulary"), std::string::npos) << msg;
}
