// Fuzz target: the .npy reader (golden data and reports read back). Refusals must be
// kvcim::Error naming the file; the data read must match the shape.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.hpp"
#include "kvcim/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kvcim::fuzz::write_input("array.npy", data, size);
  kvcim::fuzz::expect_clean(path, [&] {
    const kvcim::NpyArray a = kvcim::read_npy(path);
    size_t count = 1;
    for (long d : a.shape) count *= static_cast<size_t>(d);
    if (count != a.data.size()) kvcim::fuzz::broken("data size differs from the shape", path);
    if (a.data.size() * 4 > size) kvcim::fuzz::broken("more data than bytes in the file", path);
  });
  return 0;
}
