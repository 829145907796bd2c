#include "kvcim/rtl/rtl_tiles.hpp"

#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "kvcim/error.hpp"

namespace kvcim::rtl {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "kvcim_rtl_tile_";
constexpr const char* kSuffix = ".so";

// dlopen maps a shared object's segments as its headers describe them: a truncated file (a build
// killed mid-copy, a full disk) maps past its end and the first access is SIGBUS, not an error.
// So the file must hold every segment and section its ELF header promises before it is opened.
void check_elf_extent(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    fail(path, "module", "(not ELF)", "not a shared object of this machine: a damaged or foreign file");
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  uint64_t need = eh.e_shoff + uint64_t{eh.e_shnum} * eh.e_shentsize;
  in.seekg(static_cast<std::streamoff>(eh.e_phoff));
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) {
      need = std::max<uint64_t>(need, eh.e_phoff + uint64_t{eh.e_phnum} * sizeof ph);
      break;
    }
    need = std::max<uint64_t>(need, ph.p_offset + ph.p_filesz);
  }
  if (ec || size < need)
    fail(path, "module", "(truncated)",
         std::to_string(size) + " bytes where its ELF headers need " + std::to_string(need) + ": a damaged file");
}

// Modules loaded so far, by path: loaded once per process and never unloaded (their tiles'
// code must outlive every tile).
const RtlModuleV1* load_module(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, const RtlModuleV1*> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;
  check_elf_extent(path);
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
  return program_dirs();
}

std::vector<std::string> RtlTiles::program_dirs() {
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

RtlTiles::RtlTiles(std::optional<RtlTileSource> linked, std::vector<std::string> dirs, RtlBuildOptions build)
    : linked_(std::move(linked)), dirs_(std::move(dirs)), build_(std::move(build)) {}

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
  if (!build_.enabled) return std::nullopt;
  const RtlCachedModule built = RtlBuilder(build_).ensure(p);
  const RtlModuleV1* m = nullptr;
  try {
    m = load_module(built.path);
  } catch (const Error& e) {  // a damaged or foreign file where the cache keeps p's module
    throw Error(e.what() + std::string(" (in the RTL tile cache: delete ") +
                fs::path(built.path).parent_path().string() + " to rebuild it)");
  }
  if (!(m->params == p))
    fail(built.path, "module", rtl_config_name(m->params),
         "the cache holds another configuration under " + built.key + ": delete " +
             fs::path(built.path).parent_path().string() + " to rebuild it");
  return RtlTileSource{m->params, m->make};
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
