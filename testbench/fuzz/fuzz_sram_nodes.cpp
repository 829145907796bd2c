// Fuzz target: the SRAM node table reader (cmodel/energy/sram_nodes.cpp), from YAML text. A
// refusal must be a one-line kvcim::Error naming the source; an accepted table must give a finite,
// positive macro area per bit and access energy at every node.
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
  std::vector<SramNode> t;
  kvcim::fuzz::expect_clean("fuzzed.yaml", [&] { t = sram_nodes_from_text(text, "fuzzed.yaml"); });
  if (t.empty()) return 0;
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
