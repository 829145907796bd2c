// Fuzz target: the hardware-spec parser (mapper), from YAML/JSON text as a file gives it and, when
// the input is a JSON document, from that tree in memory as a Python dict gives it. Technology paths resolve against the shipped configs/hw folder, so seeds that name
// ../tech/*.yaml reach the whole parser. A refusal must be a one-line kvcim::Error naming the
// source; an accepted spec must pass its own validate(), cost its events at its comparison node and
// give its chips' areas and conditions, and its KV tile (digital or analog) must be buildable.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/hardware.hpp"

using namespace kvcim::mapper;

namespace {

void exercise(const HardwareSpec& spec) {
  spec.validate();
    (void)spec.costs();
    (void)spec.kv_costs();
    (void)spec.baseline_costs();
    (void)kvcim::cmodel::cim::make_tile(spec.tile(8));  // the KV tile it names can be built
    (void)cim_area(spec).total_mm2();
    (void)baseline_area(spec).total_mm2();
    (void)to_json(energy_conditions(spec)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)hardware_report_json(spec).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string hw_dir = shipped_config_dir() + "/hw";
  const std::string text(reinterpret_cast<const char*>(data), size);
  kvcim::fuzz::expect_clean("fuzzed.yaml", [&] { exercise(hardware_spec_from_text(text, hw_dir, "fuzzed.yaml")); });
  const nlohmann::json tree = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!tree.is_discarded())
    kvcim::fuzz::expect_clean("fuzzed.json", [&] { exercise(hardware_spec_from_json(tree, hw_dir, "fuzzed.json")); });
  return 0;
}
