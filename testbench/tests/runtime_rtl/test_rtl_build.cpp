// The RTL tile at parameters the table lacks: built on first use into the cache (once, whoever asks
// first; two processes at once wait for each other), loaded from it afterwards, and identical to
// the C-model tile on a generation; bad input (parameters the RTL cannot be built at, a cache folder
// that cannot be written, a damaged or foreign module in the cache) refused in one line, leaving
// nothing half-written. The one build costs ~30-60 s on 2 cores: one configuration only.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "error_of.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/rtl/rtl_build.hpp"
#include "kvcim/rtl/rtl_tile.hpp"
#include "kvcim/rtl/rtl_tiles.hpp"
#include "kvcim/runtime/run_job.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;
using kvcim::cmodel::cim::TileParams;
namespace fs = std::filesystem;

namespace {

std::optional<rtl::RtlTileSource> linked_default() {
  return rtl::RtlTileSource{rtl::RtlTile::built_params(), [] { return std::make_unique<rtl::RtlTile>(); }};
}

// A fresh folder under the temporary directory, removed at the end of the test.
struct BuildTempDir {
  fs::path path;
  explicit BuildTempDir(const std::string& name)
      : path(fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~BuildTempDir() { fs::remove_all(path); }
};

rtl::RtlBuildOptions in_cache(const fs::path& cache) {
  rtl::RtlBuildOptions o;
  o.enabled = true;
  o.cache_dir = cache.string();
  return o;
}

// Everything in the cache folder but the lock files: finished builds and temporary folders.
std::vector<std::string> cache_entries(const fs::path& cache) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache, ec))
    if (e.path().extension() != ".lock") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The default spec's tile at head_dim 16 (64 tokens, 8-bit KV, 12-bit probabilities): not in the
// table (rtl_configs.cmake) and not the linked default.
TileParams hd16() { return mapper::load_hardware_spec(mapper::default_hardware_spec_path()).tile(16); }

}  // namespace

TEST(RtlBuild, ParametersTheRtlCannotBeBuiltAtAreNamedWithTheirRange) {
  TileParams p = hd16();
  p.prob_bits = 6;  // softmax_unit's remainder needs log2(64) + 1 bits
  EXPECT_EQ(test::error_of([&] { rtl::check_rtl_buildable(p); }),
            "tile: prob_bits = 6: the RTL builds prob_bits 7..16 at head_dim 16, tokens 64, kv_bits 8 "
            "(Verilator's limits on the RTL: vectors of at most 8192 bits, at most 1024 tokens, prob_bits >= "
            "log2(tokens) + 1)");
  p = hd16();
  p.tokens = 2048;
  EXPECT_NE(test::error_of([&] { rtl::check_rtl_buildable(p); }).find("tile: tokens = 2048: the RTL builds tokens 1..409"),
            std::string::npos);
  p = hd16();
  p.exp_frac = 5;
  EXPECT_NE(test::error_of([&] { rtl::check_rtl_buildable(p); }).find("tile: exp_frac = 5: the RTL builds exp_frac 6 only"),
            std::string::npos);
  // the table's and the default's parameters all build
  for (const TileParams& ok : {rtl::RtlTile::built_params(), hd16(), TileParams{48, 128, 8, 6, 16}, TileParams{128, 64, 2, 6, 12}})
    EXPECT_NO_THROW(rtl::check_rtl_buildable(ok)) << rtl::rtl_config_name(ok);
  // refused before any work: the cache folder is not even created
  BuildTempDir t("kvcim_rtl_refuse");
  p = hd16();
  p.prob_bits = 6;
  const std::string e = test::error_of([&] { rtl::RtlTiles(linked_default(), {}, in_cache(t.path / "cache")).find(p); });
  EXPECT_EQ(e.rfind("tile: prob_bits = 6:", 0), 0u) << e;
  EXPECT_FALSE(fs::exists(t.path / "cache"));
  p.head_dim = 300;  // the C model's own refusal comes first, as it was
  EXPECT_EQ(test::error_of([&] { rtl::RtlBuilder(in_cache(t.path / "cache")).ensure(p); }).rfind("tile: head_dim = 300: expected an integer in [1, 256]", 0), 0u);
}

