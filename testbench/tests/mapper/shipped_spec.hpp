// A shipped hardware spec (configs/hw/<name>.yaml) by name, for the mapper's tests.
#pragma once
#include <string>

#include "kvcim/mapper/hardware.hpp"

namespace kvcim::test {
inline mapper::HardwareSpec shipped(const std::string& name) {
  return mapper::load_hardware_spec(mapper::shipped_config_dir() + "/hw/" + name + ".yaml");
}
}  // namespace kvcim::test
