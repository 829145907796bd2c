// The accuracy evaluation through the Verilated tile: many sequences, each with its own tiles, made
// and dropped on both threads of the run. The process keeps a fixed number of threads however many
// tiles exist (Verilator's default of a worker thread per tile context gave one idle thread per
// live tile), its memory does not grow from one evaluation to the next, and the scores are the
// C-model tile's.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <string>

#include "kvcim/mapper/hardware.hpp"
#include "kvcim/rtl/rtl_tile.hpp"
#include "kvcim/runtime/hardware.hpp"
#include "kvcim/runtime/session.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;

namespace {

// A field of /proc/self/status ("Threads", "VmRSS" in kB).
long status_field(const std::string& name) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind(name + ":", 0) == 0) return std::stol(line.substr(name.size() + 1));
  return -1;
}

}  // namespace

TEST(RtlEvaluation, ManySequencesKeepThreadsAndMemoryFlatAndScoreAsTheCModel) {
  const Checkpoint ck = read_checkpoint(test::model_path());
  const Tokenizer tok = Tokenizer::load(test::tokenizer_path(), 512);
  const mapper::HardwareSpec hw = mapper::load_hardware_spec(mapper::default_hardware_spec_path());
  SessionOptions o;
  o.steps = 6;
  o.threads = 2;  // the evaluation's sequences on both threads, each making and dropping its tiles
  o.eval_text = "Lily saw a big dog.";
  o.eval_tokens = 400;  // several sequences: 20 K/V streams each, a tile per 64 tokens of each
  o.backends = {BackendKind::cim, BackendKind::cim};
  const mapper::Placement p = place_for_run(ck, hw, mapper::Policy{}, o.steps);
  const GenerationResult c = run_generation(ck, tok, o, session_hardware(ck, p, cmodel_tiles(hw.tile(8))));

  const long threads_before = status_field("Threads");
  std::mutex m;
  long most_threads = 0;
  std::atomic<int> made{0};
  auto counted_rtl = [&] {
    ++made;
    const long now = status_field("Threads");
    std::lock_guard<std::mutex> lock(m);
    most_threads = std::max(most_threads, now);
    return std::make_unique<rtl::RtlTile>();
  };
  o.backends.attention = BackendKind::rtl;
  const GenerationResult r1 = run_generation(ck, tok, o, session_hardware(ck, p, counted_rtl));
  const long rss_after_first = status_field("VmRSS");
  const GenerationResult r2 = run_generation(ck, tok, o, session_hardware(ck, p, counted_rtl));
  const long rss_after_second = status_field("VmRSS");

  ASSERT_TRUE(c.evaluation && r1.evaluation && r2.evaluation);
  EXPECT_GE(r1.evaluation->sequences, 2);
  EXPECT_GT(made.load(), 100) << "too few tiles to show a per-tile cost";
  // the run's own helper thread at most, never one per tile
  EXPECT_LE(most_threads, threads_before + 1) << made.load() << " tiles made";
  EXPECT_LE(status_field("Threads"), threads_before + 1);
  // a second evaluation of the same size reuses what the first freed (a leaked tile: ~0.1 MB)
  EXPECT_LE(rss_after_second, rss_after_first + 4096) << "kB";
  EXPECT_EQ(r1.evaluation->scores.nll_cim, c.evaluation->scores.nll_cim);
  EXPECT_EQ(r2.evaluation->scores.nll_cim, c.evaluation->scores.nll_cim);
  EXPECT_TRUE(r1.simulated == c.simulated);
}
