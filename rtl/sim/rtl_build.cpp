// The RTL tile's cache of on-demand builds: which parameters the RTL builds at, the key, the lock,
// and the rename that makes a finished build appear whole (the build itself: rtl_build_steps.cpp).
#include "kvcim/rtl/rtl_build.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "kvcim/error.hpp"
#include "kvcim/rtl/rtl_tiles.hpp"
#include "rtl_build_steps.hpp"

namespace kvcim::rtl {

namespace fs = std::filesystem;
using cmodel::cim::TileParams;

namespace {

int clog2(int n) {
  int b = 0;
  while ((1 << b) < n) ++b;
  return b;
}

// Verilator's limits on the RTL at `p`, or nullptr when it builds. Each comes from the RTL:
//  - every vector of the tile and its macros stays within 8192 bits (wider '0 replications are a
//    WIDTHCONCAT warning, fatal under -Wall): the K macro's TOKENS x K_ACC_BITS accumulators, the
//    V macro's HEAD_DIM x V_ACC_BITS accumulators and TOKENS x PROB_BITS inputs;
//  - TOKENS <= 1024: the tile's per-token generate loops unroll at most 1024 times;
//  - PROB_BITS >= clog2(TOKENS) + 1: the softmax divider's numerator (E_BITS + PROB_BITS) holds its
//    remainder (EXP_ONE_BITS + 2 + clog2(TOKENS)) (softmax_unit.sv; a WIDTH warning otherwise).
bool rtl_builds(const TileParams& p) {
  constexpr int kMaxBits = 8192;
  const int k_acc = 2 * p.kv_bits + clog2(p.head_dim);
  const int v_acc = p.prob_bits + p.kv_bits + clog2(p.tokens);
  return p.tokens <= 1024 && p.tokens * k_acc <= kMaxBits && p.head_dim * v_acc <= kMaxBits &&
         p.tokens * p.prob_bits <= kMaxBits && p.tokens * p.kv_bits <= kMaxBits &&
         p.head_dim * p.kv_bits <= kMaxBits && p.prob_bits >= clog2(p.tokens) + 1;
}

struct Field {
  const char* name;
  int TileParams::*member;
  int lo, hi;  // TileParams::validate's range
};
constexpr Field kFields[] = {{"head_dim", &TileParams::head_dim, 1, 256},
                             {"tokens", &TileParams::tokens, 1, 4096},
                             {"kv_bits", &TileParams::kv_bits, 2, 8},
                             {"prob_bits", &TileParams::prob_bits, 1, 16}};

std::string describe(const TileParams& p, const char* but) {
  std::string s;
  for (const Field& f : kFields)
    if (std::string(f.name) != but) s += (s.empty() ? "" : ", ") + std::string(f.name) + " " + std::to_string(p.*f.member);
  return s;
}

// The module folder of `key` in `cache` and the file in it.
std::string module_file(const TileParams& p) { return "kvcim_rtl_tile_" + rtl_config_name(p) + ".so"; }

std::string find_recipe(const std::string& given) {
  if (!given.empty()) return given;
  for (const std::string& dir : RtlTiles::program_dirs()) {
    const fs::path f = fs::path(dir) / kRtlRecipeFile;
    std::error_code ec;
    if (fs::is_regular_file(f, ec)) return f.string();
  }
  fail("rtl build", "recipe", kRtlRecipeFile,
       "not found beside this program: building RTL tiles on demand needs kvcim's build folder "
       "(KVCIM_WITH_RTL=ON); the prebuilt tiles still load");
}

// The cache folder, created, and writable: else one line naming it.
void prepare_cache(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    fail("KVCIM_RTL_CACHE", "folder", dir, "cannot be created or is not a folder (set KVCIM_RTL_CACHE to a writable folder)");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    fail("KVCIM_RTL_CACHE", "folder", dir, "not writable (set KVCIM_RTL_CACHE to a writable folder)");
}

// An exclusive flock on <cache>/<key>.lock for the object's lifetime (released on close, or by the
// kernel when the process dies: a crash never leaves the key locked).
class KeyLock {
 public:
  explicit KeyLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("KVCIM_RTL_CACHE", "lock file", path, "cannot be created (set KVCIM_RTL_CACHE to a writable folder)");
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) fail("KVCIM_RTL_CACHE", "lock file", path, "cannot be locked");
  }
  ~KeyLock() { ::close(fd_); }
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

void check_rtl_buildable(const TileParams& p, const std::string& where) {
  if (p.kind != cmodel::cim::TileKind::digital)
    fail(where, "kind", "analog", "the RTL tile is digital");
  if (p.kb() != p.vb())
    fail(where, "k_bits", std::to_string(p.kb()), "the RTL tile stores K and V at one width (v_bits " + std::to_string(p.vb()) + ")");
  if (p.exp_frac != cmodel::cim::kTileExpFrac)
    fail(where, "exp_frac", std::to_string(p.exp_frac),
         "the RTL builds exp_frac " + std::to_string(cmodel::cim::kTileExpFrac) + " only (its exponent table is a package constant)");
  if (rtl_builds(p)) return;
  // Name a field whose change alone makes the tile buildable, with its legal values at the
  // others' values; else the first field (no single change suffices).
  // (the spec's fields first: head_dim is the model's)
  for (const int i : {3, 2, 1, 0}) {
    const Field& f = kFields[i];
    TileParams q = p;
    int lo = 0, hi = -1;
    for (int v = f.lo; v <= f.hi; ++v) {
      q.*f.member = v;
      if (!rtl_builds(q)) continue;
      if (hi < 0) lo = v;
      hi = v;
    }
    if (hi >= 0)
      fail(where, f.name, std::to_string(p.*f.member),
           "the RTL builds " + std::string(f.name) + " " + std::to_string(lo) + ".." + std::to_string(hi) + " at " +
               describe(p, f.name) + " (Verilator's limits on the RTL: vectors of at most 8192 bits, "
               "at most 1024 tokens, prob_bits >= log2(tokens) + 1)");
  }
  fail(where, "tokens", std::to_string(p.tokens),
       "the RTL does not build at " + describe(p, "") + " (vectors of at most 8192 bits, at most 1024 tokens, "
       "prob_bits >= log2(tokens) + 1)");
}

std::string default_rtl_cache_dir() {
  if (const char* env = std::getenv("KVCIM_RTL_CACHE"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return (fs::path(xdg) / "kvcim" / "rtl").string();
  if (const char* home = std::getenv("HOME"); home && *home) return (fs::path(home) / ".cache" / "kvcim" / "rtl").string();
  fail("KVCIM_RTL_CACHE", "folder", "(unset)", "no HOME either: set KVCIM_RTL_CACHE to a writable folder");
}

RtlBuilder::RtlBuilder(RtlBuildOptions options)
    : options_(std::move(options)), cache_(options_.cache_dir.empty() ? default_rtl_cache_dir() : options_.cache_dir) {}

std::string RtlBuilder::recipe_path() const { return find_recipe(options_.recipe_path); }

RtlCachedModule RtlBuilder::module_in_cache(const build::Recipe& r, const TileParams& p) const {
  RtlCachedModule m;
  m.key = rtl_config_name(p) + "-" + build::inputs_hash(r);
  m.path = (fs::path(cache_) / m.key / module_file(p)).string();
  return m;
}

RtlCachedModule RtlBuilder::locate(const TileParams& p) const {
  return module_in_cache(build::read_recipe(recipe_path()), p);
}

RtlCachedModule RtlBuilder::ensure(const TileParams& p) const {
  // Everything that can be refused is refused before any work.
  p.validate("tile");
  check_rtl_buildable(p);
  const build::Recipe r = build::read_recipe(recipe_path());
  build::check_inputs(r);
  RtlCachedModule m = module_in_cache(r, p);
  const fs::path final_dir = fs::path(m.path).parent_path();
  std::error_code ec;
  // a finished build (folders appear only whole) loads without the tools
  if (fs::exists(final_dir, ec)) return m;
  build::check_tools(r);
  prepare_cache(cache_);
  const KeyLock lock((fs::path(cache_) / (m.key + ".lock")).string());
  if (fs::exists(final_dir, ec)) return m;  // built by another process while this one waited
  // Remains of a crashed build of this key (no other process builds it: the lock is held).
  const std::string tmp_prefix = ".tmp-" + m.key + "-";
  for (const auto& e : fs::directory_iterator(cache_, ec))
    if (e.path().filename().string().rfind(tmp_prefix, 0) == 0) fs::remove_all(e.path(), ec);
  if (options_.progress)
    options_.progress("kvcim: building the RTL tile " + rtl_config_name(p) + " (first use; cached in " + cache_ + ") ...");
  const fs::path tmp = fs::path(cache_) / (tmp_prefix + std::to_string(::getpid()));
  fs::create_directories(tmp, ec);
  if (ec) fail("KVCIM_RTL_CACHE", "folder", tmp.string(), "cannot be created: " + ec.message());
  try {
    build::build_module(r, p, tmp.string(), module_file(p));
    // Only the module stays: the generated C++ and the objects are of no use once it is linked.
    for (const auto& e : fs::directory_iterator(tmp))
      if (e.path().filename() != module_file(p)) fs::remove_all(e.path());
    fs::rename(tmp, final_dir);  // atomic: the folder appears whole, or not at all
  } catch (const std::exception& e) {  // a tool failed, or the disk is full: nothing stays
    fs::remove_all(tmp, ec);
    throw Error("tile " + rtl_config_name(p) + ": the on-demand build failed (nothing cached): " + e.what());
  }
  m.built = true;
  return m;
}

std::vector<RtlCacheEntry> RtlBuilder::cached() const {
  std::vector<RtlCacheEntry> out;
  std::error_code ec;
  if (!fs::is_directory(cache_, ec)) return out;
  std::string hash;
  try {
    hash = build::inputs_hash(build::read_recipe(recipe_path()));
  } catch (const Error&) {  // no recipe: every entry is listed, none current
  }
  for (const auto& e : fs::directory_iterator(cache_, ec)) {
    const std::string key = e.path().filename().string();
    const size_t dash = key.rfind('-');
    if (!e.is_directory() || key[0] == '.' || dash == std::string::npos) continue;
    const fs::path so = e.path() / ("kvcim_rtl_tile_" + key.substr(0, dash) + ".so");
    if (!fs::is_regular_file(so, ec)) continue;
    out.push_back({key, so.string(), !hash.empty() && key.substr(dash + 1) == hash});
  }
  std::sort(out.begin(), out.end(), [](const RtlCacheEntry& a, const RtlCacheEntry& b) { return a.key < b.key; });
  return out;
}

}  // namespace kvcim::rtl
