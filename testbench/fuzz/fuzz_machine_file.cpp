// Fuzz target: the machine-file reader of --baseline (mapper/machine.cpp), from YAML text. A
// refusal must be a one-line kvcim::Error naming the source; an accepted machine must run a
// decode step (or refuse it, one line, when the model does not fit its HBM) and serialise it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.hpp"
#include "kvcim/mapper/machine.hpp"
#include "kvcim/mapper/shape.hpp"

using namespace kvcim::mapper;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Machine m;
  bool read = false;
  kvcim::fuzz::expect_clean("fuzzed.yaml", [&] {
    m = machine_from_text(text, "fuzzed.yaml");
    read = true;
  });
  if (!read) return 0;
  kvcim::fuzz::expect_clean("baseline", [&] {
    const MachineRegime r{8, 512, 16, 16};
    const MachineStep s = machine_step(m, shape_preset("stories110m").config, r);
    (void)machine_step_line(m, r, s);
    (void)machine_step_json(m, r, s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
  return 0;
}
