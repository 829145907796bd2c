// Tokenizer files and texts outside the happy path. Text that is not valid UTF-8 is encoded, not
// refused: byte fallback (<0xNN> = id byte + 3) is defined for every byte, so each byte of a
// broken sequence becomes its own byte piece and decoding gives the exact bytes back.
// (A vocabulary larger than the model's, a truncated file and a 2^30 piece length are proven in
// testbench/tests/model/test_tokenizer.cpp.)
#include <cmath>
#include <limits>

#include "kvcim/cmodel/tokenizer.hpp"
#include "reliability_util.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::test;

namespace {

const Tokenizer& tok512() {
  static const Tokenizer t = Tokenizer::load(tokenizer_path());
  return t;
}

std::string decode_raw(const Tokenizer& t, const std::vector<int>& ids) {
  std::string s;
  for (size_t i = 1; i < ids.size(); ++i) s += t.decode(ids[i - 1], ids[i]);
  return s;
}

// A tokenizer file: max_token_length, then (score, length, bytes) entries.
struct TokFile {
  std::string bytes;
  explicit TokFile(int32_t max_len) { put(max_len); }
  template <class T>
  TokFile& put(T v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  TokFile& entry(float score, const std::string& piece) {
    put(score).put(static_cast<int32_t>(piece.size()));
    bytes += piece;
    return *this;
  }
  TokFile& standard() {  // <unk>, <s>, </s> and the 256 byte pieces
    entry(0, "<unk>").entry(0, "<s>").entry(0, "</s>");
    for (int b = 0; b < 256; ++b) {
      char piece[8];
      std::snprintf(piece, sizeof piece, "<0x%02X>", b);
      entry(0, piece);
    }
    return *this;
  }
};

}  // namespace

TEST(TokenizerInputs, InvalidUtf8FallsBackToOneBytePieceEach) {
  struct Case {
    const char* what;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"lone continuation byte", "\x80"},
      {"0xFF never occurs in UTF-8", "\xFF"},
      {"overlong encoding of '/'", "\xC0\xAF"},
      {"UTF-16 surrogate", "\xED\xA0\x80"},
      {"five-byte form", "\xF8\x88\x80\x80\x80"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::vector<int> ids = tok512().encode(c.text, true, false);
    // BOS, the dummy space, then one byte piece per byte: none of these merges in tok512
    ASSERT_EQ(ids.size(), c.text.size() + 2);
    EXPECT_EQ(ids[0], kBos);
    EXPECT_EQ(tok512().piece(ids[1]), " ");
    for (size_t i = 0; i < c.text.size(); ++i)
      EXPECT_EQ(ids[i + 2], static_cast<unsigned char>(c.text[i]) + 3) << "byte " << i;
    EXPECT_EQ(decode_raw(tok512(), ids), c.text);
  }
}

TEST(TokenizerInputs, BrokenSequencesInsideTextKeepTheTextAroundThem) {
  // a code point cut short, before ASCII and at the very end, and a stray continuation byte
  const std::string text = "The cat \xE2\x98 sat\x80 on the mat \xF0\x9F\x98";
  const std::vector<int> ids = tok512().encode(text, true, true);
  for (int id : ids) ASSERT_TRUE(id >= 0 && id < tok512().vocab_size()) << id;
  EXPECT_EQ(ids.back(), kEos);
  std::vector<int> no_eos(ids.begin(), ids.end() - 1);
  EXPECT_EQ(decode_raw(tok512(), no_eos), text);
  // the valid words are still merged into word pieces: fewer ids than bytes
  EXPECT_LT(ids.size(), text.size());
}

TEST(TokenizerInputs, NulAndControlBytesEncodeAndPrintNothingUnsafe) {
  const std::string text("a\0b\x1b[31m", 8);
  const std::vector<int> ids = tok512().encode(text, true, false);
  EXPECT_EQ(decode_raw(tok512(), ids), text);
  // run.c's safe printing drops the lone non-printable bytes (NUL, ESC)
  const std::string shown = tok512().decode_all(ids);
  EXPECT_EQ(shown.find('\0'), std::string::npos);
  EXPECT_EQ(shown.find('\x1b'), std::string::npos);
}

TEST(TokenizerInputs, ModelVocabularyLargerThanTheTokenizers) {
  // tok512 has 512 entries; a model with 600 needs 88 more than the file holds
  const std::string e = error_of([] { Tokenizer::load(tokenizer_path(), 600); });
  EXPECT_NAMES(e, tokenizer_path());
  EXPECT_NAMES(e, "entry 512");
  EXPECT_NAMES(e, "600 entries");
}

TEST(TokenizerInputs, HeaderAndEntryFieldsOutOfRange) {
  const std::vector<BadFile> cases = {
      {"empty file", "", "max_token_length"},
      {"zero max_token_length", TokFile(0).standard().bytes, "max_token_length = 0"},
      {"negative max_token_length", TokFile(-5).standard().bytes, "max_token_length = -5"},
      {"absurd max_token_length", TokFile(1 << 30).standard().bytes, "max_token_length"},
      {"negative piece length", TokFile(8).put(0.0f).put(int32_t(-1)).bytes, "entry 0 length = -1"},
      {"piece longer than max_token_length", TokFile(4).standard().bytes, "entry 0 length = 5"},
      {"NaN score", TokFile(8).entry(std::numeric_limits<float>::quiet_NaN(), "<unk>").bytes, "entry 0 score"},
      {"infinite score", TokFile(8).standard().entry(INFINITY, "x").bytes, "entry 259 score"},
      {"too few entries for byte fallback", TokFile(8).entry(0, "<unk>").entry(0, "<s>").bytes, "at least 259"},
      {"piece cut by end of file", TokFile(8).standard().put(1.0f).put(int32_t(6)).bytes + "ab", "entry 259 bytes"},
  };
  expect_each_refused(cases, "tok.bin", [](const std::string& path) { (void)Tokenizer::load(path); });
}

TEST(TokenizerInputs, DirectoryIsRefused) {
  const std::string dir = ::testing::TempDir();
  EXPECT_NAMES(error_of([&] { Tokenizer::load(dir); }), dir);
}

TEST(TokenizerInputs, FuzzedVocabularyEncodesAnyBytesInsideIt) {
  // A vocabulary with multi-byte merge pieces, including one that looks like a byte piece.
  TokFile f(8);
  f.standard().entry(1, " ").entry(2, "ab").entry(3, " ab").entry(0.5f, "\xC3\xA9").entry(9, "<0x4");
  const std::string path = write_bytes("fuzzed_vocab.bin", f.bytes);
  const Tokenizer t = Tokenizer::load(path);
  ASSERT_EQ(t.vocab_size(), 264);
  const std::string text = "ab \xC3\xA9\xC3 ab\xFF";
  const std::vector<int> ids = t.encode(text, true, false);
  for (int id : ids) ASSERT_TRUE(id >= 0 && id < t.vocab_size()) << id;
  EXPECT_EQ(decode_raw(t, ids), text);
}
