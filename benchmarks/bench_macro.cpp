// The CIM macro C model against a plain int8 GEMV on the same matrices. Each macro benchmark
// times the baseline in the same process and reports `vs_int8_gemv` = macro time / GEMV time
// (issue targets: digital <= 2, analog bit-accurate <= 10 x digital, i.e. <= 20 vs GEMV).
// KVCIM_BENCH_SMOKE=1 shrinks the matrices to 64 x 64 for a quick run.
// KVCIM_MACRO_KERNEL=portable|avx2|avx512|avx512_vpopcntdq caps the macro kernels' level
// (cap_kernel_level), to measure on this CPU what a CPU without VPOPCNTDQ or AVX-512 runs: the
// analog kernels and the digital macro's (AVX-512 at both AVX-512 levels, AVX2 at avx2), so that
// vs_digital compares the two at the same width. The analog benchmarks' label names the level
// they ran.
// Also against the project's vectorised int8 GEMV (quant::gemv, the fastest kernel this CPU runs,
// e.g. AVX-512 VNNI): `vs_int8_fast` = macro time / its time, and `vs_digital` = macro time /
// digital macro time (the analog target is stated against the digital path).
// Two arrays: the square benchmark matrix (256 x 256 weights on 256 x 2,048 one-bit cells, 64 rows
// per conversion, a lossless 7-bit ADC), and the shipped analog macro's array (`...Shipped`:
// rows, columns and rows per conversion of configs/hw/sram_analog.yaml, 256 x 256 cells, all 256
// rows in one conversion, so 32 weights a row; a lossless ADC). Each array's analog benchmarks
// are compared with the digital macro on the same weights.
#include <benchmark/benchmark.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/cmodel/quant/int8_gemv.hpp"
#include "kvcim/mapper/hardware.hpp"

using namespace kvcim::cmodel::cim;
using kvcim::cmodel::cim::detail::cap_kernel_level;
using kvcim::cmodel::cim::detail::kernel_level;
using kvcim::cmodel::cim::detail::KernelLevel;

