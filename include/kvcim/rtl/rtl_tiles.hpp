// The RTL attention tiles a program can run. The default configuration of the Verilated tile is
// linked into the program (the composition roots pass it in); every other configuration of the
// table (testbench/tests/rtl_configs/rtl_configs.cmake) is built as a loadable module,
// kvcim_rtl_tile_<config>.so, found beside the program and loaded when a spec asks for its
// parameters. Modules keep the product's build (`make demo`) to the default configuration, and
// let each configuration's Verilated model and harness keep their own symbols.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/rtl/cosim_job.hpp"
#include "kvcim/rtl/rtl_build.hpp"

namespace kvcim::rtl {

// The Verilated tile as a source of attention tiles: the parameters it was built at, and how to
// make one.
struct RtlTileSource {
  cmodel::cim::TileParams params;
  cmodel::cim::TileFactory make;
};

// What a module exports (extern "C" kvcim_rtl_module_v1): checked against this program's view of
// the interface before anything in it is used.
struct RtlModuleV1 {
  int abi = 0;                   // kRtlModuleAbi of the module's build
  size_t params_size = 0;        // sizeof(TileParams) of the module's build
  cmodel::cim::TileParams params;
  std::unique_ptr<cmodel::cim::AttentionTile> (*make)() = nullptr;
  CosimResult (*cosim)(const CosimOptions&) = nullptr;  // the module's cosim_job (cosim_job.hpp)
};
inline constexpr int kRtlModuleAbi = 2;
inline constexpr const char* kRtlModuleSymbol = "kvcim_rtl_module_v1";

// A configuration `kvcim cosim` can run: its name, parameters and cosim_job.
struct RtlConfig {
  std::string name;
  cmodel::cim::TileParams params;
  CosimResult (*cosim)(const CosimOptions&) = nullptr;
  bool linked = false;
};

// "hd8_t64_kv8_p12": head_dim, tokens, K/V bits and probability bits, as the table and the module
// files name a configuration.
std::string rtl_config_name(const cmodel::cim::TileParams& p);

class RtlTiles {
 public:
  // `linked`: the configuration built into the program (none: a build without the RTL, which then
  // offers no module either). `dirs`: where modules are looked for (rtl_module_dirs()). `build`:
  // whether (and where) a configuration found nowhere is built on demand (rtl_build.hpp).
  explicit RtlTiles(std::optional<RtlTileSource> linked, std::vector<std::string> dirs = rtl_module_dirs(),
                    RtlBuildOptions build = {});
  // The tile built at exactly `p`: the linked one, else the module of p's configuration name
  // (loaded once, kept loaded), else with `build.enabled` the cache's module of p, built first if
  // the cache lacks it. A module file that is not a kvcim module, or whose build does not match
  // this program's, is a kvcim::Error naming the file; so is a parameter the RTL cannot be built at.
  std::optional<RtlTileSource> find(const cmodel::cim::TileParams& p) const;
  // Every configuration available: the linked one, then the module files in `dirs`, by name.
  std::vector<std::string> available() const;
  bool built() const { return linked_.has_value(); }
  // Every configuration with its cosim_job: the linked one (`linked_cosim`, the program's own
  // cosim_job), then each module in `dirs` by name (loaded; a module of the linked configuration's
  // name is skipped). A module that does not load is a kvcim::Error naming the file.
  std::vector<RtlConfig> configs(CosimResult (*linked_cosim)(const CosimOptions&)) const;

  // $KVCIM_RTL_MODULE_DIR if set; else the folders of the running program and of the library
  // holding this code (Python's _core, when it is one), each with its parent and grandparent (the
  // build folder, from build/ or build/python/kvcim/).
  static std::vector<std::string> rtl_module_dirs();
  // The same folders without $KVCIM_RTL_MODULE_DIR: where the build's files (the on-demand build's
  // recipe) are looked for.
  static std::vector<std::string> program_dirs();

 private:
  std::optional<RtlTileSource> linked_;
  std::vector<std::string> dirs_;
  RtlBuildOptions build_;
};

}  // namespace kvcim::rtl
