// The safetensors format (Hugging Face): an 8-byte little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32"|"F16"|"BF16", "shape": [...], "data_offsets": [begin, end]}, ...,
// "__metadata__": {...}}, then the raw little-endian tensor data, offsets relative to its start.
// The reader memory-maps the file and checks the header against the file before any tensor is
// read: the length field against the file length, each dtype, each shape's element count
// (computed without overflow) times the dtype size against its offsets, offsets in bounds and not
// overlapping. Errors are one kvcim::Error line naming the file, the tensor and the field.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvcim::cmodel {

enum class DType { f32, f16, bf16 };
const char* safetensors_name(DType dtype);  // "F32", "F16", "BF16"
int dtype_bytes(DType dtype);
// Parses "f32"/"F32", "f16"/"F16", "bf16"/"BF16"; throws kvcim::Error naming `where`.
DType parse_dtype(const std::string& where, const std::string& text);

struct TensorInfo {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data section
  int64_t elements() const;
};

// Parses and checks a header (the JSON text) for a data section of `data_bytes` bytes. `where`
// (the file) starts every error message. Tensors are returned sorted by name.
std::vector<TensorInfo> parse_safetensors_header(const std::string& where, std::string_view json,
                                                 uint64_t data_bytes);

// A safetensors file, memory-mapped read-only for as long as the object lives.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&& other) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) = delete;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // nullptr when the file has no tensor of that name.
  const TensorInfo* find(const std::string& name) const;
  // The tensor converted to float32 (count = elements()); non-finite values are errors.
  void read(const TensorInfo& tensor, float* out) const;
  // The tensor's raw bytes.
  std::string_view bytes(const TensorInfo& tensor) const;

 private:
  std::string path_;
  const unsigned char* map_ = nullptr;
  size_t map_bytes_ = 0;
  uint64_t data_start_ = 0;
  std::vector<TensorInfo> tensors_;
};

// One tensor to write: float32 values, stored as `dtype` (rounded to nearest even).
struct TensorOut {
  std::string name;
  std::vector<int64_t> shape;
  const float* data = nullptr;
};
// The bytes of a safetensors file holding `tensors` in that order (header padded with spaces to
// a multiple of 8 bytes, as the reference writer does), with optional string metadata.
std::string safetensors_bytes(const std::vector<TensorOut>& tensors, DType dtype,
                              const std::vector<std::pair<std::string, std::string>>& metadata = {});

// Conversions used by the reader and writer (IEEE binary16 and bfloat16, round to nearest even).
float half_to_float(uint16_t h);
float bf16_to_float(uint16_t b);
uint16_t float_to_half(float f);
uint16_t float_to_bf16(float f);

}  // namespace kvcim::cmodel
