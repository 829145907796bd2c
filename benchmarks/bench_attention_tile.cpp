// The attention-tile C model: one query over n tokens (K macro, fixed-point softmax, V macro), an
// append, and the softmax unit alone. Reports queries per second and, as a ratio measured in the
// same run, the tile query's time over a plain float softmax attention on the same integers
// (`vs_float_attention`).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "kvcim/cmodel/cim/attention_tile.hpp"

using namespace kvcim::cmodel::cim;

namespace {

struct Problem {
  std::vector<std::vector<int8_t>> k, v;
  std::vector<int> ek, ev;
  std::vector<int8_t> q;
  QueryScale scale{40000, -24};
};

Problem make(int n) {
  const TileParams p;
  std::mt19937_64 rng(n);
  std::uniform_int_distribution<int> d(-128, 127);
  Problem pr;
  pr.k.assign(n, std::vector<int8_t>(p.head_dim));
  pr.v.assign(n, std::vector<int8_t>(p.head_dim));
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < p.head_dim; ++i) {
      pr.k[t][i] = static_cast<int8_t>(d(rng));
      pr.v[t][i] = static_cast<int8_t>(d(rng));
    }
  pr.ek.assign(n, -7);
  pr.ev.assign(n, -6);
  pr.q.resize(p.head_dim);
  for (int8_t& x : pr.q) x = static_cast<int8_t>(d(rng));
  return pr;
}

// Float softmax attention on the same integers, the baseline of the ratio.
double float_attention(const Problem& pr, std::vector<float>& out) {
  const size_t n = pr.k.size(), dim = pr.q.size();
  std::vector<float> s(n);
  float m = -INFINITY;
  for (size_t t = 0; t < n; ++t) {
    float acc = 0;
    for (size_t i = 0; i < dim; ++i) acc += float(pr.q[i]) * float(pr.k[t][i]);
    s[t] = std::ldexp(acc * pr.scale.qmul, pr.scale.qexp + pr.ek[t]);
    m = std::max(m, s[t]);
  }
  float sum = 0;
  for (float& x : s) sum += x = std::exp2(x - m);
  out.assign(dim, 0.f);
  for (size_t t = 0; t < n; ++t)
    for (size_t i = 0; i < dim; ++i) out[i] += s[t] / sum * std::ldexp(float(pr.v[t][i]), pr.ev[t]);
  return out[0];
}

void BM_TileQuery(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Problem pr = make(n);
  CModelTile tile;
  for (int t = 0; t < n; ++t) tile.append(pr.k[t], pr.v[t], pr.ek[t], pr.ev[t]);
  for (auto _ : state) benchmark::DoNotOptimize(tile.query(pr.q, pr.scale));
  state.counters["queries/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  // the float baseline, timed here so the ratio comes from one run
  std::vector<float> out;
  const int reps = 2000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) benchmark::DoNotOptimize(float_attention(pr, out));
  const double base = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  const auto t1 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps / 10; ++r) benchmark::DoNotOptimize(tile.query(pr.q, pr.scale));
  const double tq = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() / (reps / 10);
  state.counters["vs_float_attention"] = tq / base;
}
BENCHMARK(BM_TileQuery)->Arg(1)->Arg(16)->Arg(64);

void BM_TileAppend(benchmark::State& state) {
  const Problem pr = make(64);
  CModelTile tile;
  int t = 0;
  for (auto _ : state) {
    if (t == 64) {
      tile.reset();
      t = 0;
    }
    tile.append(pr.k[t], pr.v[t], pr.ek[t], pr.ev[t]);
    ++t;
  }
  state.counters["appends/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TileAppend);

void BM_SoftmaxUnit(benchmark::State& state) {
  const TileParams p;
  const int n = static_cast<int>(state.range(0));
  std::mt19937_64 rng(1);
  std::vector<int64_t> s(n);
  for (auto& x : s) x = std::uniform_int_distribution<int64_t>(-100000, 100000)(rng);
  const std::vector<int> ek(n, -7), ev(n, -6);
  const std::vector<uint32_t> lut = exp_lut(p.exp_frac);
  SoftmaxEvents e;
  for (auto _ : state) benchmark::DoNotOptimize(softmax_fixed(p, s, ek, ev, QueryScale{40000, -24}, lut, e));
  state.counters["tokens/s"] = benchmark::Counter(double(state.iterations()) * n, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SoftmaxUnit)->Arg(64);

// The analog tile (the shipped gain_cell_kv parameters: 16-level cells, 10-bit calibrated ADCs,
// cell and read noise): a decode of 64 tokens (append, then a query over all held) against the
// digital tile doing the same; `vs_digital` is the time ratio measured in the same run.
TileParams gain_cell_params() {
  TileParams p;
  p.kind = TileKind::analog;
  p.cell_bits = 4;
  p.adc_bits = 10;
  p.adc_range = kvcim::cmodel::cim::AdcRange::calibrated;
  p.adc_clip = 0.125;
  p.out_adc_clip = 0.25;
  p.cell_noise_sigma = 0.05;
  p.read_noise_sigma = 0.001;
  return p;
}
double decode64(AttentionTile& tile, const Problem& pr) {
  tile.reset();
  double acc = 0;
  for (int t = 0; t < 64; ++t) {
    tile.append(pr.k[t], pr.v[t], pr.ek[t], pr.ev[t]);
    acc += tile.query(pr.q, pr.scale).o[0];
  }
  return acc;
}
void BM_AnalogTileDecode64(benchmark::State& state) {
  const Problem pr = make(64);
  const auto analog = make_tile(gain_cell_params());
  for (auto _ : state) benchmark::DoNotOptimize(decode64(*analog, pr));
  state.counters["decodes/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  CModelTile digital;
  const int reps = 200;
  auto time = [&](AttentionTile& t) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) benchmark::DoNotOptimize(decode64(t, pr));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const double td = time(digital), ta = time(*analog);
  state.counters["vs_digital"] = ta / td;
}
BENCHMARK(BM_AnalogTileDecode64);

}  // namespace

BENCHMARK_MAIN();
