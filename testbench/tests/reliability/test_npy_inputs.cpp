// The .npy reader (golden data, arrays read back): every malformed header is a kvcim::Error on
// one line naming the file, and a shape is believed only when the file holds its bytes.
#include "kvcim/io.hpp"
#include "kvcim/npy.hpp"
#include "reliability_util.hpp"

using namespace kvcim;
using namespace kvcim::test;

namespace {

// A version-1 .npy with this header dictionary text and `data_bytes` bytes of data.
std::string npy_file(const std::string& dict, size_t data_bytes, char version = 1) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string out = std::string("\x93NUMPY", 6) + version + '\0';
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  return out + header + std::string(data_bytes, '\0');
}

std::string dict(const std::string& shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
}

}  // namespace

TEST(NpyInputs, WrittenArraysReadBack) {
  const std::vector<float> v = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  const std::string path = temp_path("ok.npy");
  write_file_atomic(path, npy_bytes(v.data(), {2, 3}));
  const NpyArray a = read_npy(path);
  EXPECT_EQ(a.shape, (std::vector<long>{2, 3}));
  EXPECT_EQ(a.data, v);
}

TEST(NpyInputs, MalformedHeadersAreErrorsNamingTheField) {
  const std::vector<BadFile> cases = {
      {"not a number in the shape", npy_file(dict("2, x"), 8), "shape = "},
      {"number with trailing junk", npy_file(dict("3a,"), 12), "shape = "},
      {"negative dimension", npy_file(dict("-4,"), 16), "shape = "},
      {"dimension beyond 2^31", npy_file(dict("4294967296,"), 16), "shape = "},
      {"float64 data", npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16), "descr"},
      {"Fortran order", npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8), "fortran_order"},
      {"unknown format version", npy_file(dict("2,"), 8, 9), "version = 9"},
      {"no magic", "PK\x03\x04 not numpy at all", "magic"},
      {"data shorter than the shape", npy_file(dict("3, 4"), 40), "data"},
  };
  expect_each_refused(cases, "bad.npy", [](const std::string& path) { (void)read_npy(path); });
}

TEST(NpyInputs, HugeShapeInATinyFileIsRefusedBeforeAllocating) {
  // 2^31 float32 values would be an 8 GiB allocation; the file holds 4 bytes of data.
  const std::string path = write_bytes("huge.npy", npy_file(dict("2147483648,"), 4));
  const std::string e = error_of([&] { read_npy(path); });
  EXPECT_NAMES(e, "data");
  EXPECT_NAMES(e, "8589934592 bytes");  // what the shape needs, said in the message
}
