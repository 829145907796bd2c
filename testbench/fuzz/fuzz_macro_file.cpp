// Fuzz target: the macro-spec reader of `kvcim macro` (a hardware spec plus a published: block,
// mapper/macro_pricing.cpp), from YAML text. Technology paths resolve against the shipped
// configs/macros folder, so seeds that name ../tech/*.yaml reach the pricing. A refusal must be a
// one-line kvcim::Error naming the source; an accepted spec must price, print and serialise.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/mapper/macro_pricing.hpp"

using namespace kvcim::mapper;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = shipped_config_dir() + "/macros";
  const std::string text(reinterpret_cast<const char*>(data), size);
  kvcim::fuzz::expect_clean("fuzzed.yaml", [&] {
    const MacroFile m = macro_file_from_text(text, dir, "fuzzed.yaml");
    const MacroPrice p = price_macro(m);
    (void)macro_summary(m, p);
    // as kvcim macro --json writes it: text that is not UTF-8 becomes U+FFFD, never an exception
    (void)macro_to_json(m, p).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
  return 0;
}
