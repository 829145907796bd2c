#include "kvcim/npy.hpp"

#include <filesystem>
#include <fstream>

#include "kvcim/error.hpp"
#include "kvcim/text.hpp"

namespace kvcim {

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "file", "unreadable", "cannot open the .npy file");
  char magic[8];
  if (!in.read(magic, 8) || std::string(magic, 6) != "\x93NUMPY")
    fail(path, "magic", "missing", "not a .npy file");
  if (magic[6] < 1 || magic[6] > 3)
    fail(path, "version", std::to_string(int(magic[6])), "expected a .npy format version 1, 2 or 3");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t len16 = 0;
    in.read(reinterpret_cast<char*>(&len16), 2);
    header_len = len16;
  } else {
    in.read(reinterpret_cast<char*>(&header_len), 4);
  }
  if (!in || header_len > (1u << 20)) fail(path, "header length", std::to_string(header_len), "too large");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) fail(path, "header", "truncated", "the file ended early");
  if (header.find("'<f4'") == std::string::npos)
    fail(path, "descr", header.substr(0, 60), "expected little-endian float32 '<f4'");
  if (header.find("'fortran_order': False") == std::string::npos)
    fail(path, "fortran_order", "True", "expected C order");
  const auto open = header.find("'shape': (");
  const auto close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos) fail(path, "shape", "missing", "a shape tuple");
  NpyArray a;
  long count = 1;
  std::string dims = header.substr(open + 10, close - open - 10);
  for (const std::string& item : split(dims, ',')) {
    const size_t last = item.find_last_not_of(' ');
    if (last == std::string::npos) continue;  // "(3,)": the blank after the last comma
    const int64_t v = parse_integer(item.substr(0, last + 1)).value_or(-1);
    if (v < 0 || v > (1L << 31)) fail(path, "shape", item, "a dimension in 0..2^31");
    a.shape.push_back(v);
    count *= v;
    if (count > (1L << 31)) fail(path, "shape", dims, "at most 2^31 elements");
  }
  // The shape must be backed by bytes in the file before anything is allocated for it.
  std::error_code ec;
  const auto file_bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  const int64_t left = ec ? -1 : file_bytes - static_cast<int64_t>(in.tellg());
  if (left < count * 4)
    fail(path, "data", std::to_string(left < 0 ? 0 : left) + " bytes",
         "truncated: the shape needs " + std::to_string(count) + " float32 values (" +
             std::to_string(count * 4) + " bytes)");
  a.data.resize(count);
  if (!in.read(reinterpret_cast<char*>(a.data.data()), count * 4))
    fail(path, "data", "truncated", std::to_string(count) + " float32 values expected");
  return a;
}

}  // namespace kvcim
