// The mapper's speed: design points per second of the enumerator (the target is >= 10,000
// points/s), placements and analytic token ledgers.
// KVCIM_BENCH_SMOKE=1 shrinks the grids (CTest runs every benchmark briefly).
// BM_MapLlama2_70b_32k_x64: what `kvcim map --preset llama2-70b --context 32768 --policy
// sequences=64` does (sizing, placement by the closed form, the cut into dies, figures, ledgers,
// JSON and summary);
// targets: under 1 s and under 200 MB (peak_rss_MB: the process's VmHWM, an upper bound, registered
// first so that no other case has raised it).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "kvcim/mapper/dies.hpp"
#include "kvcim/mapper/explore.hpp"
#include "kvcim/mapper/report.hpp"

using namespace kvcim::mapper;

namespace {

bool smoke() { return std::getenv("KVCIM_BENCH_SMOKE") != nullptr; }

const HardwareSpec& spec(const char* file) {
  static std::map<std::string, HardwareSpec> cache;
  auto it = cache.find(file);
  if (it == cache.end())
    it = cache.emplace(file, load_hardware_spec(std::string(KVCIM_SOURCE_DIR) + "/configs/hw/" + file)).first;
  return it->second;
}

DesignRanges grid() {
  DesignRanges r;
  r.rows = smoke() ? std::vector<int>{128, 256} : std::vector<int>{64, 128, 256, 512};
  r.cols = smoke() ? std::vector<int>{128, 256} : std::vector<int>{64, 128, 256, 512};
  r.cell_bits = {1, 2};
  r.adc_bits = {4, 6, 8};
  r.macros = smoke() ? std::vector<int64_t>{512, 1024} : std::vector<int64_t>{256, 512, 1024, 2048, 4096};
  r.tokens_per_page = {16, 32, 64};
  r.overflow = {KvOverflow::fail, KvOverflow::spill, KvOverflow::window};
  return r;
}

void enumerate(benchmark::State& state, const char* preset, const char* hw) {
  const ModelShape shape = shape_preset(preset);
  const DesignRanges r = grid();
  int64_t points = 0;
  for (auto _ : state) {
    const EnumerationStats s =
        enumerate_designs(shape, spec(hw), Policy{}, r, [&](const DesignPoint& d) {
          benchmark::DoNotOptimize(d.figures.energy_pj_cim);
        });
    points += s.valid;
  }
  state.SetItemsProcessed(points);  // items_per_second = valid design points per second
  state.counters["points_per_run"] = static_cast<double>(points) / static_cast<double>(state.iterations());
}

// Peak resident set of this process (VmHWM of /proc/self/status), bytes; -1 if unreadable.
double peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmHWM:") {
      double kb = -1;
      in >> kb;
      return kb * 1024;
    }
    std::getline(in, key);
  }
  return -1;
}

void BM_MapLlama2_70b_32k_x64(benchmark::State& state) {
  const ModelShape shape = shape_preset("llama2-70b");
  Policy p;
  p.sequences = 64;
  size_t chars = 0;
  for (auto _ : state) {
    const Placement pl = place(shape, spec("full_cim.yaml"), p, 32768);
    const MapReport r = analyse(pl);
    chars += to_json(pl, r).dump().size() + summary(pl, r).size();
  }
  benchmark::DoNotOptimize(chars);
  state.counters["peak_rss_MB"] = peak_rss_bytes() / 1e6;
  // the chip cut into reticle-sized dies (dies.hpp), which every figure above includes
  state.counters["dies"] = static_cast<double>(plan_dies(place(shape, spec("full_cim.yaml"), p, 32768)).dies.size());
}

void BM_EnumerateStories260k_Digital(benchmark::State& s) { enumerate(s, "stories260k", "sram_digital.yaml"); }
void BM_EnumerateStories260k_Reram(benchmark::State& s) { enumerate(s, "stories260k", "reram_analog.yaml"); }
void BM_EnumerateLlama2_7b_Analog(benchmark::State& s) { enumerate(s, "llama2-7b", "sram_analog.yaml"); }

void BM_PlaceEmbeddedModel(benchmark::State& state) {
  const ModelShape shape = shape_preset("stories260k");
  for (auto _ : state) benchmark::DoNotOptimize(place(shape, spec("sram_digital.yaml"), Policy{}, 512).context);
}

void BM_TokenLedgerLlama3_8b(benchmark::State& state) {
  Policy p;
  p.overflow = KvOverflow::spill;
  const Placement pl = place(shape_preset("llama3-8b"), spec("sram_digital.yaml"), p, 0);
  for (auto _ : state)
    benchmark::DoNotOptimize(token_ledgers(pl.shape, pl.hw, pl.policy, pl.weights, pl.kv, 4096).cim.n_layers());
}

}  // namespace

BENCHMARK(BM_MapLlama2_70b_32k_x64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EnumerateStories260k_Digital)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EnumerateStories260k_Reram)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EnumerateLlama2_7b_Analog)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlaceEmbeddedModel)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TokenLedgerLlama3_8b)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
