// Fuzz target: the llama2.c checkpoint reader, and (when a fuzzed file is accepted) a few decoder
// steps and the sampler on whatever weights it holds. A reader may refuse a file only with a
// kvcim::Error naming the file; an accepted file must give in-vocabulary tokens, never a crash.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "fuzz_util.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/sampler.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/cmodel/transformer.hpp"

using namespace kvcim::cmodel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kvcim::fuzz::write_input("checkpoint.bin", data, size);
  std::unique_ptr<Model> model;
  kvcim::fuzz::expect_clean(path, [&] {
    const Config header = read_checkpoint_config(path);
    model = std::make_unique<Model>(read_checkpoint(path));
    if (model->config().dim != header.dim || model->config().seq_len != header.seq_len)
      kvcim::fuzz::broken("header read twice differs", path);
  });
  if (!model) return 0;
  // Accepted weights are finite, but may still be large enough to overflow the activations: the
  // decoder and sampler must then refuse (a one-line kvcim::Error), not sample garbage.
  kvcim::fuzz::expect_clean("", [&] {
    const Config& c = model->config();
    // Both sampling paths: greedy, and top-p (the one that sorts probabilities).
    Sampler greedy(0.0f, 0.9f, 1), topp(1.0f, 0.9f, 2);
    int token = kBos < c.vocab_size ? kBos : 0;
    for (int pos = 0; pos < c.seq_len && pos < 3; ++pos) {
      const Vector& logits = model->forward(token, pos);
      const int a = greedy.sample(logits);
      const int b = topp.sample(logits);
      if (a < 0 || a >= c.vocab_size || b < 0 || b >= c.vocab_size)
        kvcim::fuzz::broken("sampled token outside the vocabulary", std::to_string(a) + "," + std::to_string(b));
      token = b;
    }
  });
  return 0;
}
