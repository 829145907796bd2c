// YAML readers (technology tables, hardware specs) on inputs that once hung or were silently
// misread: a base:/technology: path naming a FIFO or a device, a key given twice, nesting
// thousands deep. (Wrong types, wrong units, negative values, unknown keys with suggestions and
// missing sections are proven in testbench/tests/energy/test_tech.cpp,
// testbench/tests/energy/test_config_reader.cpp and testbench/tests/mapper/test_hardware.cpp.)
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "kvcim/cmodel/energy/tech.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "reliability_util.hpp"

using namespace kvcim;
using namespace kvcim::test;
namespace fs = std::filesystem;

namespace {

// Runs `body` in a child process with a deadline: a reader that blocks forever is a test failure
// (the child is killed by SIGALRM), not a hung test run. The child's exit code is body()'s.
int with_deadline(int seconds, const std::function<int()>& body) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::alarm(static_cast<unsigned>(seconds));
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// 0 when `load` throws a kvcim::Error mentioning `text`; 1 when it throws another message;
// 2 when it returns.
int error_mentions(const std::function<void()>& load, const std::string& text) {
  try {
    load();
  } catch (const kvcim::Error& e) {
    return std::string(e.what()).find(text) != std::string::npos ? 0 : 1;
  } catch (...) {
    return 3;
  }
  return 2;
}

struct Dir {
  fs::path path = fs::path(::testing::TempDir()) / ("rel_cfg_" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

std::string shipped_spec_text() {
  return read_bytes(std::string(KVCIM_SOURCE_DIR) + "/configs/hw/sram_digital.yaml");
}

}  // namespace

TEST(ConfigInputs, TechnologyBaseNamingAFifoIsRefusedNotWaitedFor) {
  Dir d;
  const std::string fifo = (d.path / "pipe.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string table = d.write("t.yaml", "name: t\nnode_nm: 45\nvoltage_v: 0.9\nbase: pipe.yaml\n");
  EXPECT_EQ(with_deadline(10, [&] {
              return error_mentions([&] { cmodel::energy::load_tech_table(table); }, "base");
            }),
            0)
      << "128 + 14 (SIGALRM) means the reader blocked on the FIFO";
}

TEST(ConfigInputs, TechnologyBaseNamingADeviceIsRefused) {
  Dir d;
  const std::string table = d.write("t.yaml", "name: t\nnode_nm: 45\nvoltage_v: 0.9\nbase: /dev/zero\n");
  EXPECT_EQ(with_deadline(10, [&] {
              return error_mentions([&] { cmodel::energy::load_tech_table(table); }, "/dev/zero");
            }),
            0);
}

TEST(ConfigInputs, HardwareTechnologyNamingAFifoIsRefusedNotWaitedFor) {
  Dir d;
  const std::string fifo = (d.path / "tech.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string spec = shipped_spec_text();
  const std::string from = "technology: ../tech/sram_digital_cim.yaml";
  ASSERT_NE(spec.find(from), std::string::npos);
  spec.replace(spec.find(from), from.size(), "technology: " + fifo);
  const std::string macro = "describes: ../macros/";  // the macro it describes, where it is shipped
  if (spec.find(macro) != std::string::npos)
    spec.replace(spec.find(macro), macro.size(), "describes: " + std::string(KVCIM_SOURCE_DIR) + "/configs/macros/");
  EXPECT_EQ(with_deadline(10, [&] {
              return error_mentions([&] { mapper::hardware_spec_from_text(spec, d.path.string(), "s.yaml"); },
                                    "technology");
            }),
            0);
}

TEST(ConfigInputs, KeyGivenTwiceIsAnErrorNotTheFirstValue) {
  // yaml-cpp keeps both entries and node["rows"] answers the first: the second was ignored.
  std::string spec = shipped_spec_text();
  const std::string from = "  rows: 256\n";
  ASSERT_NE(spec.find(from), std::string::npos);
  spec.replace(spec.find(from), from.size(), from + "  rows: 128\n");
  const std::string e = error_of([&] {
    mapper::hardware_spec_from_text(spec, std::string(KVCIM_SOURCE_DIR) + "/configs/hw", "dup.yaml");
  });
  EXPECT_NAMES(e, "dup.yaml:");
  EXPECT_NAMES(e, "macro.rows");
  EXPECT_NAMES(e, "duplicate");
}

TEST(ConfigInputs, DeepNestingAndEmptyTextAreErrors) {
  const std::string hw_dir = std::string(KVCIM_SOURCE_DIR) + "/configs/hw";
  for (const std::string& text : {std::string(100000, '['), std::string(""), std::string("name: x\nmacro: ") + std::string(5000, '{')}) {
    const std::string e = error_of([&] { mapper::hardware_spec_from_text(text, hw_dir, "deep.yaml"); });
    EXPECT_NAMES(e, "deep.yaml");
    EXPECT_ONE_LINE(e);
  }
}
