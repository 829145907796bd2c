// Fuzz target: the macro-spec reader of `kvcim macro` (cmodel/macro_model/macro_desc.cpp), from
// YAML text, then the component model and the report at the published point and at a swept
// supply. A refusal must be a one-line kvcim::Error naming the source; an accepted spec must
// price, print and serialise.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/macro_pricing.hpp"

using namespace kvcim::mapper;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kvcim::cmodel::macro_model::Constants k =
      kvcim::cmodel::macro_model::load_constants(shipped_config_dir() + "/macro_model.yaml");
  const std::string text(reinterpret_cast<const char*>(data), size);
  kvcim::fuzz::expect_clean("fuzzed.yaml", [&] {
    const MacroFile m = macro_file_from_text(text, "fuzzed.yaml");
    std::vector<MacroPrice> points = {price_macro(m, k)};
    points.push_back(price_macro(m, k, {m.desc.vdd_v * 1.05, 0, 1}));
    (void)macro_summary(m, points, k);
    // as kvcim macro --json writes it: text that is not UTF-8 becomes U+FFFD, never an exception
    (void)macro_to_json(m, points, k).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
  return 0;
}
