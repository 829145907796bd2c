#include "xrand_seed.hpp"

namespace kvcim::reliability {
namespace {
int g_seed = 1;
}
int xrand_seed() { return g_seed; }
void set_xrand_seed(int seed) { g_seed = seed; }
}  // namespace kvcim::reliability
