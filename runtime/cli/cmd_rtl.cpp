// kvcim rtl build | list: the RTL tile at a spec's parameters built into the cache ahead of time
// (rtl/sim/rtl_build.cpp; `kvcim run --attention-backend rtl` builds it on first use otherwise),
// and what is linked, prebuilt and cached.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/rtl/rtl_build.hpp"
#include "kvcim/rtl/rtl_tiles.hpp"
#ifdef KVCIM_HAVE_RTL
#include "kvcim/rtl/rtl_tile.hpp"
#endif

namespace kvcim::cli {

rtl::RtlBuildOptions rtl_build_options(bool quiet) {
  rtl::RtlBuildOptions o;
  o.enabled = true;
  if (!quiet)
    o.progress = [](const std::string& line) {
      std::fprintf(stderr, "%s\n", line.c_str());
      std::fflush(stderr);
    };
  return o;
}

std::optional<rtl::RtlTileSource> linked_rtl_tile() {
#ifdef KVCIM_HAVE_RTL
  return rtl::RtlTileSource{rtl::RtlTile::built_params(), [] { return std::make_unique<rtl::RtlTile>(); }};
#else
  return std::nullopt;
#endif
}

namespace {

void add_rtl_build(CLI::App* rtl) {
  struct Opts {
    std::string hw = mapper::default_hardware_spec_path(), model = cmodel::default_model_path();
    bool quiet = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = rtl->add_subcommand("build", "Build the RTL tile of a spec into the cache now (else: on first use)");
  cmd->add_option("--hw", o->hw, "hardware spec (YAML): its tile's tokens, K/V and probability bits")->capture_default_str();
  cmd->add_option("--model", o->model, "model whose head_dim the tile is built at")->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "no progress line");
  cmd->callback([o] {
    const std::optional<rtl::RtlTileSource> linked = linked_rtl_tile();
    if (!linked) fail("rtl build", "backend", "rtl", "this kvcim was built without the RTL (KVCIM_WITH_RTL=OFF)");
    const mapper::HardwareSpec hw = mapper::load_hardware_spec(o->hw);
    const cmodel::cim::TileParams tile = hw.tile(cmodel::load_checkpoint_config(o->model).head_dim());
    tile.validate("tile");
    rtl::check_rtl_buildable(tile);
    const std::string name = rtl::rtl_config_name(tile);
    // a prebuilt tile needs no build
    if (linked->params == tile) {
      std::cout << name << ": linked into kvcim (nothing to build)\n";
      return;
    }
    if (rtl::RtlTiles(linked).find(tile)) {
      std::cout << name << ": a prebuilt module beside kvcim (nothing to build)\n";
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    const rtl::RtlCachedModule m = rtl::RtlBuilder(rtl_build_options(o->quiet)).ensure(tile);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char took[32];
    std::snprintf(took, sizeof took, "%.1f", s);
    std::cout << name << ": " << (m.built ? std::string("built in ") + took + " s" : std::string("already cached"))
              << ": " << m.path << "\n";
  });
}

void add_rtl_list(CLI::App* rtl) {
  auto* cmd = rtl->add_subcommand("list", "The RTL tiles there are: linked, prebuilt modules, cached builds");
  cmd->callback([] {
    const std::optional<rtl::RtlTileSource> linked = linked_rtl_tile();
    if (!linked) {
      std::cout << "this kvcim was built without the RTL (KVCIM_WITH_RTL=OFF)\n";
      return;
    }
    const std::vector<std::string> names = rtl::RtlTiles(linked).available();
    std::cout << "linked: " << rtl::rtl_config_name(linked->params) << "\n";
    std::cout << "prebuilt modules:";
    for (size_t i = 1; i < names.size(); ++i) std::cout << " " << names[i];
    std::cout << (names.size() > 1 ? "\n" : " none\n");
    const rtl::RtlBuilder builder(rtl::RtlBuildOptions{});
    const std::vector<rtl::RtlCacheEntry> cached = builder.cached();
    std::cout << "cache " << builder.cache_dir() << ":" << (cached.empty() ? " empty\n" : "\n");
    for (const rtl::RtlCacheEntry& e : cached)
      std::cout << "  " << e.key << (e.current ? "" : " (stale: other sources or tools)") << "  " << e.path << "\n";
  });
}

}  // namespace

void add_rtl(CLI::App& app) {
  auto* rtl = app.add_subcommand("rtl", "RTL attention tiles: build one for a spec ahead of time, list them");
  rtl->require_subcommand(1);
  add_rtl_build(rtl);
  add_rtl_list(rtl);
}

}  // namespace kvcim::cli
