// Fuzz target: the safetensors reader (header length, JSON header, dtypes, shapes, offsets) on a
// fuzzed file; every tensor of an accepted file is then read. The one answer to bad input is a
// kvcim::Error naming the file; an accepted header's tensors lie inside the file.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_util.hpp"
#include "kvcim/cmodel/safetensors.hpp"

using namespace kvcim::cmodel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = kvcim::fuzz::write_input("model.safetensors", data, size);
  kvcim::fuzz::expect_clean(path, [&] {
    const SafetensorsFile f(path);
    std::vector<float> out;
    for (const TensorInfo& t : f.tensors()) {
      if (t.end > size || t.end - t.begin != uint64_t(t.elements()) * dtype_bytes(t.dtype))
        kvcim::fuzz::broken("accepted tensor outside the file or of the wrong size", t.name);
      if (t.elements() > (1 << 20)) continue;
      out.resize(t.elements());
      f.read(t, out.data());
    }
  });
  return 0;
}