TEST(RtlBuild, AnUnwritableCacheFolderIsNamed) {
  BuildTempDir t("kvcim_rtl_unwritable");
  std::ofstream(t.path / "file") << "a file, not a folder";
  const fs::path cache = t.path / "file" / "cache";  // cannot be created, even by root
  const std::string e = test::error_of([&] { rtl::RtlTiles(linked_default(), {}, in_cache(cache)).find(hd16()); });
  EXPECT_EQ(e, "KVCIM_RTL_CACHE: folder = " + cache.string() +
                   ": cannot be created or is not a folder (set KVCIM_RTL_CACHE to a writable folder)");
  EXPECT_EQ(test::error_of([&] { rtl::RtlBuilder(in_cache(t.path / "file")).ensure(hd16()); }).rfind("KVCIM_RTL_CACHE: folder = ", 0), 0u);
}

// A recipe naming a Verilator or compiler that is not there: one line saying what to install,
// before the cache is touched.
TEST(RtlBuild, AMissingVerilatorOrCompilerSaysWhatToInstall) {
  BuildTempDir t("kvcim_rtl_tools");
  const std::string recipe = rtl::RtlBuilder(rtl::RtlBuildOptions{}).recipe_path();
  std::ifstream in(recipe);
  const nlohmann::json j = nlohmann::json::parse(in);
  for (const char* tool : {"verilator", "cxx"}) {
    nlohmann::json k = j;
    k[tool] = (t.path / "missing" / tool).string();
    const fs::path changed = t.path / (std::string(tool) + ".json");
    std::ofstream(changed) << k.dump();
    rtl::RtlBuildOptions o = in_cache(t.path / "cache");
    o.recipe_path = changed.string();
    const std::string e = test::error_of([&] { rtl::RtlBuilder(o).ensure(hd16()); });
    const std::string install = tool == std::string("verilator") ? "(apt-get install verilator)" : "(apt-get install g++)";
    EXPECT_EQ(e.rfind("rtl build: " + std::string(tool == std::string("cxx") ? "compiler" : "verilator") + " = " +
                          (t.path / "missing" / tool).string() + ": not found: install ", 0), 0u) << e;
    EXPECT_NE(e.find(install), std::string::npos) << e;
  }
  EXPECT_FALSE(fs::exists(t.path / "cache"));
}

// A truncated module and a valid shared object that is not a kvcim module, where the cache keeps
// the tile's module: each one line naming the file and how to rebuild, the cache left as it was.
TEST(RtlBuild, ADamagedOrForeignModuleInTheCacheIsNamed) {
  BuildTempDir t("kvcim_rtl_damaged");
  const rtl::RtlBuilder builder(in_cache(t.path));
  const rtl::RtlCachedModule m = builder.locate(hd16());
  fs::create_directories(fs::path(m.path).parent_path());
  Dl_info info{};
  double (*cbrt_fn)(double) = &::cbrt;  // libm: an ELF shared object that is no kvcim module
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(cbrt_fn), &info), 0);
  const std::string libm = info.dli_fname;
  {
    std::ifstream in(libm, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(m.path, std::ios::binary) << head;  // truncated: an ELF header and little else
  }
  const rtl::RtlTiles tiles(linked_default(), {}, in_cache(t.path));
  const std::string truncated = test::error_of([&] { tiles.find(hd16()); });
  EXPECT_EQ(truncated.rfind(m.path + ": module = (truncated): 4096 bytes where its ELF headers need ", 0), 0u) << truncated;
  EXPECT_NE(truncated.find("(in the RTL tile cache: delete " + fs::path(m.path).parent_path().string() + " to rebuild it)"),
            std::string::npos) << truncated;
  // (another path: the loader keeps what it loaded by path)
  const rtl::RtlBuilder other_builder(in_cache(t.path / "other"));
  const rtl::RtlCachedModule o = other_builder.locate(hd16());
  fs::create_directories(fs::path(o.path).parent_path());
  fs::copy_file(libm, o.path);
  const std::string foreign = test::error_of([&] { rtl::RtlTiles(linked_default(), {}, in_cache(t.path / "other")).find(hd16()); });
  EXPECT_EQ(foreign.rfind(o.path + ": module = (no entry): not a kvcim RTL tile module", 0), 0u) << foreign;
  EXPECT_EQ(cache_entries(t.path), (std::vector<std::string>{fs::path(m.path).parent_path().filename().string(), "other"}));
}

