// Reading float32 .npy files (version 1.x/2.x, little-endian '<f4', C order), validated.
#pragma once
#include <string>
#include <vector>

namespace kvcim {

struct NpyArray {
  std::vector<long> shape;
  std::vector<float> data;
};

// Throws kvcim::Error naming the file and what is wrong with it.
NpyArray read_npy(const std::string& path);

}  // namespace kvcim
