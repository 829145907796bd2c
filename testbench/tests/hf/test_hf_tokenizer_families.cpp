// The real tokenizers of three families (testdata/tokenizers/: Mistral-7B's SentencePiece-style
// BPE with byte fallback, Llama-3's and Qwen3's byte-level BPE with Split regexes), each held to
// the ids transformers.js gives for 415 strings (scripts/tokenizer_reference.mjs): English, code,
// numbers, whitespace runs, newlines, emoji, CJK, accents (decomposed ones too, for Qwen's NFC),
// contractions, and the special-token strings of all three families.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kvcim/cmodel/tokenizer.hpp"

using namespace kvcim::cmodel;

namespace {

std::string tokenizer_path(const std::string& family) {
  return std::string(KVCIM_TOKENIZER_DATA) + "/" + family + "/tokenizer.json";
}

nlohmann::json cases_of(const std::string& family) {
  std::ifstream in(std::string(KVCIM_SOURCE_DIR) + "/testdata/tokenizers/" + family + "/cases.json");
  EXPECT_TRUE(in.good()) << family;
  return nlohmann::json::parse(in)["cases"];
}

// One tokenizer per family for the whole program (Llama-3's file takes ~1 s to read).
const Tokenizer& family(const std::string& name) {
  static std::map<std::string, Tokenizer> loaded;
  auto it = loaded.find(name);
  if (it == loaded.end()) it = loaded.emplace(name, Tokenizer::load(tokenizer_path(name))).first;
  return it->second;
}

std::string shown(const std::string& s) { return nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace); }

void expect_reference_ids(const std::string& name) {
  const Tokenizer& t = family(name);
  const nlohmann::json cases = cases_of(name);
  ASSERT_GE(cases.size(), 400u);
  int wrong = 0;
  for (const auto& c : cases) {
    const std::string text = c["text"];
    const auto ids = c["ids"].get<std::vector<int>>();
    const std::vector<int> got = t.encode(text, false, false);
    const std::vector<int> got_special = t.encode(text, true, false);
    const std::string decoded = t.decode_text(got);
    const bool ok = got == ids && got_special == c["ids_special"].get<std::vector<int>>() &&
                    decoded == c["decoded"].get<std::string>();
    if (!ok && ++wrong <= 5) {
      ADD_FAILURE() << name << " " << shown(text) << "\n  ids      " << nlohmann::json(got).dump()
                    << "\n  expected " << c["ids"].dump() << "\n  with special " << nlohmann::json(got_special).dump()
                    << " expected " << c["ids_special"].dump() << "\n  decoded " << shown(decoded) << " expected "
                    << c["decoded"].dump();
    }
  }
  EXPECT_EQ(wrong, 0) << name << ": cases differing from transformers.js";
}

}  // namespace

TEST(HfTokenizerFamilies, MistralGivesTransformersJsIds) { expect_reference_ids("mistral"); }
TEST(HfTokenizerFamilies, Llama3GivesTransformersJsIds) { expect_reference_ids("llama3"); }
TEST(HfTokenizerFamilies, Qwen3GivesTransformersJsIds) { expect_reference_ids("qwen3"); }

TEST(HfTokenizerFamilies, SpecialIdsComeFromTheConfigFiles) {
  const Tokenizer& mistral = family("mistral");
  EXPECT_EQ(mistral.bos_id(), 1);
  EXPECT_EQ(mistral.eos_id(), 2);
  const Tokenizer& llama3 = family("llama3");
  EXPECT_EQ(llama3.bos_id(), 128000);  // <|begin_of_text|>
  EXPECT_EQ(llama3.eos_id(), 128001);  // <|end_of_text|>
  EXPECT_TRUE(llama3.ends_text(128001));
  EXPECT_FALSE(llama3.ends_text(2));
  EXPECT_EQ(llama3.encode("Hi", true, true), (std::vector<int>{128000, 13347, 128001}));
  const Tokenizer& qwen = family("qwen3");
  EXPECT_EQ(qwen.bos_id(), -1);       // bos_token: null, add_bos_token: false
  EXPECT_EQ(qwen.eos_id(), 151645);   // <|im_end|>
  EXPECT_EQ(qwen.pad_id(), 151643);   // <|endoftext|>
  EXPECT_EQ(qwen.encode("Hi", true, false), qwen.encode("Hi", false, false));
}

TEST(HfTokenizerFamilies, ByteLevelRoundTripsAnyBytes) {
  // Byte-level BPE encodes every byte string, invalid UTF-8 included, and decodes it back.
  for (const char* name : {"llama3", "qwen3"}) {
    const Tokenizer& t = family(name);
    for (const std::string& s : {std::string("plain text"), std::string("\xff\xfe broken \xc3 utf-8 \xe2\x82"),
                                std::string("tab\tnew\nline\r\n  spaces   "), std::string("\x00\x01\x7f", 3)}) {
      EXPECT_EQ(t.decode_text(t.encode(s, false, false)), s) << name << " " << shown(s);
    }
  }
}

TEST(HfTokenizerFamilies, LongTextEncodesInLinearTime) {
  // ~64k characters of mixed text, encoded by each family: a quadratic step would take minutes.
  std::string text;
  const nlohmann::json cases = cases_of("llama3");
  for (size_t i = 0; text.size() < 64000; ++i) text += cases[i % cases.size()]["text"].get<std::string>() + " ";
  for (const char* name : {"mistral", "llama3", "qwen3"}) {
    const Tokenizer& t = family(name);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int> ids = t.encode(text, false, false);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 5.0) << name;
    EXPECT_GT(ids.size(), 10000u) << name;
    std::cout << name << ": " << text.size() << " bytes -> " << ids.size() << " ids in " << seconds << " s\n";
  }
}
