// Fuzz target: a Hugging Face config.json. Accepted configs are valid Config values and survive
// being written and read again unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/cmodel/hf_checkpoint.hpp"

using namespace kvcim::cmodel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string where = "fuzz/config.json";
  const std::string text(reinterpret_cast<const char*>(data), size);
  kvcim::fuzz::expect_clean(where, [&] {
    const Config c = parse_hf_config(where, text);
    c.validate("accepted");
    const Config d = parse_hf_config(where, hf_config_json(c, DType::bf16));
    if (d.dim != c.dim || d.n_kv_heads != c.n_kv_heads || d.rope_theta != c.rope_theta ||
        d.rms_norm_eps != c.rms_norm_eps || d.shared_classifier != c.shared_classifier)
      kvcim::fuzz::broken("config.json written and read back differs", text.substr(0, 200));
  });
  return 0;
}
