#include "kvcim/cmodel/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "kvcim/enum_names.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel {

using json = nlohmann::json;

namespace {
// The reference implementation refuses headers above 100 MB; so does this reader.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;
// No tensor has more dimensions than this (the reference has no limit; real ones have 1 or 2).
constexpr size_t kMaxRank = 8;

std::string quoted(const std::string& s) { return "'" + s + "'"; }
}  // namespace

constexpr std::array kSafetensorsDtypeNames{"F32", "F16", "BF16"};
static_assert(kSafetensorsDtypeNames.size() == enum_count(DType::bf16));
const char* safetensors_name(DType dtype) { return enum_name(dtype, kSafetensorsDtypeNames); }

int dtype_bytes(DType dtype) { return dtype == DType::f32 ? 4 : 2; }

DType parse_dtype(const std::string& where, const std::string& text) {
  if (text == "F32" || text == "f32") return DType::f32;
  if (text == "F16" || text == "f16") return DType::f16;
  if (text == "BF16" || text == "bf16") return DType::bf16;
  fail(where, "dtype", quoted(text), "expected F32, F16 or BF16");
}

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // checked against overflow when parsed
  return n;
}

std::vector<TensorInfo> parse_safetensors_header(const std::string& where, std::string_view text,
                                                 uint64_t data_bytes) {
  json header;
  try {
    header = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    fail(where, "header", "not JSON", e.what());
  }
  if (!header.is_object()) fail(where, "header", header.type_name(), "expected a JSON object");
  std::vector<TensorInfo> out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) fail(where, "__metadata__", v.type_name(), "expected an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m)
        if (!m.value().is_string())
          fail(where, "__metadata__." + m.key(), m.value().type_name(), "expected a string");
      continue;
    }
    const std::string field = "tensor " + quoted(name);
    if (!v.is_object()) fail(where, field, v.type_name(), "expected an object with dtype, shape, data_offsets");
    for (const char* key : {"dtype", "shape", "data_offsets"})
      if (!v.contains(key)) fail(where, field + " " + key, "missing", "every tensor states dtype, shape and data_offsets");
    TensorInfo t;
    t.name = name;
    if (!v["dtype"].is_string()) fail(where, field + " dtype", v["dtype"].dump(), "expected a string");
    t.dtype = parse_dtype(where + ": " + field, v["dtype"].get<std::string>());
    const json& shape = v["shape"];
    if (!shape.is_array() || shape.size() > kMaxRank)
      fail(where, field + " shape", shape.dump().substr(0, 80),
           "expected an array of at most " + std::to_string(kMaxRank) + " non-negative integers");
    unsigned __int128 elements = 1;
    for (const json& d : shape) {
      if (!d.is_number_unsigned())
        fail(where, field + " shape", shape.dump().substr(0, 80), "expected non-negative integers");
      const uint64_t dim = d.get<uint64_t>();
      if (dim > (uint64_t(1) << 40))
        fail(where, field + " shape", shape.dump().substr(0, 80), "a dimension above 2^40");
      elements *= dim;
      if (elements > (unsigned __int128)(uint64_t(1) << 50))
        fail(where, field + " shape", shape.dump().substr(0, 80), "more than 2^50 elements");
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    const json& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      fail(where, field + " data_offsets", off.dump().substr(0, 80), "expected [begin, end], non-negative integers");
    t.begin = off[0].get<uint64_t>();
    t.end = off[1].get<uint64_t>();
    if (t.end < t.begin)
      fail(where, field + " data_offsets", off.dump(), "end before begin");
    if (t.end > data_bytes)
      fail(where, field + " data_offsets", off.dump(),
           "beyond the data section of " + std::to_string(data_bytes) + " bytes (truncated file?)");
    const unsigned __int128 bytes = elements * dtype_bytes(t.dtype);
    if (bytes != t.end - t.begin)
      fail(where, field + " data_offsets", off.dump(),
           std::to_string(uint64_t(t.end - t.begin)) + " bytes, but shape " + shape.dump() + " of " +
               safetensors_name(t.dtype) + " needs " + std::to_string(uint64_t(bytes)));
    out.push_back(std::move(t));
  }
  // No two tensors share a byte.
  std::vector<const TensorInfo*> by_offset;
  for (const auto& t : out) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& a = *by_offset[i - 1];
    const TensorInfo& b = *by_offset[i];
    if (b.begin < a.end && b.end > b.begin)
      fail(where, "tensor " + quoted(b.name) + " data_offsets",
           "[" + std::to_string(b.begin) + ", " + std::to_string(b.end) + "]",
           "overlaps tensor " + quoted(a.name) + " [" + std::to_string(a.begin) + ", " +
               std::to_string(a.end) + "]");
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "file", "unreadable", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, "file", "not a regular file", "expected a safetensors file");
  }
  const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);
  if (file_bytes < 8) {
    ::close(fd);
    fail(path, "header length", std::to_string(file_bytes) + " bytes in the file",
         "truncated: a safetensors file starts with an 8-byte header length");
  }
  void* p = ::mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) fail(path, "file", "cannot be mapped", std::strerror(errno));
  map_ = static_cast<const unsigned char*>(p);
  map_bytes_ = file_bytes;
  try {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | map_[i];
    if (n > file_bytes - 8)
      fail(path, "header length", std::to_string(n),
           "longer than the " + std::to_string(file_bytes - 8) + " bytes after it in the file");
    if (n > kMaxHeaderBytes)
      fail(path, "header length", std::to_string(n), "above the format's limit of 100 MB");
    data_start_ = 8 + n;
    tensors_ = parse_safetensors_header(
        path, std::string_view(reinterpret_cast<const char*>(map_ + 8), n), file_bytes - data_start_);
  } catch (...) {
    ::munmap(const_cast<unsigned char*>(map_), map_bytes_);
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(const_cast<unsigned char*>(map_), map_bytes_);
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& other) noexcept
    : path_(std::move(other.path_)), map_(other.map_), map_bytes_(other.map_bytes_),
      data_start_(other.data_start_), tensors_(std::move(other.tensors_)) {
  other.map_ = nullptr;
  other.map_bytes_ = 0;
}

