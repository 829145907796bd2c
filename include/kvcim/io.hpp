// Output files are written atomically: to a temporary file beside the target, then renamed, so a
// run killed at any moment never leaves a truncated file where a good one is expected.
#pragma once
#include <string>
#include <vector>

namespace kvcim {

// Writes `content` to `path` atomically. Throws kvcim::Error naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& content);

// A float32 array in NumPy's .npy format (version 1.0, little-endian, C order).
std::string npy_bytes(const float* data, const std::vector<long>& shape);

}  // namespace kvcim
