// A shipped hardware spec (configs/hw/<name>.yaml) by name, for the mapper's tests, and the
// default spec with the conventional engine of the hand formulas (fp16, everything from HBM).
#pragma once
#include <string>

#include "kvcim/mapper/hardware.hpp"

namespace kvcim::test {
inline mapper::HardwareSpec shipped(const std::string& name) {
  return mapper::load_hardware_spec(mapper::shipped_config_dir() + "/hw/" + name + ".yaml");
}
inline mapper::HardwareSpec fp16_from_hbm() {
  mapper::HardwareSpec hw = mapper::load_hardware_spec(mapper::default_hardware_spec_path());
  hw.baseline.mac = cmodel::energy::MacType::fp16;
  hw.baseline.sram_bytes = 0;  // everything from HBM
  return hw;
}
}  // namespace kvcim::test
