// Teacher-forced evaluation speed (docs/performance.md, "Batched evaluation"): the same tokens
// through the float reference one position at a time (what `kvcim logits` and a decode step
// run), the float reference a chunk of positions at a time (cmodel::forward_sequence, the
// evaluation's reference pass) and the CIM pass on configs/hw/sram_analog.yaml a chunk at a time
// (the evaluation's CIM pass: analog macros with read noise, C-model attention tiles), all in one
// process so that the ratios see the same machine.
//
//   BM_TeacherForced/<shape>/<kind>  kind 0: float per position, 1: float chunked, 2: CIM chunked
//       ms_per_token (wall: the passes share the GEMV's helper thread), cpu_ms_per_token (process
//       CPU time, both threads); kind 2 also cim_vs_float_per_position and cim_vs_float_chunked,
//       the wall-time ratios per token against kinds 0 and 1 of the same run, and write_cpu_s:
//       the process CPU time of placing the weights and writing them into the macros, a cost
//       of the run (not of its tokens) that the per-token figures leave out.
//
// Shapes: random weights (cmodel::random_weights) of stories15M and stories110M built in memory
// (sized as `kvcim run` sizes a spec too small for the model); positions
// 0 .. 255 of one sequence of fixed tokens, in chunks of 128 as the evaluation runs them.
// KVCIM_BENCH_SMOKE=1: the embedded model only. KVCIM_THREADS=1 for the CPU ratios of
// docs/performance.md section 10 (with two threads the GEMV helper's spinning between jobs adds
// to the passes' CPU times unevenly).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <string>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "kvcim/mapper/shape.hpp"
#include "kvcim/mapper/sizing.hpp"
#include "kvcim/runtime/hardware.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;

namespace {

bool smoke() { return std::getenv("KVCIM_BENCH_SMOKE") != nullptr; }

enum ShapeId { kEmbedded, k15M, k110M };
constexpr int kChunk = 128;

Checkpoint& checkpoint(int id) {
  static std::map<int, std::unique_ptr<Checkpoint>> cks;
  auto& ck = cks[id];
  if (!ck) {
    if (id == kEmbedded) {
      ck = std::make_unique<Checkpoint>(read_checkpoint(default_model_path()));
    } else {
      ck = std::make_unique<Checkpoint>();
      ck->config = mapper::shape_preset(id == k15M ? "stories15m" : "stories110m").config;
      ck->weights = random_weights(ck->config, 1234 + id);
      ck->path = id == k15M ? "random:stories15M" : "random:stories110M";
    }
  }
  return *ck;
}

int positions(int id) { return id == kEmbedded ? 128 : 256; }
std::vector<int> tokens(const Config& c, int n) {
  std::vector<int> ids;
  for (int p = 0; p < n; ++p) ids.push_back(p == 0 ? 1 : (p * 7919 + 3) % c.vocab_size);
  return ids;
}

// The CIM side: sram_analog placed for the evaluation's context (sized to fit), weights written once.
struct Cim {
  mapper::HardwareSpec hw;
  std::unique_ptr<mapper::Placement> placement;
  SessionHardware shw;
  std::unique_ptr<SessionBackend> backend;
  explicit Cim(const Checkpoint& ck) {
    hw = mapper::load_hardware_spec(std::string(KVCIM_SOURCE_DIR) + "/configs/hw/sram_analog.yaml");
    // as `kvcim run` places it: sized to the model when the spec is too small, for its 64 steps
    // (the evaluation's attention makes the tiles its sequences need)
    mapper::fit_if_too_small(hw, ck.config, mapper::Policy{}, false);
    placement = std::make_unique<mapper::Placement>(place_for_run(ck, hw, mapper::Policy{}, 64));
    shw = session_hardware(ck, *placement, cmodel_tiles(hw.tile(ck.config.head_dim())));
    auto weights = std::make_shared<CimWeights>(ck.config, ck.weights, shw.macro, shw.blocks);
    backend = std::make_unique<SessionBackend>(ck.config, ck.weights, BackendChoice{}, weights, shw.tiles,
                                               shw.k_per_channel, shw.kv_window);
  }
};

std::map<std::pair<int, int>, double>& seconds_per_token() {
  static std::map<std::pair<int, int>, double> m;
  return m;
}

void BM_TeacherForced(benchmark::State& state) {
  const int id = static_cast<int>(state.range(0)), kind = static_cast<int>(state.range(1));
  if (smoke() && id != kEmbedded) {
    state.SkipWithError("KVCIM_BENCH_SMOKE: embedded model only");
    return;
  }
  const Checkpoint& ck = checkpoint(id);
  const Config& c = ck.config;
  const int n = positions(id);
  const std::vector<int> ids = tokens(c, n);
  ReferenceBackend ref(c, ck.weights);
  // the CIM side's placement and the weights' write into its macros: once per run, not per
  // token, so outside the timed passes (reported beside them as write_cpu_s)
  const std::clock_t w0 = std::clock();
  std::unique_ptr<Cim> cim = kind == 2 ? std::make_unique<Cim>(ck) : nullptr;
  const double write_cpu = static_cast<double>(std::clock() - w0) / CLOCKS_PER_SEC;
  RunState s(c);
  std::vector<float> logits;
  double wall = 0, cpu = 0;
  int64_t done = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    if (kind == 0) {
      ref.cache().reset();
      for (int p = 0; p < n; ++p) benchmark::DoNotOptimize(forward(c, ck.weights, s, ref, ids[p], p).data());
    } else {
      Backend& be = kind == 1 ? static_cast<Backend&>(ref) : *cim->backend;
      if (kind == 1) ref.cache().reset(); else cim->backend->reset();
      for (int p0 = 0; p0 < n; p0 += kChunk) {
        forward_sequence(c, ck.weights, be, ids.data() + p0, p0, std::min(kChunk, n - p0), logits);
        benchmark::DoNotOptimize(logits.data());
      }
    }
    wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cpu += static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    done += n;
  }
  const double per = wall / static_cast<double>(done);
  seconds_per_token()[{id, kind}] = per;
  state.counters["ms_per_token"] = per * 1e3;
  state.counters["cpu_ms_per_token"] = cpu / static_cast<double>(done) * 1e3;
  if (kind == 2) {
    state.counters["write_cpu_s"] = write_cpu;
    for (int k : {0, 1}) {
      const auto it = seconds_per_token().find({id, k});
      if (it != seconds_per_token().end())
        state.counters[k == 0 ? "cim_vs_float_per_position" : "cim_vs_float_chunked"] = per / it->second;
    }
  }
}

}  // namespace

BENCHMARK(BM_TeacherForced)
    ->ArgsProduct({{kEmbedded, k15M, k110M}, {0, 1, 2}})
    ->ArgNames({"shape", "kind"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

BENCHMARK_MAIN();
