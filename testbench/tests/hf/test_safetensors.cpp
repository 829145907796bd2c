// The safetensors reader checks the header against the file before trusting it; the writer and
// the float16/bfloat16 conversions round-trip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "error_of.hpp"
#include "kvcim/cmodel/safetensors.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;

namespace {

// 8-byte length + header + `data_bytes` zero bytes (header_len: the length field, if not the real one)
std::string file_with(const std::string& name, const std::string& header, size_t data_bytes,
                      int64_t header_len = -1) {
  const std::string path = ::testing::TempDir() + "/kvcim_st_" + name + ".safetensors";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const uint64_t n = header_len < 0 ? header.size() : uint64_t(header_len);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << header << std::string(data_bytes, '\0');
  return path;
}

std::string error_naming(const std::string& path) {
  const std::string msg = test::error_of([&] { SafetensorsFile f(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  return msg;
}

}  // namespace

TEST(Safetensors, ReadsWhatItWrites) {
  const std::vector<float> a = {1.0f, -2.5f, 3.25f, 0.0f, 1e-3f, 65504.0f};
  const std::vector<float> b = {0.5f, 0.25f};
  for (DType d : {DType::f32, DType::f16, DType::bf16}) {
    const std::string path = ::testing::TempDir() + "/kvcim_st_rt.safetensors";
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        << safetensors_bytes({{"a", {2, 3}, a.data()}, {"b", {2}, b.data()}}, d, {{"format", "pt"}});
    const SafetensorsFile f(path);
    ASSERT_EQ(f.tensors().size(), 2u);
    const TensorInfo* ta = f.find("a");
    ASSERT_NE(ta, nullptr);
    EXPECT_EQ(ta->shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(ta->dtype, d);
    std::vector<float> got(6);
    f.read(*ta, got.data());
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(got[i], a[i], std::abs(a[i]) * (d == DType::bf16 ? 4e-3 : 1e-3)) << i;
    EXPECT_EQ(f.find("c"), nullptr);
  }
}

TEST(Safetensors, HalfAndBfloat16RoundToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(bf16_to_float(0x3f81)), 0x3f81);
  // 1 + 2^-8 lies halfway between bf16 1.0 and 1.0078125: ties to even (1.0)
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  // every finite half survives float and back
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;
    ASSERT_EQ(float_to_half(half_to_float(uint16_t(h))), uint16_t(h)) << h;
  }
}

TEST(Safetensors, HeaderLongerThanTheFile) {
  const std::string path = file_with("long", "{}", 0, 1000);
  const std::string msg = error_naming(path);
  EXPECT_NE(msg.find("header length"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1000"), std::string::npos) << msg;
  EXPECT_NE(error_naming(file_with("short", "", 0, 0)).find("header"), std::string::npos);
  std::ofstream(::testing::TempDir() + "/kvcim_st_tiny.safetensors", std::ios::trunc) << "abc";
  EXPECT_NE(error_naming(::testing::TempDir() + "/kvcim_st_tiny.safetensors").find("header length"), std::string::npos);
}

TEST(Safetensors, BadTensorEntriesNameTheTensorAndField) {
  struct Case {
    std::string name, header;
    size_t data;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"dtype", R"({"w": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}})", 16, {"'w'", "dtype", "F64"}},
      {"dtype_i8", R"({"w": {"dtype": "I8", "shape": [2], "data_offsets": [0, 2]}})", 2, {"dtype", "I8"}},
      {"overlap",
       R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
       12, {"'b'", "data_offsets", "overlaps", "'a'"}},
      {"beyond", R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8, {"'w'", "data_offsets", "beyond"}},
      {"size", R"({"w": {"dtype": "BF16", "shape": [3, 2], "data_offsets": [0, 8]}})", 8, {"'w'", "data_offsets", "needs 12"}},
      {"reversed", R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}})", 8, {"'w'", "end before begin"}},
      {"overflow", R"({"w": {"dtype": "F32", "shape": [1099511627776, 1099511627776], "data_offsets": [0, 0]}})", 0, {"'w'", "shape"}},
      {"negative", R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}})", 0, {"'w'", "shape"}},
      {"noshape", R"({"w": {"dtype": "F32", "data_offsets": [0, 0]}})", 0, {"'w'", "shape", "missing"}},
      {"notjson", R"({"w": )", 0, {"header", "not JSON"}},
      {"array", R"([1, 2])", 0, {"header", "object"}},
      {"metadata", R"({"__metadata__": {"format": 3}})", 0, {"__metadata__.format"}},
  };
  for (const Case& c : cases) {
    const std::string msg = error_naming(file_with(c.name, c.header, c.data));
    for (const auto& p : c.parts) EXPECT_NE(msg.find(p), std::string::npos) << c.name << ": '" << p << "' not in " << msg;
  }
}

TEST(Safetensors, NonFiniteWeightsAreRefusedWhenRead) {
  const float inf = INFINITY;
  const std::vector<float> a = {1.0f, inf};
  const std::string path = ::testing::TempDir() + "/kvcim_st_inf.safetensors";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << safetensors_bytes({{"w", {2}, a.data()}}, DType::f32);
  const SafetensorsFile f(path);
  std::vector<float> out(2);
  const std::string msg = test::error_of([&] { f.read(f.tensors()[0], out.data()); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("element 1"), std::string::npos) << msg;
}
