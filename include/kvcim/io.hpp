// Output files are written atomically: to a temporary file beside the target, then renamed, so a
// run killed at any moment never leaves a truncated file where a good one is expected.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace kvcim {

// Writes `content` to `path` atomically. Throws kvcim::Error naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& content);

// Several files, all or none: every content goes to its temporary file first; only when all are
// written are they renamed into place. Throws kvcim::Error naming the first path that failed
// (and then no target has been touched).
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files);

// Checks, before a long job, that `path` could be written (its folder exists and is writable):
// creates and removes the temporary file write_file_atomic would use. Throws as it would.
void check_writable(const std::string& path);

// A float32 array in NumPy's .npy format (version 1.0, little-endian, C order).
std::string npy_bytes(const float* data, const std::vector<long>& shape);

}  // namespace kvcim
