// The RTL tile at any parameters, on demand: Verilated and compiled into a loadable module on first
// use, kept in a cache, loaded at once afterwards. The recipe (what to run and link: the Verilator
// and compiler, the SV and harness sources, the Verilator arguments, the built libraries) is a file
// CMake writes into the build folder, kvcim-rtl-recipe.json, found beside the program or the
// library at run time as kvcim-data-root is (no path is compiled in).
//
// Cache layout (default $XDG_CACHE_HOME/kvcim/rtl or ~/.cache/kvcim/rtl; $KVCIM_RTL_CACHE
// overrides):
//   <config>-<hash>/kvcim_rtl_tile_<config>.so   a finished module (the folder appears whole)
//   <config>-<hash>.lock                          flock()ed while that key is being built
//   .tmp-<config>-<hash>-<pid>/                   a build in progress (or a crashed one's remains)
// The hash covers every input file's content, the recipe, the Verilator version and the module ABI.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "kvcim/cmodel/cim/attention_tile.hpp"

namespace kvcim::rtl {

namespace build {
struct Recipe;  // rtl/sim/rtl_build_steps.hpp
}

// The name of the recipe file CMake writes into the build folder.
inline constexpr const char* kRtlRecipeFile = "kvcim-rtl-recipe.json";

// The parameters the RTL can be built at (beyond what TileParams::validate allows): a kvcim::Error
// "<where>: <field> = <value>: the RTL builds <field> <range>" otherwise.
void check_rtl_buildable(const cmodel::cim::TileParams& p, const std::string& where = "tile");

// $KVCIM_RTL_CACHE, else $XDG_CACHE_HOME/kvcim/rtl, else $HOME/.cache/kvcim/rtl.
std::string default_rtl_cache_dir();

struct RtlBuildOptions {
  bool enabled = false;     // off: a configuration outside the table is refused (RtlTiles::find)
  std::string cache_dir;    // empty: default_rtl_cache_dir()
  std::string recipe_path;  // empty: the kvcim-rtl-recipe.json found beside the program/library
  // One line before a build starts (e.g. printed on stderr); none: silent.
  std::function<void(const std::string&)> progress;
};

struct RtlCachedModule {
  std::string key;   // "<config>-<hash>"
  std::string path;  // the module file
  bool built = false;  // this call built it (else it was in the cache already)
};

struct RtlCacheEntry {
  std::string key, path;
  bool current = false;  // built from this program's recipe (else a stale build: other sources)
};

class RtlBuilder {
 public:
  explicit RtlBuilder(RtlBuildOptions options);
  // The module of `p`, built now if the cache lacks it. Parameters, the recipe, the tools and the
  // cache folder are checked before any work; a failed build leaves nothing in the cache but its
  // temporary folder's removal. Two processes building one key wait for each other (flock).
  RtlCachedModule ensure(const cmodel::cim::TileParams& p) const;
  // The key and module path `p` has in this cache (without building or checking the file).
  RtlCachedModule locate(const cmodel::cim::TileParams& p) const;
  // The modules in the cache, by key.
  std::vector<RtlCacheEntry> cached() const;
  const std::string& cache_dir() const { return cache_; }
  // The recipe file used (throws when there is none).
  std::string recipe_path() const;

 private:
  // The key and module path of `p` built from recipe `r`, whether built yet or not.
  RtlCachedModule module_in_cache(const build::Recipe& r, const cmodel::cim::TileParams& p) const;

  RtlBuildOptions options_;
  std::string cache_;
};

}  // namespace kvcim::rtl
