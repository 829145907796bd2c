// The Verilated RTL attention tile: simulated clock cycles per second and attention problems per
// second (append n tokens + one query through the harness), and the same problems through the C
// model in the same run (`rtl_over_cmodel`: RTL time / C-model time). Built without the RTL
// (KVCIM_WITH_RTL=OFF) it reports itself as skipped.
#include <benchmark/benchmark.h>

#ifdef KVCIM_HAVE_RTL
#include <chrono>
#include <random>
#include <vector>

#include "kvcim/rtl/rtl_tile.hpp"

using namespace kvcim::cmodel::cim;
using namespace kvcim::rtl;


namespace {

std::vector<TileProblem> problems(int n, int count) {
  std::mt19937_64 rng(n);
  std::vector<TileProblem> out;
  for (int i = 0; i < count; ++i) out.push_back(random_problem(rng, TileParams{}, n));
  return out;
}

void BM_RtlProblem(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::vector<TileProblem> prs = problems(n, 16);
  RtlTile rtl;
  const uint64_t c0 = rtl.sim_cycles();
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(run_problem(rtl, prs[i++ % prs.size()]));
  const double cycles = static_cast<double>(rtl.sim_cycles() - c0);
  state.counters["sim_cycles/s"] = benchmark::Counter(cycles, benchmark::Counter::kIsRate);
  state.counters["problems/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["cycles/problem"] = cycles / double(state.iterations());
  // the C model on the same problems, timed in this run for the ratio
  CModelTile c;
  const int reps = 64;
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) benchmark::DoNotOptimize(run_problem(c, prs[r % prs.size()]));
  const double tc = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) benchmark::DoNotOptimize(run_problem(rtl, prs[r % prs.size()]));
  const double tr = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  state.counters["rtl_over_cmodel"] = tr / tc;
}
BENCHMARK(BM_RtlProblem)->Arg(1)->Arg(16)->Arg(64);

// Idle clocking: the raw Verilated model speed with nothing to do (an upper bound).
void BM_RtlIdleCycles(benchmark::State& state) {
  RtlTile rtl;
  const uint64_t c0 = rtl.sim_cycles();
  for (auto _ : state) rtl.reset();  // one clear cycle
  state.counters["sim_cycles/s"] =
      benchmark::Counter(double(rtl.sim_cycles() - c0), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RtlIdleCycles);

}  // namespace

#else  // built without the RTL

namespace {
void BM_RtlProblem(benchmark::State& state) {
  for (auto _ : state) {
  }
  state.SkipWithError("skipped: kvcim was configured with KVCIM_WITH_RTL=OFF");
}
BENCHMARK(BM_RtlProblem);
}  // namespace

#endif

BENCHMARK_MAIN();