const TensorInfo* SafetensorsFile::find(const std::string& name) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                             [](const TensorInfo& t, const std::string& n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

std::string_view SafetensorsFile::bytes(const TensorInfo& t) const {
  return {reinterpret_cast<const char*>(map_ + data_start_ + t.begin), size_t(t.end - t.begin)};
}

void SafetensorsFile::read(const TensorInfo& t, float* out) const {
  const unsigned char* src = map_ + data_start_ + t.begin;
  const int64_t n = t.elements();
  for (int64_t i = 0; i < n; ++i) {
    float v;
    if (t.dtype == DType::f32) {
      std::memcpy(&v, src + 4 * i, 4);
    } else {
      const uint16_t h = uint16_t(src[2 * i] | (src[2 * i + 1] << 8));
      v = t.dtype == DType::f16 ? half_to_float(h) : bf16_to_float(h);
    }
    // A NaN or infinite weight is never meant: it would turn every later activation into NaN.
    if (!std::isfinite(v))
      fail(path_, "tensor " + quoted(t.name), std::to_string(v) + " at element " + std::to_string(i),
           "finite weights");
    out[i] = v;
  }
}

std::string safetensors_bytes(const std::vector<TensorOut>& tensors, DType dtype,
                              const std::vector<std::pair<std::string, std::string>>& metadata) {
  // nlohmann's ordered_json keeps the tensors in the order given.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    header["__metadata__"] = m;
  }
  uint64_t offset = 0;
  const int size = dtype_bytes(dtype);
  for (const auto& t : tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    header[t.name] = {{"dtype", safetensors_name(dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + uint64_t(n) * size}}};
    offset += uint64_t(n) * size;
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 8) text.push_back(' ');
  std::string out(8, '\0');
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += text;
  out.reserve(out.size() + offset);
  for (const auto& t : tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    for (int64_t i = 0; i < n; ++i) {
      if (dtype == DType::f32) {
        char b[4];
        std::memcpy(b, t.data + i, 4);
        out.append(b, 4);
      } else {
        const uint16_t h = dtype == DType::f16 ? float_to_half(t.data[i]) : float_to_bf16(t.data[i]);
        out.push_back(static_cast<char>(h & 0xff));
        out.push_back(static_cast<char>(h >> 8));
      }
    }
  }
  return out;
}

float bf16_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1);  // round to nearest even
  return uint16_t(bits >> 16);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      uint32_t m = man;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400) == 0);
      bits = sign | uint32_t(127 - 15 - e) << 23 | (m & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00;               // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00;              // overflow (rounds to inf) or inf
  if (abs < 0x38800000u) {                                   // subnormal half or zero
    if (abs < 0x33000000u) return sign;                      // below half the smallest subnormal
    const uint32_t exp = abs >> 23;
    const uint32_t man = (abs & 0x7fffff) | 0x800000;
    // value = man * 2^(exp-150); in units of the half subnormal 2^-24: man * 2^(exp-126)
    const uint32_t shift = 126 - exp;  // 14..24
    const uint32_t q = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    uint32_t r = q + ((rem > halfway || (rem == halfway && (q & 1))) ? 1 : 0);
    return sign | uint16_t(r);
  }
  uint32_t r = abs - 0x38000000u;  // rebias exponent 127 -> 15 (still in float's bit layout)
  r = r + 0xfffu + ((r >> 13) & 1);  // round to nearest even on the 13 dropped bits
  return sign | uint16_t(r >> 13);
}

}  // namespace kvcim::cmodel
