// Fuzz target: the technology-table YAML parser (strict Section reader, units, provenance,
// base: inheritance). A rejected table must be answered by a kvcim::Error naming the file; an
// accepted one must give integer costs without overflow.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/cmodel/energy/tech.hpp"

using namespace kvcim::cmodel::energy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kvcim::fuzz::write_input("table.yaml", data, size);
  // An error in a base: table names that table's file instead.
  const bool has_base = std::string(reinterpret_cast<const char*>(data), size).find("base") != std::string::npos;
  kvcim::fuzz::expect_clean(has_base ? "" : path, [&] {
    const TechTable t = load_tech_table(path);
    for (int bits : {0, 1, 4, 8, 16}) {
      try {
        (void)t.costs(bits);
      } catch (const kvcim::Error&) {
        // a resolution missing from energy_pj_by_adc_bits is a clean refusal
      }
    }
  });
  return 0;
}
