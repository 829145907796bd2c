// Fuzz target: a tokenizer.json, then encode/decode of a fuzzed text with it. Input layout:
// [2 bytes little-endian text length][text][tokenizer.json]. Accepted files encode any text to
// ids inside the vocabulary (or refuse with a kvcim::Error naming the file when a character has
// neither a piece, a byte piece nor <unk>), and decode them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/cmodel/tokenizer.hpp"

using namespace kvcim::cmodel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t text_len = std::min<size_t>((data[0] | (size_t(data[1]) << 8)) % 512, size - 2);
  const std::string text(reinterpret_cast<const char*>(data + 2), text_len);
  const std::string where = "fuzz/tokenizer.json";
  const std::string file(reinterpret_cast<const char*>(data + 2 + text_len), size - 2 - text_len);
  kvcim::fuzz::expect_clean(where, [&] {
    const Tokenizer tok = Tokenizer::parse_hf(where, file);
    const std::vector<int> ids = tok.encode(text, true, true);
    for (int id : ids)
      if (id < 0 || id >= tok.vocab_size()) kvcim::fuzz::broken("id outside the vocabulary", std::to_string(id));
    (void)tok.decode_text(ids);
    (void)tok.decode_all(ids);
  });
  return 0;
}