namespace {

int matrix_size() { return std::getenv("KVCIM_BENCH_SMOKE") ? 64 : 256; }

struct Problem {
  int n = 0;                  // n x n weights
  std::vector<int8_t> w_oi;   // [out][in], the GEMV's layout
  std::vector<int8_t> w_io;   // [in][out], the macro's layout (row = input)
  std::vector<int8_t> x8;
  std::vector<int32_t> x32;
};

const Problem& problem() {
  static const Problem p = [] {
    Problem q;
    q.n = matrix_size();
    std::mt19937 g(42);
    std::uniform_int_distribution<int> d(-127, 127);
    q.w_oi.resize(q.n * q.n);
    q.w_io.resize(q.n * q.n);
    for (int o = 0; o < q.n; ++o)
      for (int i = 0; i < q.n; ++i) q.w_io[i * q.n + o] = q.w_oi[o * q.n + i] = static_cast<int8_t>(d(g));
    for (int i = 0; i < q.n; ++i) {
      q.x8.push_back(static_cast<int8_t>(d(g)));
      q.x32.push_back(q.x8.back());
    }
    return q;
  }();
  return p;
}

// The baseline: y[o] = sum_i W[o][i] x[i], int8 operands, int32 accumulation.
void int8_gemv(const Problem& p, int32_t* y) {
  for (int o = 0; o < p.n; ++o) {
    const int8_t* row = p.w_oi.data() + o * p.n;
    int32_t acc = 0;
    for (int i = 0; i < p.n; ++i) acc += int32_t{row[i]} * p.x8[i];
    y[o] = acc;
  }
}

// Process CPU time: the machine is shared, and wall time would charge other processes' load.
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// The CPU time of one call of f writing y, the best of three timings of `reps` calls: the
// baselines the benchmarks' ratios divide by.
template <class F>
double best_seconds_per_call(int reps, const void* y, F&& f) {
  double best = 1e9;
  for (int trial = 0; trial < 3; ++trial) {
    const double t0 = cpu_seconds();
    for (int r = 0; r < reps; ++r) {
      f();
      benchmark::DoNotOptimize(y);
      benchmark::ClobberMemory();
    }
    best = std::min(best, (cpu_seconds() - t0) / reps);
  }
  return best;
}

double gemv_seconds_per_call() {
  static const double t = [] {
    const Problem& p = problem();
    std::vector<int32_t> y(p.n);
    return best_seconds_per_call(2000, y.data(), [&] { int8_gemv(p, y.data()); });
  }();
  return t;
}

// The same GEMV through the project's fastest int8 kernel (per call, best of three).
const kvcim::cmodel::quant::Int8Matrix& fast_matrix() {
  static const kvcim::cmodel::quant::Int8Matrix m = [] {
    const Problem& p = problem();
    kvcim::cmodel::quant::QuantizedMatrix q;
    q.rows = q.cols = p.n;
    q.q = p.w_oi;
    q.scale.assign(p.n, 1.0f);
    return kvcim::cmodel::quant::Int8Matrix(q);
  }();
  return m;
}

double fast_gemv_seconds_per_call() {
  static const double t = [] {
    const Problem& p = problem();
    std::vector<int32_t> y(p.n);
    return best_seconds_per_call(20000, y.data(),
                                 [&] { kvcim::cmodel::quant::gemv(fast_matrix(), p.x8.data(), y.data()); });
  }();
  return t;
}

// The array a benchmark's macro holds: rows x outs 8-bit weights on 1-bit cells (8 columns each).
struct Array {
  int rows, outs, rows_per_cycle, adc_bits;
  bool operator<(const Array& o) const {
    return std::tuple(rows, outs, rows_per_cycle, adc_bits) < std::tuple(o.rows, o.outs, o.rows_per_cycle, o.adc_bits);
  }
};

// The square benchmark matrix: n x n weights, 64 rows a conversion, 7-bit ADC (lossless for 64
// rows of 1-bit products).
Array square_array() {
  const int n = problem().n;
  return {n, n, std::min(n, 64), 7};
}

// The shipped analog macro's array (configs/hw/sram_analog.yaml): its rows, its columns as
// weights of 8 one-bit cells, its rows per conversion, and the ADC bits that convert them
// losslessly (the shipped ADC clips at 255 levels: the benchmarks here keep every code exact).
Array shipped_array() {
  static const Array a = [] {
    const auto hw = kvcim::mapper::load_hardware_spec(std::string(KVCIM_SOURCE_DIR) + "/configs/hw/sram_analog.yaml");
    const MacroSpec& m = hw.macro;
    return Array{m.rows, m.cols / 8, m.rows_per_cycle, static_cast<int>(std::bit_width(static_cast<unsigned>(m.rows_per_cycle)))};
  }();
  return a;
}

MacroSpec spec_for(MacroKind kind, const Array& a) {
  MacroSpec s;
  s.kind = kind;
  s.rows = a.rows;
  s.cols = a.outs * 8;  // 8-bit weights on 1-bit cells: 8 columns each
  s.rows_per_cycle = a.rows_per_cycle;
  s.adc_bits = a.adc_bits;
  return s;
}

// The weights [row][out] and inputs of an array: the square matrix's, or (another shape) drawn
// the same way from their own seed.
struct ArrayData {
  std::vector<int8_t> w;
  std::vector<int32_t> x;
};
const ArrayData& array_data(const Array& a) {
  static std::map<Array, ArrayData> cache;
  auto it = cache.find(a);
  if (it != cache.end()) return it->second;
  ArrayData d;
  const Problem& p = problem();
  if (a.rows == p.n && a.outs == p.n) {
    d.w = p.w_io;
    d.x = p.x32;
  } else {
    std::mt19937 g(43);
    std::uniform_int_distribution<int> u(-127, 127);
    for (int i = 0; i < a.rows * a.outs; ++i) d.w.push_back(static_cast<int8_t>(u(g)));
    for (int i = 0; i < a.rows; ++i) d.x.push_back(u(g));
  }
  return cache.emplace(a, std::move(d)).first->second;
}

void BM_Int8Gemv(benchmark::State& state) {
  const Problem& p = problem();
  std::vector<int32_t> y(p.n);
  for (auto _ : state) {
    int8_gemv(p, y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.counters["macs"] = benchmark::Counter(double(p.n) * p.n * state.iterations(),
                                              benchmark::Counter::kIsRate);
}

double digital_seconds_per_call(const Array& a);

// The kernel levels by the names KVCIM_MACRO_KERNEL takes and the labels show.
constexpr struct {
  const char* name;
  KernelLevel level;
} kLevels[] = {{"portable", KernelLevel::portable},
               {"avx2", KernelLevel::avx2},
               {"avx512", KernelLevel::avx512},
               {"avx512_vpopcntdq", KernelLevel::avx512_vpopcntdq}};

// The kernel level asked for by KVCIM_MACRO_KERNEL (none: this CPU's best); main calls it
// before any benchmark runs.
void apply_kernel_cap() {
  const char* v = std::getenv("KVCIM_MACRO_KERNEL");
  if (v == nullptr) return;
  for (const auto& l : kLevels)
    if (std::string(v) == l.name) return cap_kernel_level(l.level);
  std::fprintf(stderr, "bench_macro: KVCIM_MACRO_KERNEL = '%s': expected portable, avx2, avx512 or avx512_vpopcntdq\n", v);
  std::exit(2);
}

const char* level_name(KernelLevel level) {
  for (const auto& l : kLevels)
    if (l.level == level) return l.name;
  return "?";
}

void run_macro(benchmark::State& state, MacroKind kind, bool reference, int cell_bits = 1,
               double noise = 0.0, double read_noise = -1.0, NoiseModel model = NoiseModel::fixed,
               const Array& a = square_array(), bool alternate = false) {
  const ArrayData& d = array_data(a);
  MacroSpec s = spec_for(kind, a);
  s.cell_bits = cell_bits;
  s.cell_noise_sigma = noise;
  s.read_noise_sigma = read_noise < 0.0 ? noise : read_noise;
  s.noise_model = model;
  Macro m0(s);
  m0.write_block(d.w.data(), a.rows, a.outs);
  // alternate: a second macro of other deviations (another seed) computed in turn, as a decode's
  // macros follow each other on a thread
  std::optional<Macro> m1;
  if (alternate) {
    MacroSpec s2 = s;
    s2.seed = s.seed + 1;
    m1.emplace(s2).write_block(d.w.data(), a.rows, a.outs);
  }
  std::vector<int64_t> y(a.outs);
  const double t0 = cpu_seconds();
  bool second = false;
  for (auto _ : state) {
    Macro& m = second ? *m1 : m0;
    second = alternate && !second;
    if (reference)
      m.compute_reference(d.x.data(), a.rows, y.data(), a.outs);
    else
      m.compute(d.x.data(), a.rows, y.data(), a.outs);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double per_call = (cpu_seconds() - t0) / static_cast<double>(state.iterations());
  if (a.rows == problem().n && a.outs == problem().n) {  // the GEMVs run the square matrix
    state.counters["vs_int8_gemv"] = per_call / gemv_seconds_per_call();
    state.counters["vs_int8_fast"] = per_call / fast_gemv_seconds_per_call();
  }
  if (kind == MacroKind::analog) state.SetLabel(level_name(kernel_level()));
  if (!reference && kind == MacroKind::digital && cell_bits == 1) return;  // vs_digital would be 1
  state.counters["vs_digital"] = per_call / digital_seconds_per_call(a);
}

// The digital macro's fast path per call on an array (best of three), for the analog paths'
// vs_digital.
double digital_seconds_per_call(const Array& a) {
  static std::map<Array, double> cache;
  if (auto it = cache.find(a); it != cache.end()) return it->second;
  const ArrayData& d = array_data(a);
  Macro m(spec_for(MacroKind::digital, a));
  m.write_block(d.w.data(), a.rows, a.outs);
  std::vector<int64_t> y(a.outs);
  const double best = best_seconds_per_call(2000, y.data(), [&] { m.compute(d.x.data(), a.rows, y.data(), a.outs); });
  return cache.emplace(a, best).first->second;
}

void BM_Int8GemvFast(benchmark::State& state) {
  const Problem& p = problem();
  std::vector<int32_t> y(p.n);
  for (auto _ : state) {
    kvcim::cmodel::quant::gemv(fast_matrix(), p.x8.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(kvcim::cmodel::quant::name(kvcim::cmodel::quant::best_kernel()));
  state.counters["vs_int8_gemv"] =
      fast_gemv_seconds_per_call() / gemv_seconds_per_call();
}

void BM_MacroDigital(benchmark::State& s) { run_macro(s, MacroKind::digital, false); }
void BM_MacroAnalog(benchmark::State& s) { run_macro(s, MacroKind::analog, false); }
void BM_MacroAnalog2BitCells(benchmark::State& s) { run_macro(s, MacroKind::analog, false, 2); }
void BM_MacroAnalogNoisy(benchmark::State& s) { run_macro(s, MacroKind::analog, false, 1, 0.3); }
// The two noises apart: programmed cell deviations only, read noise only.
void BM_MacroAnalogCellNoise(benchmark::State& s) { run_macro(s, MacroKind::analog, false, 1, 0.3, 0.0); }
void BM_MacroAnalogReadNoise(benchmark::State& s) { run_macro(s, MacroKind::analog, false, 1, 0.0, 0.3); }
// The same three on the exact noise model (docs/cim_macro.md, "Noise models"); the ones above run
// the default fixed model. Read noise alone at an ADC step of one level is the rounded noise in both.
void BM_MacroAnalogNoisyExact(benchmark::State& s) {
  run_macro(s, MacroKind::analog, false, 1, 0.3, -1.0, NoiseModel::exact);
}
void BM_MacroAnalogCellNoiseExact(benchmark::State& s) {
  run_macro(s, MacroKind::analog, false, 1, 0.3, 0.0, NoiseModel::exact);
}
void BM_MacroAnalogReadNoiseExact(benchmark::State& s) {
  run_macro(s, MacroKind::analog, false, 1, 0.0, 0.3, NoiseModel::exact);
}
// The shipped analog macro's array (shipped_array): the digital macro, noise-free, both noises
// (sigma 0.3, as above), each alone.
void BM_MacroDigitalShipped(benchmark::State& s) {
  run_macro(s, MacroKind::digital, false, 1, 0.0, -1.0, NoiseModel::fixed, shipped_array());
}
void BM_MacroAnalogShipped(benchmark::State& s) {
  run_macro(s, MacroKind::analog, false, 1, 0.0, -1.0, NoiseModel::fixed, shipped_array());
}
void BM_MacroAnalogNoisyShipped(benchmark::State& s) {
  run_macro(s, MacroKind::analog, false, 1, 0.3, -1.0, NoiseModel::fixed, shipped_array());
}
void BM_MacroAnalogCellNoiseShipped(benchmark::State& s) {
  run_macro(s, MacroKind::analog, false, 1, 0.3, 0.0, NoiseModel::fixed, shipped_array());
}
void BM_MacroAnalogReadNoiseShipped(benchmark::State& s) {
  run_macro(s, MacroKind::analog, false, 1, 0.0, 0.3, NoiseModel::fixed, shipped_array());
}
// Cell noise with two macros computed in turn: the fixed model's subset sums are one table per
// thread, built again for every call here (Macro::subset_table).
void BM_MacroAnalogCellNoiseAlternating(benchmark::State& s) {
  run_macro(s, MacroKind::analog, false, 1, 0.3, 0.0, NoiseModel::fixed, square_array(), true);
}
void BM_MacroAnalogCellNoiseShippedAlternating(benchmark::State& s) {
  run_macro(s, MacroKind::analog, false, 1, 0.3, 0.0, NoiseModel::fixed, shipped_array(), true);
}
void BM_MacroDigitalReference(benchmark::State& s) { run_macro(s, MacroKind::digital, true); }
void BM_MacroAnalogReference(benchmark::State& s) { run_macro(s, MacroKind::analog, true); }

}  // namespace

BENCHMARK(BM_Int8Gemv);
BENCHMARK(BM_Int8GemvFast);
BENCHMARK(BM_MacroDigital);
BENCHMARK(BM_MacroAnalog);
BENCHMARK(BM_MacroAnalog2BitCells);
BENCHMARK(BM_MacroAnalogNoisy);
BENCHMARK(BM_MacroAnalogCellNoise);
BENCHMARK(BM_MacroAnalogReadNoise);
BENCHMARK(BM_MacroAnalogNoisyExact);
BENCHMARK(BM_MacroAnalogCellNoiseExact);
BENCHMARK(BM_MacroAnalogReadNoiseExact);
BENCHMARK(BM_MacroDigitalShipped);
BENCHMARK(BM_MacroAnalogShipped);
BENCHMARK(BM_MacroAnalogNoisyShipped);
BENCHMARK(BM_MacroAnalogCellNoiseShipped);
BENCHMARK(BM_MacroAnalogReadNoiseShipped);
BENCHMARK(BM_MacroAnalogCellNoiseAlternating);
BENCHMARK(BM_MacroAnalogCellNoiseShippedAlternating);
BENCHMARK(BM_MacroDigitalReference)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MacroAnalogReference)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  apply_kernel_cap();  // a bad KVCIM_MACRO_KERNEL stops here, before any benchmark runs
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
