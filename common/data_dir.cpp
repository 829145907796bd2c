#include "kvcim/data_dir.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <vector>

#include "kvcim/error.hpp"

namespace kvcim {

namespace fs = std::filesystem;

namespace {

std::mutex g_mutex;
std::string g_set_dir;    // guarded by g_mutex
std::string g_found_dir;  // the root found from the binaries' folders, once; guarded by g_mutex

bool is_folder(const std::string& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The folders of the running executable and of the binary holding this function (they differ
// when this code is inside the Python module, loaded by python3).
std::vector<fs::path> binary_folders() {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back(exe.parent_path());
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&binary_folders), &info) != 0 && info.dli_fname && *info.dli_fname) {
    const fs::path lib = fs::weakly_canonical(fs::absolute(info.dli_fname, ec), ec);
    if (!ec && (out.empty() || lib.parent_path() != out.front())) out.push_back(lib.parent_path());
  }
  return out;
}

std::optional<std::string> from_root_file(const fs::path& start) {
  for (fs::path dir = start; !dir.empty(); dir = dir.parent_path()) {
    const fs::path file = dir / kDataRootFile;
    std::ifstream in(file);
    if (in) {
      std::string line;
      std::getline(in, line);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      const fs::path root = fs::path(line).is_absolute() ? fs::path(line) : dir / line;
      if (line.empty() || !is_folder(root.string()))
        fail(file.string(), "data root", line, "expected the path of a folder holding models/ and configs/");
      return root.lexically_normal().string();
    }
    if (dir == dir.root_path()) break;
  }
  return std::nullopt;
}

}  // namespace

std::string data_dir() {
  if (const char* env = std::getenv("KVCIM_DATA_DIR"); env && *env) {
    if (!is_folder(env)) fail("KVCIM_DATA_DIR", "folder", env, "not a folder (the data root: models/, configs/, testdata/eval/)");
    return env;
  }
  // The binaries do not move while the process runs: the search below (a dozen system calls,
  // and the command-line defaults ask ~10 times before the first token) is done once.
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_set_dir.empty()) return g_set_dir;
    if (!g_found_dir.empty()) return g_found_dir;
  }
  for (const fs::path& start : binary_folders())
    if (auto root = from_root_file(start)) {
      std::lock_guard<std::mutex> lock(g_mutex);
      g_found_dir = *root;
      return *root;
    }
  fail("kvcim", "data root", "not found",
       "set KVCIM_DATA_DIR to the folder holding models/, configs/ and testdata/eval/");
}

void set_data_dir(const std::string& dir) {
  if (!dir.empty() && !is_folder(dir)) fail("set_data_dir", "folder", dir, "not a folder");
  std::lock_guard<std::mutex> lock(g_mutex);
  g_set_dir = dir;
}

}  // namespace kvcim
