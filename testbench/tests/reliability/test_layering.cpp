// The arrows of the house (docs/architecture.md): common ◀ cmodel ◀ mapper ◀ runtime ◀ python and
// cmodel ◀ rtl ◀ runtime; testbench/ may use everything and nothing uses it. Read from the sources'
// own #include lines, so that a new include pointing the wrong way fails here, naming the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "test_paths.hpp"

namespace fs = std::filesystem;

namespace {

// Every "kvcim/<part>/..." a file includes, as "<part>".
std::vector<std::string> included_parts(const fs::path& file) {
  static const std::regex include_line(R"re(^\s*#\s*include\s*"kvcim/([a-z_]+)/)re");
  std::vector<std::string> parts;
  std::ifstream in(file);
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, include_line)) parts.push_back(m[1]);
  return parts;
}

// The source files under `folders` (relative to the source root).
std::vector<fs::path> sources(const std::vector<std::string>& folders) {
  std::vector<fs::path> files;
  for (const std::string& f : folders) {
    const fs::path root = fs::path(kvcim::test::source_dir()) / f;
    if (!fs::exists(root)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".h")) files.push_back(e.path());
    }
  }
  return files;
}

// Fails naming every file under `folders` that includes a part outside `allowed`.
void expect_includes_only(const std::vector<std::string>& folders, const std::vector<std::string>& allowed) {
  const std::vector<fs::path> files = sources(folders);
  ASSERT_FALSE(files.empty()) << folders.front();
  for (const fs::path& file : files)
    for (const std::string& part : included_parts(file))
      EXPECT_NE(std::find(allowed.begin(), allowed.end(), part), allowed.end())
          << file.string() << " includes kvcim/" << part << "/";
}

}  // namespace

// common/ and its headers (include/kvcim/*.hpp, no part folder) stand on no part.
TEST(Layering, CommonStandsOnNoPart) {
  expect_includes_only({"common"}, {});
  for (const auto& e : fs::directory_iterator(fs::path(kvcim::test::source_dir()) / "include/kvcim")) {
    if (e.is_regular_file()) {
      EXPECT_TRUE(included_parts(e.path()).empty()) << e.path().string() << " includes a part";
    }
  }
}

TEST(Layering, CmodelIncludesOnlyItself) {
  expect_includes_only({"cmodel", "include/kvcim/cmodel"}, {"cmodel"});
}

TEST(Layering, TheRtlLibraryStandsOnTheCmodelOnly) {
  expect_includes_only({"rtl", "include/kvcim/rtl"}, {"cmodel", "rtl"});
}

TEST(Layering, MapperStandsOnTheCmodelOnly) {
  expect_includes_only({"mapper", "include/kvcim/mapper"}, {"cmodel", "mapper"});
}

TEST(Layering, NothingOutsideTheTestbenchIncludesIt) {
  expect_includes_only({"cmodel", "mapper", "runtime", "rtl", "python", "benchmarks", "include/kvcim/cmodel",
                        "include/kvcim/mapper", "include/kvcim/runtime", "include/kvcim/rtl"},
                       {"cmodel", "mapper", "runtime", "rtl"});
}

// The checker itself: a file including testbench/ is reported.
TEST(Layering, TheCheckSeesAnInclude) {
  const fs::path tmp = fs::temp_directory_path() / "kvcim_layering_probe.cpp";
  std::ofstream(tmp) << "#include \"kvcim/testbench/tile_hooks.hpp\"\n  #  include \"kvcim/rtl/rtl_tile.hpp\"\n";
  EXPECT_EQ(included_parts(tmp), (std::vector<std::string>{"testbench", "rtl"}));
  fs::remove(tmp);
}
