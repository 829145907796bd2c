// Decode speed against the memory-bandwidth limit, and the int8 path against float
// (docs/performance.md, summary rows 1 and 2).
//
//   BM_StreamCopy / BM_StreamRead  single-thread memory bandwidth over arrays far beyond the LLC
//                                  (copy counts read + write bytes, the STREAM convention)
//   BM_DecodeFloat/<shape>         the float reference forward pass (Model), one token per
//                                  iteration at positions 0..63; vs_stream = CPU time per token /
//                                  (weight bytes / copy bandwidth), target <= 1.5 on stories110M
//   BM_DecodeInt8/<shape>          the same tokens through Int8Backend; speedup_vs_float = float
//                                  CPU time per token / int8 CPU time per token, target >= 2.5
//   BM_DecodeFloatLongContext/...  tokens at the last 64 positions of the context (the KV cache
//                                  filled with random K/V first): the attention's share
//   BM_Gemv*                       one matrix of the 110M shape (w1, 2048 x 768), float vs int8
//                                  kernels, weights resident in cache (compute, not memory, bound)
//   BM_GemvInt8Streamed/<kernel>   a 256 MiB int8 matrix: the kernel's bandwidth from DRAM
//
// Shapes: random weights (cmodel::random_weights) of stories15M and stories110M built in memory,
// and the embedded stories260K. Times used in ratios are this thread's CPU time (the machine is
// shared; wall time would charge other processes' load). KVCIM_BENCH_SMOKE=1 keeps only the
// embedded model and small arrays, so that the CTest smoke run stays cheap.
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kvcim/mapper/shape.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/int8_backend.hpp"
#include "kvcim/cmodel/quant/int8_gemv.hpp"
#include "kvcim/cmodel/transformer.hpp"

using namespace kvcim::cmodel;

