// Fuzz target: the encoder of the embedded tok512 vocabulary on arbitrary bytes, valid UTF-8 or
// not. Byte fallback is defined for every byte, so encoding never fails, and decoding the ids
// piece by piece gives the bytes back exactly (the dummy leading space is removed after BOS).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/tokenizer.hpp"

using namespace kvcim::cmodel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Tokenizer tok = Tokenizer::load(default_tokenizer_path());
  if (size > 1024) return 0;  // the merge loop is quadratic, as in run.c
  const std::string text(reinterpret_cast<const char*>(data), size);
  kvcim::fuzz::expect_clean("", [&] {
    const std::vector<int> ids = tok.encode(text, true, false);
    std::string raw;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] < 0 || ids[i] >= tok.vocab_size()) kvcim::fuzz::broken("id outside the vocabulary", text);
      if (i > 0) raw += tok.decode(ids[i - 1], ids[i]);
    }
    if (raw != text) kvcim::fuzz::broken("decode(encode(text)) != text", text);
  });
  return 0;
}
