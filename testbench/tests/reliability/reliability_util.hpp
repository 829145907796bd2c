// Helpers of the reliability suite: temporary files, and the message of the kvcim::Error that a
// call is expected to throw (a test fails when it throws nothing or something else).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "kvcim/error.hpp"

namespace kvcim::test {

inline std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/rel_" + name; }

inline std::string write_bytes(const std::string& name, const std::string& bytes) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

template <class T>
std::string pod_bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}


// Every message of a reader: names the file and fits on one line.
#define EXPECT_NAMES(msg, text) EXPECT_NE((msg).find(text), std::string::npos) << "message: " << (msg)
#define EXPECT_ONE_LINE(msg) EXPECT_EQ((msg).find('\n'), std::string::npos) << "message: " << (msg)

// A file a reader must refuse: what it is, its bytes, and the field its message must name.
struct BadFile {
  const char* what;
  std::string bytes;
  std::string field;
};

// Each file written as `name` and given to `read`: refused in one line naming the file and the field.
inline void expect_each_refused(const std::vector<BadFile>& files, const std::string& name,
                                const std::function<void(const std::string&)>& read) {
  for (const auto& c : files) {
    SCOPED_TRACE(c.what);
    const std::string path = write_bytes(name, c.bytes);
    const std::string e = error_of([&] { read(path); });
    EXPECT_NAMES(e, path);
    EXPECT_NAMES(e, c.field);
    EXPECT_ONE_LINE(e);
  }
}

}  // namespace kvcim::test
