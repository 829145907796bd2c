#include <gtest/gtest.h>

#include <fstream>

#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/error.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;

TEST(Tokenizer, ByteFallbackForUnknownCodePoints) {
  Tokenizer tok = Tokenizer::load(test::tokenizer_path());
  // U+00E9 (e acute) is a piece of its own; U+00E8 (e grave) is not in the 512-piece
  // vocabulary, so its two UTF-8 bytes fall back to <0xNN> pieces.
  EXPECT_EQ(tok.encode("\xC3\xA9", false, false).size(), 2u);  // dummy space, then the piece
  std::vector<int> ids = tok.encode("\xC3\xA8", false, false);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[1], 0xC3 + 3);
  EXPECT_EQ(ids[2], 0xA8 + 3);
  // decoding <0xNN> pieces gives the raw bytes back
  EXPECT_EQ(tok.decode(5, 0xC3 + 3), "\xC3");
}

TEST(Tokenizer, BosAndEosFlagsAndEmptyText) {
  Tokenizer tok = Tokenizer::load(test::tokenizer_path());
  EXPECT_EQ(tok.encode("", true, true), (std::vector<int>{kBos, kEos}));
  EXPECT_EQ(tok.encode("", false, false), std::vector<int>{});
}

TEST(Tokenizer, DecodeStripsSpaceAfterBosOnly) {
  Tokenizer tok = Tokenizer::load(test::tokenizer_path());
  const int once = tok.encode("Once", false, false).back();
  ASSERT_EQ(tok.piece(once)[0], ' ');
  EXPECT_EQ(tok.decode(kBos, once)[0], 'O');
  EXPECT_EQ(tok.decode(5, once)[0], ' ');
}

TEST(Tokenizer, RoundTripsText) {
  Tokenizer tok = Tokenizer::load(test::tokenizer_path());
  const std::string text = "Tom had a big dog. \xE2\x98\x83 ok";  // includes a snowman (byte fallback)
  const std::vector<int> ids = tok.encode(text, true, false);
  std::string raw;
  for (size_t i = 1; i < ids.size(); ++i) raw += tok.decode(ids[i - 1], ids[i]);
  EXPECT_EQ(raw, text);
  // what run.c prints drops the lone non-printable bytes of the byte fallback
  EXPECT_EQ(tok.decode_all(ids), "Tom had a big dog.  ok");
}

TEST(Tokenizer, RejectsVocabularySizeMismatchAndTruncation) {
  try {
    Tokenizer::load(test::tokenizer_path(), 100);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vocab"), std::string::npos) << e.what();
  }
  const std::string path = ::testing::TempDir() + "/tok_truncated.bin";
  {
    std::ifstream in(test::tokenizer_path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(path, std::ios::binary).write(bytes.data(), 1000);
  }
  EXPECT_THROW(Tokenizer::load(path, 512), Error);
}

TEST(Tokenizer, RejectsAbsurdPieceLength) {
  const std::string path = ::testing::TempDir() + "/tok_absurd.bin";
  {
    std::ofstream out(path, std::ios::binary);
    int32_t max_len = 8;
    out.write(reinterpret_cast<const char*>(&max_len), 4);
    float score = 0;
    int32_t len = 1 << 30;
    out.write(reinterpret_cast<const char*>(&score), 4);
    out.write(reinterpret_cast<const char*>(&len), 4);
  }
  try {
    Tokenizer::load(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("entry 0 length"), std::string::npos) << e.what();
  }
}
