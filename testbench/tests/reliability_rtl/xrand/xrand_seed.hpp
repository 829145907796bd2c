// The seed with which the next RtlTile of kvcim_rtl_xrand fills its uninitialised state
// (Verilator's +verilator+seed+N, set per test instead of per process).
#pragma once

namespace kvcim::reliability {
int xrand_seed();
void set_xrand_seed(int seed);  // 1..2^31-1 (0 would mean "from the clock" to Verilator)
}  // namespace kvcim::reliability
