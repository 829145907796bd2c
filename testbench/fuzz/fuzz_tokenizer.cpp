// Fuzz target: the tokenizer reader on a fuzzed vocabulary file, then encode/decode of a fuzzed
// text with that vocabulary. Input layout: [2 bytes little-endian text length][text][file].
// Encoding any bytes must give ids inside the vocabulary (byte fallback is defined for every
// byte), and decoding them must not fail.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/cmodel/tokenizer.hpp"

using namespace kvcim::cmodel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  size_t text_len = data[0] | (size_t(data[1]) << 8);
  // The greedy merge loop is quadratic in the text length, as in run.c; keep inputs short so
  // that the fuzzer spends its time on the reader.
  text_len = std::min<size_t>(text_len % 512, size - 2);
  const std::string text(reinterpret_cast<const char*>(data + 2), text_len);
  const size_t file_at = 2 + text_len;
  const std::string path = kvcim::fuzz::write_input("tokenizer.bin", data + file_at, size - file_at);
  kvcim::fuzz::expect_clean(path, [&] {
    // the vocabulary size either as the file says (-1: to the end) or as a model would demand
    const int demanded = text_len % 3 == 0 ? 259 + int(text_len % 7) : -1;
    Tokenizer tok = Tokenizer::load(path, demanded);
    if (demanded >= 0 && tok.vocab_size() != demanded)
      kvcim::fuzz::broken("vocabulary size differs from the one demanded", path);
    const std::vector<int> ids = tok.encode(text, true, true);
    for (int id : ids)
      if (id < 0 || id >= tok.vocab_size()) kvcim::fuzz::broken("id outside the vocabulary", std::to_string(id));
    (void)tok.decode_all(ids);
  });
  return 0;
}
