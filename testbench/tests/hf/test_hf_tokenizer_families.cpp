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
#include "kvcim/error.hpp"

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

// One tokenizer per family for the whole program (Llama-3's file takes ~1 s to read); CTest runs
// each case in a process of its own, so each family's checks are one case.
const Tokenizer& family(const std::string& name) {
  static std::map<std::string, Tokenizer> loaded;
  auto it = loaded.find(name);
  if (it == loaded.end()) it = loaded.emplace(name, Tokenizer::load(tokenizer_path(name))).first;
  return it->second;
}

std::string shown(const std::string& s) { return nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace); }

void expect_reference_ids(const std::string& name) {
  SCOPED_TRACE(name + ": the ids of transformers.js");
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

// Byte-level BPE encodes every byte string, invalid UTF-8 included, and decodes it back.
void expect_bytes_round_trip(const Tokenizer& t) {
  SCOPED_TRACE("round trip");
  for (const std::string& s : {std::string("plain text"), std::string("\xff\xfe broken \xc3 utf-8 \xe2\x82"),
                               std::string("tab\tnew\nline\r\n  spaces   "), std::string("\x00\x01\x7f", 3)})
    EXPECT_EQ(t.decode_text(t.encode(s, false, false)), s) << shown(s);
}

// ~64k characters of mixed text: a quadratic step would take minutes.
void expect_linear_time(const std::string& name) {
  SCOPED_TRACE("long text");
  std::string text;
  const nlohmann::json cases = cases_of(name);
  for (size_t i = 0; text.size() < 64000; ++i) text += cases[i % cases.size()]["text"].get<std::string>() + " ";
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int> ids = family(name).encode(text, false, false);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
  EXPECT_GT(ids.size(), 10000u);
  std::cout << name << ": " << text.size() << " bytes -> " << ids.size() << " ids in " << seconds << " s\n";
}

// generate and run print piece by piece (printable): byte-level pieces of one emoji or CJK
// character must join up into the text
void expect_printed_text(const Tokenizer& t) {
  SCOPED_TRACE("printed piece by piece");
  const std::string text = "Hi \xF0\x9F\x98\x80 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E caf\xC3\xA9";
  const std::vector<int> ids = t.encode_prompt(text);
  std::string printed = t.bos_id() >= 0 ? "" : t.decode_text({ids[0]});
  for (size_t i = 1; i < ids.size(); ++i) printed += t.printable(ids[i - 1], ids[i]);
  EXPECT_EQ(printed, text);
}

}  // namespace

TEST(HfTokenizerFamilies, Mistral) {
  expect_reference_ids("mistral");
  const Tokenizer& t = family("mistral");
  EXPECT_EQ(t.bos_id(), 1);
  EXPECT_EQ(t.eos_id(), 2);
  expect_linear_time("mistral");
  expect_printed_text(t);
}

TEST(HfTokenizerFamilies, Llama3) {
  expect_reference_ids("llama3");
  const Tokenizer& t = family("llama3");
  EXPECT_EQ(t.bos_id(), 128000);  // <|begin_of_text|>
  EXPECT_EQ(t.eos_id(), 128001);  // <|end_of_text|>
  EXPECT_TRUE(t.ends_text(128001));
  EXPECT_FALSE(t.ends_text(2));
  EXPECT_EQ(t.encode("Hi", true, true), (std::vector<int>{128000, 13347, 128001}));
  EXPECT_EQ(t.encode_prompt(""), (std::vector<int>{128000}));
  expect_bytes_round_trip(t);
  expect_linear_time("llama3");
  expect_printed_text(t);
}

TEST(HfTokenizerFamilies, Qwen3) {
  expect_reference_ids("qwen3");
  const Tokenizer& t = family("qwen3");
  EXPECT_EQ(t.bos_id(), -1);      // bos_token: null, add_bos_token: false
  EXPECT_EQ(t.eos_id(), 151645);  // <|im_end|>
  EXPECT_EQ(t.pad_id(), 151643);  // <|endoftext|>
  EXPECT_EQ(t.encode("Hi", true, false), t.encode("Hi", false, false));
  // no BOS: an empty prompt gives no first token to feed, and is refused
  try {
    (void)t.encode_prompt("");
    ADD_FAILURE() << "an empty prompt with no BOS was accepted";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("gives no token"), std::string::npos) << e.what();
  }
  expect_bytes_round_trip(t);
  expect_linear_time("qwen3");
  expect_printed_text(t);
}
