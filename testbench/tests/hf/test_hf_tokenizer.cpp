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

// Llama-2's decoder: ▁ as a space, byte pieces as bytes, one leading space dropped
const char* kDecoder = R"("decoder": {"type": "Sequence", "decoders": [
  {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
  {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]})";

const char* kAdded = R"("added_tokens": [
  {"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true},
  {"id": 2, "content": "</s>", "special": true}])";

std::string llama2_json(const std::string& model_type = "BPE") {
  return std::string("{") + kAdded + "," + kDecoder + R"(,
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                 {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "pre_tokenizer": null,
  "model": {"type": ")" + model_type + R"(", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true, )" +
         kVocab + "}}";
}

std::string metaspace_json() {
  return std::string("{") + kAdded + "," + kDecoder + R"(, "normalizer": null,
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
  std::string bad_merge = llama2_json();
  bad_merge.replace(bad_merge.find("\"l d\""), 5, "\"l q\"");
  std::string whitespace = llama2_json();
  whitespace.replace(whitespace.find("\"pre_tokenizer\": null"), 21, "\"pre_tokenizer\": {\"type\": \"Whitespace\"}");
  std::string wrong_type = llama2_json();
  const std::string prepend = "\"prepend\": \"▁\"";
  wrong_type.replace(wrong_type.find(prepend), prepend.size(), "\"prepend\": 5");
  const std::vector<Bad> bad = {
      {"wrongtype", wrong_type, "normalizer.normalizers[0].prepend = 5"},
      {"notjson", "{\"model\": ", "JSON"},
      {"nomodel", "{}", "model"},
      {"badmerge", bad_merge, "model.merges[8]"},
      {"whitespace", whitespace, "pre_tokenizer = Whitespace: not supported"},
  };
  for (const Bad& b : bad) {
    const std::string path = file_with(b.name, b.text);
    const std::string msg = test::error_of([&] { Tokenizer::load(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << b.name << ": " << msg;
    EXPECT_NE(msg.find(b.field), std::string::npos) << b.name << ": " << msg;
  }
  // the model's vocabulary must hold the tokenizer's; rows past it are ids decoding to nothing
  const std::string msg = test::error_of([&] { Tokenizer::load(file_with("llama2c", llama2_json()), 20); });
  EXPECT_NE(msg.find("vocabulary = 27 entries: more than the model's vocab_size of 20"), std::string::npos) << msg;
  const Tokenizer padded = Tokenizer::load(file_with("llama2p", llama2_json()), 32);
  EXPECT_EQ(padded.vocab_size(), 32);
  EXPECT_EQ(padded.decode_text({20, 31, 25}), "hello world");
  EXPECT_EQ(padded.encode("hello world", true, false), (std::vector<int>{1, 20, 25}));
}

namespace {

// A byte-level tokenizer (Llama-3's layout) of a few pieces: bytes a b c, space (Ġ), "ab", "Ġab".
std::string byte_level_json(const std::string& pre_tokenizer, const std::string& extra = "") {
  return R"({"added_tokens": [{"id": 6, "content": "<|end|>", "special": true}],
  "normalizer": null, "pre_tokenizer": )" + pre_tokenizer + R"(, "post_processor": null,
  "decoder": {"type": "ByteLevel"}, )" + extra + R"(
  "model": {"type": "BPE", "ignore_merges": false, "vocab": {"a": 0, "b": 1, "c": 2, "Ġ": 3, "ab": 4, "Ġab": 5},
            "merges": ["a b", "Ġ ab"]}})";
}

const char* kLlama3Split = R"({"type": "Sequence", "pretokenizers": [
  {"type": "Split", "pattern": {"Regex": "(?i:'s|'t)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"},
   "behavior": "Isolated", "invert": false},
  {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})";

}  // namespace

TEST(HfTokenizer, ByteLevelSplitsMergesAndMatchesAddedTokens) {
  const Tokenizer t = Tokenizer::parse_hf("bl.json", byte_level_json(kLlama3Split));
  EXPECT_EQ(t.encode("ab ab", false, false), (std::vector<int>{4, 5}));
  EXPECT_EQ(t.encode("abc<|end|>ab", false, false), (std::vector<int>{4, 2, 6, 4}));
  EXPECT_EQ(t.decode_text({4, 5, 6, 2}), "ab abc");  // the special token dropped
  EXPECT_EQ(t.bos_id(), -1);  // no <s>, no tokenizer_config.json: none, nothing added
  EXPECT_EQ(t.encode("ab", true, false), (std::vector<int>{4}));
  // the whole byte string, bytes outside the vocabulary refused by name
  const std::string msg = test::error_of([&] { t.encode("abd", false, false); });
  EXPECT_NE(msg.find("bl.json"), std::string::npos) << msg;
  // neither file format kvcim writes can hold it
  EXPECT_NE(test::error_of([&] { (void)t.llama2c_bytes(); }).find("pre_tokenizer = ByteLevel"), std::string::npos);
  EXPECT_NE(test::error_of([&] { (void)t.hf_json(); }).find("pre_tokenizer = ByteLevel"), std::string::npos);
}

TEST(HfTokenizer, SideFilesGiveBosEosAndAddBos) {
  const std::string cfg = R"({"bos_token": {"content": "a", "__type": "AddedToken"}, "eos_token": "<|end|>",
                              "add_bos_token": true})";
  const Tokenizer t = Tokenizer::parse_hf("dir/tokenizer.json", byte_level_json(kLlama3Split), -1, cfg,
                                          R"({"eos_token_id": [6, 2]})");
  EXPECT_EQ(t.bos_id(), 0);
  EXPECT_EQ(t.eos_id(), 6);
  EXPECT_TRUE(t.ends_text(2));  // config.json's second EOS
  EXPECT_EQ(t.encode("ab", true, true), (std::vector<int>{0, 4, 6}));
  // a template post-processor adds its special tokens
  const std::string tpl = R"("post_processor": {"type": "Sequence", "processors": [{"type": "ByteLevel"},
    {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "c", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
     {"SpecialToken": {"id": "<|end|>", "type_id": 0}}],
     "special_tokens": {"c": {"id": "c", "ids": [2], "tokens": ["c"]}, "<|end|>": {"id": "<|end|>", "ids": [6], "tokens": ["<|end|>"]}}}]},)";
  std::string with_template = byte_level_json(kLlama3Split);
  with_template.replace(with_template.find("\"post_processor\": null,"), 23, tpl);
  EXPECT_EQ(Tokenizer::parse_hf("t.json", with_template).encode("ab", true, false), (std::vector<int>{2, 4, 6}));
}

