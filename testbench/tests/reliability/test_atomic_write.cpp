// write_file_atomic under SIGKILL: a writer process killed at random moments, over and over,
// never leaves a truncated or mixed file at the target path: the target always holds one whole
// version (the old one or a new one).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "kvcim/io.hpp"
#include "reliability_util.hpp"

using namespace kvcim;
using namespace kvcim::test;

namespace {

// Version g of the file: a header naming g and the length, then bytes that depend on g and on
// the offset, so that a prefix, a mix of two versions or a hole is detected.
std::string version(uint32_t g) {
  const size_t size = (2u << 20) + (g % 997u) * 4099u;  // 2-6 MiB: a write takes a while
  std::string s = "KVCIM " + std::to_string(g) + " " + std::to_string(size) + "\n";
  s.reserve(size);
  uint32_t x = g * 2654435761u + 1;
  while (s.size() < size) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    s.push_back(static_cast<char>(x));
  }
  return s;
}

// The version the file holds, or -1 when it is not exactly one whole version.
long whole_version(const std::string& bytes) {
  unsigned g = 0;
  size_t size = 0;
  if (std::sscanf(bytes.c_str(), "KVCIM %u %zu\n", &g, &size) != 2) return -1;
  if (g > 100000 || bytes.size() != size) return -1;
  return bytes == version(g) ? long(g) : -1;
}

using Writer = void (*)(const std::string& path, const std::string& content);

// What write_file_atomic replaces: writing the target in place. Used to prove that the checks
// below see a truncated file when there is one.
void write_in_place(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

struct KillStats {
  int inside = 0;     // kills that left a temporary file (landed inside write_file_atomic)
  int not_whole = 0;  // rounds after which the target was not one whole version
};

// Kills a writer `rounds` times in `dir` and checks the target after each kill.
KillStats kill_writers(const std::filesystem::path& dir, int rounds, uint32_t seed,
                       Writer writer = write_file_atomic) {
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string target = (dir / "report.json").string();
  write_file_atomic(target, version(0));

  std::mt19937 rng(seed);  // seeded: the same kill delays on every run
  std::uniform_int_distribution<int> delay_us(0, 30000);
  long newest = 0;
  KillStats stats;
  for (int round = 0; round < rounds; ++round) {
    const uint32_t first = static_cast<uint32_t>(1000 * (round + 1));
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    if (child == 0) {
      // the writer: two new versions, rewritten in turn until killed (made up front, so that
      // the kill lands while the writer is inside write_file_atomic)
      const std::string a = version(first), b = version(first + 1);
      if (::write(ready[1], "r", 1) != 1) ::_exit(1);
      for (;;) {
        writer(target, a);
        writer(target, b);
      }
    }
    EXPECT_GT(child, 0);
    ::close(ready[1]);
    char byte = 0;
    EXPECT_EQ(::read(ready[0], &byte, 1), 1) << "the writer died before writing";
    ::close(ready[0]);
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    EXPECT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    EXPECT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    const long held = whole_version(read_bytes(target));
    if (held < 0) {
      ++stats.not_whole;
    } else {
      EXPECT_TRUE(held == newest || held == first || held == first + 1)
          << dir << " round " << round << ": went back to " << held;
      newest = held;
    }
    // a temporary file beside the target means the kill landed inside a write
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename() != "report.json") {
        ++stats.inside;
        fs::remove(e.path());
      }
  }
  fs::remove_all(dir);
  return stats;
}

}  // namespace

TEST(AtomicWrite, KilledWriterNeverLeavesATruncatedTarget) {
  namespace fs = std::filesystem;
  // On a disk file system a rename over a just-written file may flush it, so most kills land
  // in rename(); on tmpfs most land in write(). Both must keep the target whole.
  KillStats disk = kill_writers(fs::path(::testing::TempDir()) / "rel_atomic", 30, 20240917);
  EXPECT_EQ(disk.not_whole, 0) << "a killed writer left a target that is not one whole version";
  int inside = disk.inside;
  if (fs::is_directory("/dev/shm") && ::access("/dev/shm", W_OK) == 0) {
    KillStats shm = kill_writers(fs::path("/dev/shm") / ("kvcim_rel_atomic_" + std::to_string(::getpid())), 30, 7);
    EXPECT_EQ(shm.not_whole, 0) << "a killed writer left a target that is not one whole version (tmpfs)";
    inside += shm.inside;
  }
  std::printf("kills that interrupted a write: %d of 60\n", inside);
  // the test is only meaningful if some kills interrupted a write
  EXPECT_GT(inside, 0);
}

TEST(AtomicWrite, TheSameKillsCatchAWriterThatWritesInPlace) {
  // The check above can fail: writing the target in place, the same kills leave truncated files.
  const KillStats s = kill_writers(std::filesystem::path(::testing::TempDir()) / "rel_in_place", 20, 99,
                                   write_in_place);
  std::printf("in-place writer: %d of 20 kills left a truncated target\n", s.not_whole);
  EXPECT_GT(s.not_whole, 0);
}

TEST(AtomicWrite, FailedWriteLeavesTheOldFileAndNoTemporary) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "rel_atomic_fail";
  fs::remove_all(dir);
  fs::create_directories(dir / "target_is_a_dir");
  // renaming a file over a non-empty directory fails: the error names the path
  fs::create_directories(dir / "target_is_a_dir" / "inside");
  const std::string bad = (dir / "target_is_a_dir").string();
  const std::string e = error_of([&] { write_file_atomic(bad, "data"); });
  EXPECT_NAMES(e, bad);
  std::vector<std::string> left;
  for (const auto& f : fs::directory_iterator(dir)) left.push_back(f.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"target_is_a_dir"});
  fs::remove_all(dir);
}