namespace {

bool smoke() { return std::getenv("KVCIM_BENCH_SMOKE") != nullptr; }

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// ---- memory bandwidth -----------------------------------------------------------------------

// 256 MiB per array: more than twice the 105 MiB LLC of the reference machine. Smoke: 4 MiB.
size_t stream_bytes() { return smoke() ? (size_t{4} << 20) : (size_t{256} << 20); }

struct StreamArrays {
  std::vector<float> a, b;
  StreamArrays() : a(stream_bytes() / 4, 1.0f), b(stream_bytes() / 4, 2.0f) {}
};
StreamArrays& arrays() {
  static StreamArrays s;
  return s;
}

// STREAM "copy" b = a: 2 x bytes moved per call (read a, write b).
void stream_copy(StreamArrays& s) { std::memcpy(s.b.data(), s.a.data(), s.a.size() * 4); }

// A read-only pass (sum): the bandwidth a GEMV that streams its weights could reach at best.
float stream_read(const StreamArrays& s) {
  return Eigen::Map<const Vector>(s.a.data(), static_cast<Eigen::Index>(s.a.size())).sum();
}

// The copy bandwidth the ratios use (bytes/s, STREAM convention), the best of five copies,
// measured once per process.
double copy_bandwidth() {
  static const double bw = [] {
    StreamArrays& s = arrays();
    stream_copy(s);  // first touch
    double best = 1e30;
    for (int i = 0; i < 5; ++i) {
      const double t0 = thread_cpu_seconds();
      stream_copy(s);
      benchmark::ClobberMemory();
      best = std::min(best, thread_cpu_seconds() - t0);
    }
    return 2.0 * static_cast<double>(stream_bytes()) / best;
  }();
  return bw;
}

void BM_StreamCopy(benchmark::State& state) {
  StreamArrays& s = arrays();
  for (auto _ : state) {
    stream_copy(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * stream_bytes());
  state.counters["copy_GBps_used_in_ratios"] = copy_bandwidth() / 1e9;
}

void BM_StreamRead(benchmark::State& state) {
  StreamArrays& s = arrays();
  for (auto _ : state) benchmark::DoNotOptimize(stream_read(s));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * stream_bytes());
}

// ---- models ---------------------------------------------------------------------------------

enum ShapeId { kEmbedded, k15M, k110M };
const char* shape_name(int id) {
  return id == kEmbedded ? "stories260K" : id == k15M ? "stories15M" : "stories110M";
}

Config shape_config(int id) {
  Config c;
  if (id == k15M) c = kvcim::mapper::shape_preset("stories15m").config;
  if (id == k110M) c = kvcim::mapper::shape_preset("stories110m").config;
  return c;
}

// Built once per process: random weights of the shape, or the embedded checkpoint.
Model& model(int id) {
  static std::map<int, std::unique_ptr<Model>> models;
  auto& m = models[id];
  if (!m) {
    if (id == kEmbedded) {
      m = std::make_unique<Model>(read_checkpoint(default_model_path()));
    } else {
      Checkpoint ck;
      ck.config = shape_config(id);
      ck.weights = random_weights(ck.config, 1234 + id);
      ck.path = std::string("random:") + shape_name(id);
      m = std::make_unique<Model>(std::move(ck));
    }
  }
  return *m;
}

Int8Backend& int8_backend(int id, quant::GemvKernel kernel = quant::best_kernel()) {
  static std::map<std::pair<int, quant::GemvKernel>, std::unique_ptr<Int8Backend>> backends;
  auto& b = backends[{id, kernel}];
  if (!b) b = std::make_unique<Int8Backend>(model(id).config(), model(id).weights(), 8, 8, kernel);
  return *b;
}

int64_t float_weight_bytes(const Config& c) { return c.parameter_count() * 4; }

constexpr int kPositions = 64;  // one decode cycle: positions 0..63, then a new sequence
int token_at(int pos, const Config& c) { return (pos * 7919 + 1) % c.vocab_size; }

// The best float CPU time per token seen so far per shape (BM_DecodeFloat records it), so that
// BM_DecodeInt8 can form its ratio in the same process.
std::map<int, double>& float_seconds() {
  static std::map<int, double> m;
  return m;
}

double measure_float_seconds_per_token(int id) {
  Model& m = model(id);
  const double t0 = thread_cpu_seconds();
  for (int pos = 0; pos < kPositions; ++pos) benchmark::DoNotOptimize(m.forward(token_at(pos, m.config()), pos).data());
  return (thread_cpu_seconds() - t0) / kPositions;
}

void BM_DecodeFloat(benchmark::State& state, int id) {
  Model& m = model(id);
  int pos = 0;
  double cpu = 0;
  for (auto _ : state) {
    const double t0 = thread_cpu_seconds();
    benchmark::DoNotOptimize(m.forward(token_at(pos, m.config()), pos).data());
    cpu += thread_cpu_seconds() - t0;
    pos = (pos + 1) % kPositions;
  }
  const double per_token = cpu / static_cast<double>(state.iterations());
  auto& best = float_seconds()[id];
  best = best > 0 ? std::min(best, per_token) : per_token;
  const double bytes = static_cast<double>(float_weight_bytes(m.config()));
  state.counters["weight_MB"] = bytes / 1e6;
  state.counters["cpu_ms_per_token"] = per_token * 1e3;
  state.counters["stream_ms"] = bytes / copy_bandwidth() * 1e3;
  state.counters["vs_stream"] = per_token / (bytes / copy_bandwidth());
  state.counters["weight_GBps"] = bytes / per_token / 1e9;
}

// The int8 decode with the best kernel of this CPU, or (BM_DecodeInt8Kernel) with a chosen one:
// what a CPU without VNNI (AVX-512 F/BW: avx512bw) or without AVX-512 (avx2) runs, timed here.
void decode_int8(benchmark::State& state, int id, quant::GemvKernel kernel) {
  if (!quant::kernel_available(kernel)) {
    state.SkipWithError("kernel not available on this CPU");
    return;
  }
  Model& m = model(id);
  Int8Backend& be = int8_backend(id, kernel);
  RunState s(m.config());
  int pos = 0;
  double cpu = 0;
  for (auto _ : state) {
    if (pos == 0) be.reset();
    const double t0 = thread_cpu_seconds();
    benchmark::DoNotOptimize(
        forward(m.config(), m.weights(), s, be, token_at(pos, m.config()), pos).data());
    cpu += thread_cpu_seconds() - t0;
    pos = (pos + 1) % kPositions;
  }
  const double per_token = cpu / static_cast<double>(state.iterations());
  if (float_seconds()[id] == 0) float_seconds()[id] = measure_float_seconds_per_token(id);
  const double bytes = static_cast<double>(be.weight_bytes());
  state.SetLabel(quant::name(kernel));
  state.counters["weight_MB"] = bytes / 1e6;
  state.counters["cpu_ms_per_token"] = per_token * 1e3;
  state.counters["speedup_vs_float"] = float_seconds()[id] / per_token;
  state.counters["vs_stream"] = per_token / (bytes / copy_bandwidth());
}

void BM_DecodeInt8(benchmark::State& state, int id) { decode_int8(state, id, quant::best_kernel()); }

// Tokens at positions seq_len-64 .. seq_len-1: the cache is filled with random K/V up to there
// (outside the timed region), then each iteration decodes one token over the full context.
void BM_DecodeFloatLongContext(benchmark::State& state, int id) {
  Model& m = model(id);
  const Config& c = m.config();
  const int first = std::max(0, c.seq_len - kPositions);
  ReferenceBackend be(c, m.weights());
  RunState s(c);
  std::mt19937 g(5);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> k(c.kv_dim()), v(c.kv_dim());
  auto refill = [&] {
    be.cache().reset();
    for (int p = 0; p < first; ++p)
      for (int l = 0; l < c.n_layers; ++l) {
        for (auto& x : k) x = d(g);
        for (auto& x : v) x = d(g);
        be.write_kv(l, p, k.data(), v.data());
      }
  };
  refill();
  int pos = first;
  double cpu = 0;
  for (auto _ : state) {
    if (pos == c.seq_len) {
      state.PauseTiming();
      refill();
      pos = first;
      state.ResumeTiming();
    }
    const double t0 = thread_cpu_seconds();
    benchmark::DoNotOptimize(forward(c, m.weights(), s, be, token_at(pos, c), pos).data());
    cpu += thread_cpu_seconds() - t0;
    ++pos;
  }
  const double per_token = cpu / static_cast<double>(state.iterations());
  const double weights = static_cast<double>(float_weight_bytes(c));
  const double kv = static_cast<double>(KvCache::bytes_per_token(c, 4)) * (first + kPositions / 2);
  state.counters["cpu_ms_per_token"] = per_token * 1e3;
  state.counters["kv_MB_read"] = kv / 1e6;
  state.counters["vs_stream_weights_and_kv"] = per_token / ((weights + kv) / copy_bandwidth());
}

// ---- one matrix: float vs int8 kernels ------------------------------------------------------

struct GemvProblem {
  Matrix w;
  Vector x;
  std::vector<float> xf;
  std::unique_ptr<quant::Int8Linear> lin;
};
GemvProblem& gemv_problem() {
  static GemvProblem p = [] {
    GemvProblem q;
    const int rows = smoke() ? 256 : 2048, cols = smoke() ? 64 : 768;
    std::mt19937 g(9);
    std::normal_distribution<float> d(0.0f, 1.0f);
    q.w.resize(rows, cols);
    for (int64_t i = 0; i < q.w.size(); ++i) q.w.data()[i] = d(g);
    q.x.resize(cols);
    for (int i = 0; i < cols; ++i) q.x[i] = d(g);
    q.lin = std::make_unique<quant::Int8Linear>(q.w, 8, 8);
    return q;
  }();
  return p;
}

void BM_GemvFloat(benchmark::State& state) {
  GemvProblem& p = gemv_problem();
  Vector y(p.w.rows());
  for (auto _ : state) {
    y.noalias() = p.w * p.x;
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * p.w.size() * 4);
  state.counters["macs"] =
      benchmark::Counter(static_cast<double>(p.w.size()) * state.iterations(), benchmark::Counter::kIsRate);
}

// One kernel's integer GEMV alone (codes in, int32 out): the part a CIM macro replaces.
void BM_GemvInt8(benchmark::State& state, quant::GemvKernel kernel) {
  if (!quant::kernel_available(kernel)) {
    state.SkipWithError("kernel not available on this CPU");
    return;
  }
  GemvProblem& p = gemv_problem();
  const quant::Int8Matrix& m = p.lin->matrix();
  const quant::QuantizedVector xq = quant::quantize_activation(p.x.data(), m.cols(), 8);
  std::vector<int32_t> acc(m.rows());
  for (auto _ : state) {
    quant::gemv(m, xq.q.data(), acc.data(), kernel);
    benchmark::DoNotOptimize(acc.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * m.rows() * m.stride());
  state.counters["macs"] = benchmark::Counter(static_cast<double>(m.rows()) * m.cols() * state.iterations(),
                                              benchmark::Counter::kIsRate);
}

// One int8 matrix far beyond the LLC (256 MiB, rows of 768 codes): the bandwidth a kernel
// streams weights from DRAM with, beside BM_StreamCopy / BM_StreamRead. Smoke: 4 MiB.
void BM_GemvInt8Streamed(benchmark::State& state, quant::GemvKernel kernel) {
  if (!quant::kernel_available(kernel)) {
    state.SkipWithError("kernel not available on this CPU");
    return;
  }
  const int cols = 768;
  const int rows = static_cast<int>(stream_bytes() / cols);
  quant::Int8Matrix m = [&] {
    quant::QuantizedMatrix q;
    q.rows = rows;
    q.cols = cols;
    q.q.resize(static_cast<size_t>(rows) * cols);
    for (size_t i = 0; i < q.q.size(); ++i) q.q[i] = static_cast<int8_t>(i * 2654435761u >> 24);
    q.scale.assign(rows, 1.0f);
    return quant::Int8Matrix(q);
  }();
  std::vector<int8_t> x(cols);
  for (int i = 0; i < cols; ++i) x[i] = static_cast<int8_t>(i * 37);
  std::vector<int32_t> acc(rows);
  double cpu = 0;
  for (auto _ : state) {
    const double t0 = thread_cpu_seconds();
    quant::gemv(m, x.data(), acc.data(), kernel);
    benchmark::DoNotOptimize(acc.data());
    cpu += thread_cpu_seconds() - t0;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * m.rows() * m.stride());
  state.counters["cpu_GBps"] =
      static_cast<double>(m.rows()) * m.stride() * static_cast<double>(state.iterations()) / cpu / 1e9;
}

// The whole quantised linear layer: quantise x, GEMV, dequantise.
void BM_LinearInt8(benchmark::State& state) {
  GemvProblem& p = gemv_problem();
  std::vector<float> y(p.w.rows());
  for (auto _ : state) {
    p.lin->apply(p.x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(quant::name(p.lin->kernel()));
}

void register_all() {
  using benchmark::RegisterBenchmark;
  RegisterBenchmark("BM_StreamCopy", BM_StreamCopy)->Unit(benchmark::kMillisecond);
  RegisterBenchmark("BM_StreamRead", BM_StreamRead)->Unit(benchmark::kMillisecond);
  std::vector<int> shapes = {kEmbedded};
  if (!smoke()) shapes = {kEmbedded, k15M, k110M};
  for (int id : shapes) {
    const std::string n = shape_name(id);
    RegisterBenchmark(("BM_DecodeFloat/" + n).c_str(), BM_DecodeFloat, id)->Unit(benchmark::kMillisecond);
    RegisterBenchmark(("BM_DecodeInt8/" + n).c_str(), BM_DecodeInt8, id)->Unit(benchmark::kMillisecond);
  }
  if (!smoke())
    for (int id : {k15M, k110M})
      for (auto k : {quant::GemvKernel::avx2, quant::GemvKernel::avx512bw, quant::GemvKernel::avx512_vnni})
        RegisterBenchmark((std::string("BM_DecodeInt8Kernel/") + shape_name(id) + "/" + quant::name(k)).c_str(),
                          decode_int8, id, k)
            ->Unit(benchmark::kMillisecond);
  if (!smoke())
    RegisterBenchmark("BM_DecodeFloatLongContext/stories110M", BM_DecodeFloatLongContext, int{k110M})
        ->Unit(benchmark::kMillisecond);
  RegisterBenchmark("BM_GemvFloat", BM_GemvFloat)->Unit(benchmark::kMicrosecond);
  for (auto k : {quant::GemvKernel::portable, quant::GemvKernel::avx2, quant::GemvKernel::avx512bw,
                 quant::GemvKernel::avx512_vnni})
    RegisterBenchmark((std::string("BM_GemvInt8/") + quant::name(k)).c_str(), BM_GemvInt8, k)
        ->Unit(benchmark::kMicrosecond);
  RegisterBenchmark("BM_LinearInt8", BM_LinearInt8)->Unit(benchmark::kMicrosecond);
  for (auto k : {quant::GemvKernel::avx2, quant::GemvKernel::avx512bw, quant::GemvKernel::avx512_vnni})
    RegisterBenchmark((std::string("BM_GemvInt8Streamed/") + quant::name(k)).c_str(),
                      BM_GemvInt8Streamed, k)
        ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
