// RtlTileOptions with one setting changed, for the co-simulation suites (designated initializers
// that omit fields warn under -Wextra).
#pragma once
#include <cstdint>
#include <string>

#include "kvcim/rtl/rtl_tile.hpp"

inline kvcim::rtl::RtlTileOptions backpressured(double p, uint64_t seed) {
  kvcim::rtl::RtlTileOptions o;
  o.backpressure = p;
  o.seed = seed;
  return o;
}

inline kvcim::rtl::RtlTileOptions with_trace(const std::string& path) {
  kvcim::rtl::RtlTileOptions o;
  o.trace_path = path;
  return o;
}
