// Fuzz target: the macro model's constants reader (cmodel/macro_model/macro_components.cpp,
// configs/macro_model.yaml), from YAML text. A refusal must be a one-line kvcim::Error naming the
// source; an accepted file must hold every constant inside its plausible range with its source,
// and its tree must read back to itself (constants_to_json, the reader's inverse).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/cmodel/macro_model/macro_components.hpp"

namespace mm = kvcim::cmodel::macro_model;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mm::Constants k;
  bool read = false;
  kvcim::fuzz::expect_clean("fuzzed.yaml", [&] {
    k = mm::constants_from_text(text, "fuzzed.yaml");
    read = true;
  });
  if (!read) return 0;
  kvcim::for_each_spec_field<mm::MacroConstants>([&](const auto& row) {
    const double v = k.*row.member;
    if (!(v >= row.lo && v <= row.hi) || (k.*row.provenance).empty()) std::abort();
  });
  const nlohmann::json tree = mm::constants_to_json(k);
  try {
    (void)tree.dump();
  } catch (const nlohmann::json::type_error&) {
    return 0;  // a source text that is not UTF-8 has no JSON form (kvcim writes U+FFFD for it)
  }
  if (mm::constants_to_json(mm::constants_from_json(tree)) != tree) std::abort();
  return 0;
}