// The first use builds the module once, though two processes ask at once; later lookups load it
// without building; the tile it makes runs a generation exactly as the C-model tile does.
TEST(RtlBuild, BuildsOnceOnFirstUseThenLoadsFromTheCacheAndRunsLikeTheCModel) {
  BuildTempDir t("kvcim_rtl_build");
  const fs::path cache = t.path / "cache";
  const TileParams p = hd16();
  // the remains of a build that crashed: removed by the next build of its key
  const fs::path crashed = cache / (".tmp-" + rtl::RtlBuilder(in_cache(cache)).locate(p).key + "-1");
  fs::create_directories(crashed / "model");
  std::ofstream(crashed / "model" / "half.cpp") << "// a crashed build's half-written file";
  std::vector<pid_t> children;
  for (int i = 0; i < 2; ++i) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // a process building the tile: exit 10 if it built it, 11 if it found it cached
      try {
        const rtl::RtlCachedModule m = rtl::RtlBuilder(in_cache(cache)).ensure(p);
        ::_exit(m.built ? 10 : 11);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child: %s\n", e.what());
        ::_exit(1);
      }
    }
    children.push_back(pid);
  }
  std::vector<int> codes;
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  std::sort(codes.begin(), codes.end());
  EXPECT_EQ(codes, (std::vector<int>{10, 11})) << "one process builds, the other waits and loads";
  const rtl::RtlBuilder builder(in_cache(cache));
  const rtl::RtlCachedModule cached = builder.locate(p);
  EXPECT_EQ(cache_entries(cache), (std::vector<std::string>{cached.key}));  // no temporary folder left
  EXPECT_FALSE(fs::exists(crashed));
  ASSERT_TRUE(fs::is_regular_file(cached.path));
  EXPECT_EQ(cached.key.rfind("hd16_t64_kv8_p12-", 0), 0u) << cached.key;
  const auto mtime = fs::last_write_time(cached.path);
  const rtl::RtlCachedModule again = builder.ensure(p);
  EXPECT_FALSE(again.built);
  EXPECT_EQ(again.path, cached.path);
  ASSERT_EQ(builder.cached().size(), 1u);
  EXPECT_TRUE(builder.cached()[0].current);

  // a random checkpoint of head_dim 16, through the RTL tile (found in the cache) and the C model
  Config c;
  c.dim = 32;
  c.hidden_dim = 64;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 2;
  c.vocab_size = 512;
  c.seq_len = 128;
  const std::string ck_path = (t.path / "hd16.bin").string();
  write_checkpoint(ck_path, c, random_weights(c, 7));
  const Checkpoint ck = read_checkpoint(ck_path);
  const Tokenizer tok = Tokenizer::load(test::tokenizer_path(), 512);
  const mapper::HardwareSpec hw = mapper::load_hardware_spec(mapper::default_hardware_spec_path());
  ASSERT_EQ(hw.tile(ck.config.head_dim()), p);
  int progress_lines = 0;
  rtl::RtlBuildOptions o = in_cache(cache);
  o.progress = [&](const std::string&) { ++progress_lines; };
  const rtl::RtlTiles tiles(linked_default(), {}, o);
  SessionOptions so;
  so.steps = 80;  // two 64-token tiles per stream
  so.eval_text = "";
  so.eval_tokens = 16;
  so.backends = {BackendKind::cim, BackendKind::cim};
  const RunReport cm = run_job(ck, tok, hw, mapper::Policy{}, so, {}, tiles, "attention");
  so.backends.attention = BackendKind::rtl;
  const RunReport r = run_job(ck, tok, hw, mapper::Policy{}, so, {}, tiles, "attention");
  EXPECT_EQ(progress_lines, 0) << "the cached module is loaded, not built";
  EXPECT_EQ(fs::last_write_time(cached.path), mtime);
  EXPECT_EQ(r.result.tokens, cm.result.tokens);
  ASSERT_EQ(r.result.steps.size(), cm.result.steps.size());
  for (size_t i = 0; i < r.result.steps.size(); ++i) EXPECT_EQ(r.result.steps[i].kl, cm.result.steps[i].kl) << i;
  EXPECT_TRUE(r.result.simulated == cm.result.simulated);
  EXPECT_GT(r.result.simulated.count(energy::Op::attn_scores, energy::EventKind::column_read), 0);
}
