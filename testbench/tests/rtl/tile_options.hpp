// RtlTileOptions with one setting changed, for the co-simulation suites (designated initializers
// that omit fields warn under -Wextra).
#pragma once
#include <cstdint>
#include <string>

#include "kvcim/testbench/rtl_tile.hpp"

inline kvcim::testbench::RtlTileOptions backpressured(double p, uint64_t seed) {
  kvcim::testbench::RtlTileOptions o;
  o.backpressure = p;
  o.seed = seed;
  return o;
}

inline kvcim::testbench::RtlTileOptions with_trace(const std::string& path) {
  kvcim::testbench::RtlTileOptions o;
  o.trace_path = path;
  return o;
}
