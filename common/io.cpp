#include "kvcim/io.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kvcim/error.hpp"

namespace kvcim {

namespace {

std::string temp_path(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

// Writes `content` to the temporary file of `path`; throws naming `path` (nothing left behind).
void write_temp(const std::string& path, const std::string& content) {
  const std::string tmp = temp_path(path);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, "output file", "unwritable", "cannot create it (does the folder exist?)");
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.flush();
  if (!out) {
    out.close();
    std::remove(tmp.c_str());
    fail(path, "output file", "write error", "could not write all bytes");
  }
}

void rename_temp(const std::string& path) {
  const std::string tmp = temp_path(path);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    fail(path, "output file", "rename failed", ec.message());
  }
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  write_temp(path, content);
  rename_temp(path);
}

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files) {
  size_t written = 0;
  try {
    for (; written < files.size(); ++written) write_temp(files[written].first, files[written].second);
  } catch (...) {
    for (size_t i = 0; i < written; ++i) std::remove(temp_path(files[i].first).c_str());
    throw;
  }
  for (const auto& f : files) rename_temp(f.first);
}

void check_writable(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "output file", "a folder", "expected a file path");
  write_temp(path, "");
  std::remove(temp_path(path).c_str());
}

std::string npy_bytes(const float* data, const std::vector<long>& shape) {
  std::string dims;
  long count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    if (i + 1 < shape.size()) dims += " ";
    count *= shape[i];
  }
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // magic(6) + version(2) + header length(2) + header, padded with spaces to a multiple of 64
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>(len >> 8));
  out += header;
  out.append(reinterpret_cast<const char*>(data), count * sizeof(float));
  return out;
}

}  // namespace kvcim
