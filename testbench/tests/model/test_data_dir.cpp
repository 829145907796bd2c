// The data root is found at run time: $KVCIM_DATA_DIR first, then set_data_dir, then the
// kvcim-data-root file CMake wrote into this build folder (naming the sources).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/data_dir.hpp"
#include "kvcim/error.hpp"
#include "test_paths.hpp"

using namespace kvcim;
namespace fs = std::filesystem;

namespace {

// Each test starts and ends with neither the variable nor a set folder.
class DataDir : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    unsetenv("KVCIM_DATA_DIR");
    set_data_dir("");
  }
};

bool same(const std::string& a, const std::string& b) { return fs::equivalent(a, b); }

TEST_F(DataDir, BuildTreeFindsTheSources) {
  EXPECT_TRUE(same(data_dir(), test::source_dir()));
  EXPECT_TRUE(same(cmodel::default_model_path(), test::model_path()));
}

TEST_F(DataDir, SetFolderComesBeforeTheBuildTree) {
  const std::string dir = ::testing::TempDir();
  set_data_dir(dir);
  EXPECT_EQ(data_dir(), dir);
  EXPECT_EQ(cmodel::default_model_path(), dir + "/models/stories260K.bin");
}

TEST_F(DataDir, EnvironmentComesFirst) {
  set_data_dir(::testing::TempDir());
  setenv("KVCIM_DATA_DIR", test::source_dir().c_str(), 1);
  EXPECT_EQ(data_dir(), test::source_dir());
}

TEST_F(DataDir, MissingFoldersAreErrorsNamingThem) {
  const std::string missing = ::testing::TempDir() + "/no-such-data-root";
  setenv("KVCIM_DATA_DIR", missing.c_str(), 1);
  try {
    data_dir();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("KVCIM_DATA_DIR"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_THROW(set_data_dir(missing), Error);
}

}  // namespace
