// splitmix64 (Steele, Lea & Flood, OOPSLA 2014, with Vigna's constants): a well-mixed 64-bit
// stream from a counter state, the same on every platform, and the unit-interval draws and
// normals built on it. Seeded streams of the C models and the statistics use it so that a seed
// gives the same draws everywhere.
#pragma once
#include <cmath>
#include <cstdint>

namespace kvcim {

// The next 64 bits of the stream whose state is `state` (advanced by one step).
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The top 53 bits of a draw as a double in [0, 1).
inline double unit_interval(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// Box-Muller on the next two draws of `state`: a standard normal, and the other normal of the
// pair in *second when asked. The first draw is taken half a step up, in (0, 1), so its
// logarithm is finite.
inline double box_muller(uint64_t& state, double* second = nullptr) {
  const double u1 = (static_cast<double>(splitmix64(state) >> 11) + 0.5) * 0x1.0p-53;
  const double u2 = unit_interval(splitmix64(state));
  const double r = std::sqrt(-2.0 * std::log(u1)), a = 6.283185307179586 * u2;
  if (second) *second = r * std::sin(a);
  return r * std::cos(a);
}

}  // namespace kvcim
