#include "kvcim/rtl/rtl_tiles.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "kvcim/error.hpp"

namespace kvcim::rtl {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "kvcim_rtl_tile_";
constexpr const char* kSuffix = ".so";

// Modules loaded so far, by path: loaded once per process and never unloaded (their tiles'
// code must outlive every tile).
const RtlModuleV1* load_module(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, const RtlModuleV1*> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail(path, "module", "(unloadable)", one_line(::dlerror()));
  auto* entry = reinterpret_cast<const RtlModuleV1* (*)()>(::dlsym(handle, kRtlModuleSymbol));
  if (!entry) fail(path, "module", "(no entry)", std::string("not a kvcim RTL tile module: no ") + kRtlModuleSymbol);
  const RtlModuleV1* m = entry();
  if (!m || m->abi != kRtlModuleAbi || m->params_size != sizeof(cmodel::cim::TileParams) || !m->make ||
      !m->cosim)
    fail(path, "module", "(another build)",
         "built against another version of kvcim's tile interface: rebuild it with this program");
  loaded[path] = m;
  return m;
}

}  // namespace

std::string rtl_config_name(const cmodel::cim::TileParams& p) {
  return "hd" + std::to_string(p.head_dim) + "_t" + std::to_string(p.tokens) + "_kv" +
         std::to_string(p.kv_bits) + "_p" + std::to_string(p.prob_bits);
}

std::vector<std::string> RtlTiles::rtl_module_dirs() {
  if (const char* env = std::getenv("KVCIM_RTL_MODULE_DIR"); env && *env) return {env};
  std::vector<std::string> dirs;
  auto add = [&](fs::path d) {  // the folder, its parent and its grandparent
    for (int up = 0; up < 3; ++up, d = d.parent_path())
      if (std::find(dirs.begin(), dirs.end(), d.string()) == dirs.end()) dirs.push_back(d.string());
  };
  // The object holding this code: a shared library (Python's _core) names its file; for the
  // program itself the name may be argv[0] as typed, so the program's own path comes first.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) add(exe.parent_path());
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&rtl_config_name), &info) != 0 && info.dli_fname &&
      fs::path(info.dli_fname).is_absolute())
    add(fs::path(info.dli_fname).lexically_normal().parent_path());
  return dirs;
}

RtlTiles::RtlTiles(std::optional<RtlTileSource> linked, std::vector<std::string> dirs)
    : linked_(std::move(linked)), dirs_(std::move(dirs)) {}

std::optional<RtlTileSource> RtlTiles::find(const cmodel::cim::TileParams& p) const {
  if (!linked_) return std::nullopt;
  if (linked_->params == p) return linked_;
  const std::string file = kPrefix + rtl_config_name(p) + kSuffix;
  for (const std::string& dir : dirs_) {
    const fs::path path = fs::path(dir) / file;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) continue;
    const RtlModuleV1* m = load_module(path.string());
    if (!(m->params == p)) continue;  // the name matches, another field (exp_frac) does not
    return RtlTileSource{m->params, m->make};
  }
  return std::nullopt;
}

std::vector<std::string> RtlTiles::available() const {
  std::vector<std::string> names;
  if (!linked_) return names;
  names.push_back(rtl_config_name(linked_->params) + " (linked)");
  std::vector<std::string> found;
  for (const std::string& dir : dirs_) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string f = e.path().filename().string();
      if (f.rfind(kPrefix, 0) == 0 && f.size() > std::string(kPrefix).size() + 3 &&
          f.compare(f.size() - 3, 3, kSuffix) == 0)
        found.push_back(f.substr(std::string(kPrefix).size(), f.size() - std::string(kPrefix).size() - 3));
    }
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  names.insert(names.end(), found.begin(), found.end());
  return names;
}

std::vector<RtlConfig> RtlTiles::configs(CosimResult (*linked_cosim)(const CosimOptions&)) const {
  std::vector<RtlConfig> out;
  if (!linked_) return out;
  const std::string linked_name = rtl_config_name(linked_->params);
  out.push_back({linked_name, linked_->params, linked_cosim, true});
  for (const std::string& name : available()) {
    if (name.rfind(linked_name, 0) == 0) continue;  // "<linked> (linked)", or a module of its name
    for (const std::string& dir : dirs_) {
      const fs::path path = fs::path(dir) / (kPrefix + name + kSuffix);
      std::error_code ec;
      if (!fs::is_regular_file(path, ec)) continue;
      const RtlModuleV1* m = load_module(path.string());
      out.push_back({name, m->params, m->cosim, false});
      break;
    }
  }
  return out;
}

}  // namespace kvcim::rtl
