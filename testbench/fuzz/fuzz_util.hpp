// Shared by the fuzz targets: the readers take paths, so each input is written to a private
// temporary file first; and the one failure a reader may report is kvcim::Error with a one-line
// message naming the file. Anything else (another exception type, a multi-line message, a
// message that does not say which file) is the contract broken, so the target aborts and the
// fuzzer keeps the input as a crash.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "kvcim/error.hpp"

namespace kvcim::fuzz {

// A directory of this process's own (so that relative `base:` references in a fuzzed YAML file
// resolve to nothing), removed at exit.
// (Held in a string that is never destroyed, so that the exit handler can still read it.)
inline const std::string& private_dir() {
  static const std::string* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    auto* pattern = new std::string(std::string(tmp && *tmp ? tmp : "/tmp") + "/kvcim-fuzz-XXXXXX");
    if (!::mkdtemp(pattern->data())) {
      std::perror("kvcim fuzz: mkdtemp");
      std::abort();
    }
    std::atexit([] { std::error_code ec; std::filesystem::remove_all(*dir, ec); });
    return pattern;
  }();
  return *dir;
}

// Writes `size` bytes to <private dir>/<name> and returns the path.
inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = private_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "kvcim fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

[[noreturn]] inline void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "kvcim fuzz: contract broken: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Runs `body`; a kvcim::Error whose message is one line and mentions `must_name` (the file
// path, when the reader was given one; "" to skip) is an accepted answer to bad input.
template <class F>
void expect_clean(const std::string& must_name, F&& body) {
  try {
    body();
  } catch (const kvcim::Error& e) {
    const std::string msg = e.what();
    if (msg.empty()) broken("empty error message", "");
    if (msg.find('\n') != std::string::npos) broken("multi-line error message", msg);
    if (!must_name.empty() && msg.find(must_name) == std::string::npos)
      broken("error message does not name the input", msg);
  } catch (const std::exception& e) {
    broken("exception other than kvcim::Error escaped", e.what());
  }
}

}  // namespace kvcim::fuzz
