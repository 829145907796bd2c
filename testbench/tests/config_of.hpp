// A model configuration by its dimensions, for tests that need a small model of a given shape: the
// mapper's own builder of the shape presets.
#pragma once
#include "kvcim/mapper/shape.hpp"

namespace kvcim::test {

using mapper::config_of;

}  // namespace kvcim::test