TEST(HfTokenizer, UnsupportedComponentsAreRefusedByName) {
  struct Bad {
    std::string name, text, expected;
  };
  auto with = [](const std::string& key, const std::string& value) {
    std::string s = byte_level_json(kLlama3Split);
    const std::string null_key = "\"" + key + "\": null";
    if (s.find(null_key) != std::string::npos) return s.replace(s.find(null_key), null_key.size(), "\"" + key + "\": " + value);
    return byte_level_json(value);  // the pre-tokenizer
  };
  std::string wordpiece = byte_level_json(kLlama3Split);
  wordpiece.replace(wordpiece.find("{\"type\": \"ByteLevel\"}"), 21, "{\"type\": \"WordPiece\"}");
  std::string unigram = byte_level_json(kLlama3Split);
  unigram.replace(unigram.find("\"BPE\""), 5, "\"Unigram\"");
  const std::vector<Bad> bad = {
      {"nfkc", with("normalizer", R"({"type": "NFKC"})"), "normalizer = NFKC: not supported"},
      {"lower", with("normalizer", R"({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]})"),
       "normalizer.normalizers[1] = Lowercase: not supported"},
      {"digits", with("pre_tokenizer", R"({"type": "Digits"})"), "pre_tokenizer = Digits: not supported"},
      {"regex_d", with("pre_tokenizer", R"({"type": "Split", "pattern": {"Regex": "\\d+"}, "behavior": "Isolated"})"),
       "the escape \\d is not supported"},
      {"regex_lu", with("pre_tokenizer", R"({"type": "Split", "pattern": {"Regex": "\\p{Lu}"}, "behavior": "Isolated"})"),
       "\\p{Lu} is not supported"},
      {"lookbehind", with("pre_tokenizer", R"({"type": "Split", "pattern": {"Regex": "(?<=a)b"}, "behavior": "Isolated"})"),
       "not supported"},
      {"empty_loop", with("pre_tokenizer", R"({"type": "Split", "pattern": {"Regex": "(a?)*"}, "behavior": "Isolated"})"),
       "can match nothing"},
      {"invert", with("pre_tokenizer", R"({"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Isolated", "invert": true})"),
       "invert = true"},
      {"contiguous", with("pre_tokenizer", R"({"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Contiguous"})"),
       "behavior = 'Contiguous'"},
      {"roberta", with("post_processor", R"({"type": "RobertaProcessing"})"), "post_processor = RobertaProcessing: not supported"},
      {"wordpiece", wordpiece, "decoder = WordPiece: not supported"},
      {"unigram", unigram, "model.type = \"Unigram\": not supported"},
  };
  for (const Bad& b : bad) {
    const std::string msg = test::error_of([&] { Tokenizer::parse_hf(b.name + ".json", b.text); });
    EXPECT_NE(msg.find(b.name + ".json"), std::string::npos) << b.name << ": " << msg;
    EXPECT_NE(msg.find(b.expected), std::string::npos) << b.name << ": " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << b.name << ": " << msg;
  }
  // side files naming tokens the vocabulary lacks, or ids outside it
  const std::string tok = byte_level_json(kLlama3Split);
  std::string msg = test::error_of([&] { Tokenizer::parse_hf("d/tokenizer.json", tok, -1, R"({"bos_token": "<s>"})"); });
  EXPECT_NE(msg.find("d/tokenizer_config.json: bos_token = '<s>'"), std::string::npos) << msg;
  msg = test::error_of([&] { Tokenizer::parse_hf("d/tokenizer.json", tok, -1, "", R"({"eos_token_id": 99})"); });
  EXPECT_NE(msg.find("d/config.json: eos_token_id = 99"), std::string::npos) << msg;
  msg = test::error_of([&] { Tokenizer::parse_hf("d/tokenizer.json", tok, -1, "{", ""); });
  EXPECT_NE(msg.find("d/tokenizer_config.json: JSON"), std::string::npos) << msg;
  // a pattern that backtracks exponentially is stopped, not run for hours
  const Tokenizer slow = Tokenizer::parse_hf(
      "slow.json", byte_level_json(R"({"type": "Sequence", "pretokenizers": [{"type": "ByteLevel", "use_regex": false},
        {"type": "Split", "pattern": {"Regex": "(a|a)+(a|a)+c"}, "behavior": "Isolated"}]})"));
  msg = test::error_of([&] { slow.encode(std::string(40, 'a'), false, false); });
  EXPECT_NE(msg.find("backtracks too much"), std::string::npos) << msg;
}
