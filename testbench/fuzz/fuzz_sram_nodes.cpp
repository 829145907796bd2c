// Fuzz target: the SRAM node table reader (cmodel/energy/sram_nodes.cpp), from YAML text. A
// refusal must be a one-line kvcim::Error naming the source; an accepted table must give a finite,
// positive macro area per bit and access energy at every node, and its tree must read back to
// itself (sram_node_file_to_json, the reader's inverse).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "kvcim/cmodel/energy/sram_nodes.hpp"

using namespace kvcim::cmodel::energy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  SramNodeFile f;
  kvcim::fuzz::expect_clean("fuzzed.yaml", [&] { f = sram_node_file_from_text(text, "fuzzed.yaml"); });
  if (f.nodes.empty()) return 0;
  const nlohmann::json tree = sram_node_file_to_json(f);
  bool utf8 = true;  // a source text that is not UTF-8 has no JSON form (kvcim writes U+FFFD for it)
  try {
    (void)tree.dump();
  } catch (const nlohmann::json::type_error&) {
    utf8 = false;
  }
  if (utf8 && sram_node_file_to_json(sram_node_file_from_json(tree)) != tree) std::abort();
  const std::vector<SramNode> t = sram_nodes_of(f);
  for (double nm : {180.0, 45.0, 10.0, 5.0, 3.0, 1.0}) {
    const double a = sram_um2_per_bit(t, nm);
    if (!std::isfinite(a) || a <= 0) std::abort();
    for (bool write : {false, true}) {
      const double e = sram_access_pj_per_bit(t, {nm, 0.9}, write);
      if (!std::isfinite(e) || e <= 0) std::abort();
    }
  }
  return 0;
}
