#include "kvcim/cmodel/gemv.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define KVCIM_GEMV_X86 1
#endif

namespace kvcim::cmodel {

namespace {

// ---- kernels: the same order of operations for every row, in both -----------------------

// Portable: the AVX2 kernel's order spelled out lane by lane.
void rows_portable(const float* W, int64_t ld, const float* x, int n, float* y, int rows) {
  for (int r = 0; r < rows; ++r) {
    const float* w = W + r * ld;
    float a0[8] = {}, a1[8] = {};
    int j = 0;
    for (; j + 16 <= n; j += 16)
      for (int i = 0; i < 8; ++i) {
        a0[i] = std::fma(w[j + i], x[j + i], a0[i]);
        a1[i] = std::fma(w[j + 8 + i], x[j + 8 + i], a1[i]);
      }
    if (j + 8 <= n) {
      for (int i = 0; i < 8; ++i) a0[i] = std::fma(w[j + i], x[j + i], a0[i]);
      j += 8;
    }
    float s[8], h[4];
    for (int i = 0; i < 8; ++i) s[i] = a0[i] + a1[i];
    for (int i = 0; i < 4; ++i) h[i] = s[i] + s[i + 4];
    const float h0 = h[0] + h[2], h1 = h[1] + h[3];
    float v = h0 + h1;
    for (; j < n; ++j) v = std::fma(w[j], x[j], v);
    y[r] = v;
  }
}

#ifdef KVCIM_GEMV_X86
// The AVX2 kernel: R rows against NX inputs X + t * xs, each (row, input) pair's dot product in
// the order of the header (the portable kernel's, lane by lane), so a pair's float does not
// depend on R or NX; a step's weights are loaded once for the NX inputs and its inputs once for
// the R rows (one row and one input at a time, two loads feed each FMA).
template <int R, int NX>
__attribute__((target("avx2,fma"))) inline void tile_avx2(const float* W, int64_t ld, const float* X, int64_t xs,
                                                          int n, float* Y, int64_t ys) {
  __m256 a0[R][NX], a1[R][NX];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NX; ++t) a0[r][t] = a1[r][t] = _mm256_setzero_ps();
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    __m256 x0[NX], x1[NX];
    for (int t = 0; t < NX; ++t) {
      x0[t] = _mm256_loadu_ps(X + t * xs + j);
      x1[t] = _mm256_loadu_ps(X + t * xs + j + 8);
    }
    for (int r = 0; r < R; ++r) {
      const __m256 w0 = _mm256_loadu_ps(W + r * ld + j), w1 = _mm256_loadu_ps(W + r * ld + j + 8);
      for (int t = 0; t < NX; ++t) {
        a0[r][t] = _mm256_fmadd_ps(w0, x0[t], a0[r][t]);
        a1[r][t] = _mm256_fmadd_ps(w1, x1[t], a1[r][t]);
      }
    }
  }
  const int tail = j;
  if (j + 8 <= n)
    for (int r = 0; r < R; ++r) {
      const __m256 w0 = _mm256_loadu_ps(W + r * ld + j);
      for (int t = 0; t < NX; ++t) a0[r][t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(X + t * xs + j), a0[r][t]);
    }
  const int rest = j + 8 <= n ? j + 8 : tail;
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < NX; ++t) {
      const __m256 s = _mm256_add_ps(a0[r][t], a1[r][t]);
      __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
      h = _mm_add_ps(h, _mm_movehl_ps(h, h));
      h = _mm_add_ss(h, _mm_movehdup_ps(h));
      for (int k = rest; k < n; ++k) h = _mm_fmadd_ss(_mm_set_ss(W[r * ld + k]), _mm_set_ss(X[t * xs + k]), h);
      Y[t * ys + r] = _mm_cvtss_f32(h);
    }
}

__attribute__((target("avx2,fma"))) void block_avx2(const float* W, int64_t ld, const float* x,
                                                    int n, float* y, int rows) {
  // One row at a time: measured faster than 2 or 4 interleaved rows here (memory-bound rows
  // stream best one after the other).
  for (int r = 0; r < rows; ++r) tile_avx2<1, 1>(W + r * ld, ld, x, 0, n, y + r, 0);
}

// The rows against every input, two rows by two inputs at a time (8 accumulators, 4 input and 2
// weight vectors: within AVX2's 16 registers), the odd row and input alone.
__attribute__((target("avx2,fma"))) void block_inputs_avx2(const float* W, int64_t ld, const float* X, int64_t xs,
                                                           int nx, int n, float* Y, int64_t ys, int rows) {
  int r = 0;
  for (; r + 2 <= rows; r += 2) {
    int t = 0;
    for (; t + 2 <= nx; t += 2) tile_avx2<2, 2>(W + r * ld, ld, X + t * xs, xs, n, Y + t * ys + r, ys);
    if (t < nx) tile_avx2<2, 1>(W + r * ld, ld, X + t * xs, xs, n, Y + t * ys + r, ys);
  }
  if (r < rows) {
    int t = 0;
    for (; t + 2 <= nx; t += 2) tile_avx2<1, 2>(W + r * ld, ld, X + t * xs, xs, n, Y + t * ys + r, ys);
    if (t < nx) tile_avx2<1, 1>(W + r * ld, ld, X + t * xs, xs, n, Y + t * ys + r, ys);
  }
}

bool have_avx2() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}
#endif

void block(const float* W, int64_t ld, const float* x, int n, float* y, int rows) {
#ifdef KVCIM_GEMV_X86
  if (have_avx2()) return block_avx2(W, ld, x, n, y, rows);
#endif
  rows_portable(W, ld, x, n, y, rows);
}

// ---- attention ----------------------------------------------------------------------------

#ifdef KVCIM_GEMV_X86
__attribute__((target("avx2,fma"))) inline float hsum8(__m256 s) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// One key's 8-lane partial products with q over `blocks` blocks of 8 floats. (A function with
// the target attribute, not a lambda: a lambda in a target function does not inherit the target.)
__attribute__((target("avx2,fma"))) inline __m256 key_products(const float* q, const float* k, int blocks) {
  __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(q), _mm256_loadu_ps(k));
  for (int b = 1; b < blocks; ++b) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8 * b), _mm256_loadu_ps(k + 8 * b), acc);
  return acc;
}

// The eight horizontal sums of p[0..7] as one vector (lane j: the sum of p[j]'s lanes).
__attribute__((target("avx2,fma"))) inline __m256 hsum8x8(const __m256* p) {
  const __m256 s01 = _mm256_hadd_ps(p[0], p[1]), s23 = _mm256_hadd_ps(p[2], p[3]);
  const __m256 s45 = _mm256_hadd_ps(p[4], p[5]), s67 = _mm256_hadd_ps(p[6], p[7]);
  const __m256 s0123 = _mm256_hadd_ps(s01, s23), s4567 = _mm256_hadd_ps(s45, s67);
  // s0123: lane j < 4 the low half of p[j]'s sum, lane 4 + j the high half; likewise s4567
  return _mm256_add_ps(_mm256_permute2f128_ps(s0123, s4567, 0x20), _mm256_permute2f128_ps(s0123, s4567, 0x31));
}

// exp(x) for x <= 0 (softmax after subtracting the maximum): 2^n * p(r), r = x - n ln 2 in
// [-ln2/2, ln2/2], p Cephes' degree-7 polynomial of expf; 0 below -87.
__attribute__((target("avx2,fma"))) inline __m256 exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.0f);
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  x = _mm256_max_ps(x, lo);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

template <int B>  // B = hd / 8 (0: any multiple of 8, accumulated in out)
__attribute__((target("avx2,fma"))) void attend_avx2(const float* q, const float* keys,
                                                     const float* values, int n, int hd,
                                                     float scale, float* att, float* out) {
  const int blocks = B ? B : hd / 8;
  // scores: each key's 8-lane partial products, then eight keys' horizontal sums at once (one
  // horizontal sum per key cost more than its products at small head sizes)
  const __m256 vscale = _mm256_set1_ps(scale);
  int t0 = 0;
  for (; t0 + 8 <= n; t0 += 8) {
    __m256 p[8];
    for (int j = 0; j < 8; ++j) p[j] = key_products(q, keys + static_cast<int64_t>(t0 + j) * hd, blocks);
    _mm256_storeu_ps(att + t0, _mm256_mul_ps(hsum8x8(p), vscale));
  }
  for (; t0 < n; ++t0) att[t0] = hsum8(key_products(q, keys + static_cast<int64_t>(t0) * hd, blocks)) * scale;
  // softmax: the maximum, exp and sum 8 lanes wide, the tail in one padded vector
  float mx = att[0];
  for (int t = 1; t < n; ++t) mx = std::max(mx, att[t]);
  const __m256 vmax = _mm256_set1_ps(mx);
  __m256 vsum = _mm256_setzero_ps();
  int t = 0;
  for (; t + 8 <= n; t += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(att + t), vmax));
    _mm256_storeu_ps(att + t, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  if (t < n) {
    alignas(32) float tail[8];
    for (int i = 0; i < 8; ++i) tail[i] = t + i < n ? att[t + i] : -1e30f;
    const __m256 e = exp8(_mm256_sub_ps(_mm256_load_ps(tail), vmax));
    _mm256_store_ps(tail, e);
    for (int i = 0; t + i < n; ++i) att[t + i] = tail[i];
    vsum = _mm256_add_ps(vsum, e);  // lanes beyond n are exactly 0
  }
  const __m256 vs = _mm256_set1_ps(hsum8(vsum));
  for (t = 0; t + 8 <= n; t += 8) _mm256_storeu_ps(att + t, _mm256_div_ps(_mm256_loadu_ps(att + t), vs));
  const float sum = _mm_cvtss_f32(_mm256_castps256_ps128(vs));
  for (; t < n; ++t) att[t] /= sum;
  // weighted sum of values
  if constexpr (B > 0) {
    // R interleaved sums (positions u % R) where a head has few blocks, so that consecutive
    // fused multiply-adds do not wait on each other's result
    constexpr int R = B >= 4 ? 1 : 4 / B;
    __m256 acc[R][B];
    for (int r = 0; r < R; ++r)
      for (int b = 0; b < B; ++b) acc[r][b] = _mm256_setzero_ps();
    int u = 0;
    for (; u + R <= n; u += R)
      for (int r = 0; r < R; ++r) {
        const float* v = values + static_cast<int64_t>(u + r) * hd;
        const __m256 a = _mm256_set1_ps(att[u + r]);
        for (int b = 0; b < B; ++b) acc[r][b] = _mm256_fmadd_ps(a, _mm256_loadu_ps(v + 8 * b), acc[r][b]);
      }
    for (; u < n; ++u) {
      const float* v = values + static_cast<int64_t>(u) * hd;
      const __m256 a = _mm256_set1_ps(att[u]);
      for (int b = 0; b < B; ++b) acc[0][b] = _mm256_fmadd_ps(a, _mm256_loadu_ps(v + 8 * b), acc[0][b]);
    }
    for (int r = 1; r < R; ++r)
      for (int b = 0; b < B; ++b) acc[0][b] = _mm256_add_ps(acc[0][b], acc[r][b]);
    for (int b = 0; b < B; ++b) _mm256_storeu_ps(out + 8 * b, acc[0][b]);
  } else {
    for (int b = 0; b < blocks; ++b) _mm256_storeu_ps(out + 8 * b, _mm256_setzero_ps());
    for (int u = 0; u < n; ++u) {
      const float* v = values + static_cast<int64_t>(u) * hd;
      const __m256 a = _mm256_set1_ps(att[u]);
      for (int b = 0; b < blocks; ++b)
        _mm256_storeu_ps(out + 8 * b, _mm256_fmadd_ps(a, _mm256_loadu_ps(v + 8 * b),
                                                      _mm256_loadu_ps(out + 8 * b)));
    }
  }
}
#endif

// ---- two threads -----------------------------------------------------------------------------

inline void cpu_relax() {
#ifdef KVCIM_GEMV_X86
  _mm_pause();
#endif
}

// One job at a time. state = generation << 32 | next chunk; a thread claims a chunk with a CAS
// on state, so a claim made for an old generation can never succeed on a new one, and the job's
// fields are read only after a successful claim (the caller rewrites them only when every chunk
// of the previous job is finished).
struct Pool {
  std::atomic<uint64_t> state{0};
  std::atomic<int> finished{0};
  RowsFn fn = nullptr;  // the job: fn(ctx, r0, r1) computes rows [r0, r1)
  void* ctx = nullptr;
  int rows = 0, chunk = 0, chunks = 0;

  // Runs chunks of generation `gen` until none is left; returns the number run.
  int work(uint32_t gen) {
    int done = 0;
    uint64_t s = state.load(std::memory_order_acquire);
    for (;;) {
      if (static_cast<uint32_t>(s >> 32) != gen) break;
      const int c = static_cast<int>(s & 0xffffffffu);
      if (c >= chunks) break;
      if (!state.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) continue;
      const int r0 = c * chunk, r1 = std::min(rows, r0 + chunk);
      fn(ctx, r0, r1);
      ++done;
      finished.fetch_add(1, std::memory_order_release);
      s = state.load(std::memory_order_acquire);
    }
    return done;
  }

  void helper() {
    uint64_t seen = state.load(std::memory_order_acquire);
    for (;;) {
      uint64_t s = seen;
      // spin briefly (jobs come in bursts within a decoder step), then sleep on the futex
      for (int i = 0; i < 4000 && (s = state.load(std::memory_order_acquire)) >> 32 == seen >> 32; ++i)
        cpu_relax();
      if (s >> 32 == seen >> 32) {
        state.wait(s, std::memory_order_acquire);
        continue;
      }
      seen = s;
      work(static_cast<uint32_t>(s >> 32));
    }
  }

  void run(RowsFn fn_, void* ctx_, int rows_, int chunk_) {
    fn = fn_, ctx = ctx_, rows = rows_;
    chunk = chunk_ > 0 ? chunk_ : std::max(16, ((rows + 15) / 16 + 3) / 4 * 4);
    chunks = (rows + chunk - 1) / chunk;
    finished.store(0, std::memory_order_relaxed);
    const uint32_t gen = static_cast<uint32_t>(state.load(std::memory_order_relaxed) >> 32) + 1;
    state.store(static_cast<uint64_t>(gen) << 32, std::memory_order_release);
    state.notify_one();
    work(gen);
    while (finished.load(std::memory_order_acquire) != chunks) cpu_relax();
  }
};

Pool& pool() {
  // Never destroyed: the helper thread sleeps on it until the process ends.
  static Pool* p = [] {
    auto* q = new Pool;
    std::thread([q] { q->helper(); }).detach();
    return q;
  }();
  return *p;
}

// KVCIM_THREADS=1 or 2 decides; otherwise 2 unless the machine is already fully busy (1-minute
// load at or above its hardware threads): on an oversubscribed machine a helper thread that is
// not scheduled only adds waiting. The load counts this process's own earlier work too, so the
// bar is "every hardware thread busy", not "one idle". Results do not depend on the choice.
int default_threads() {
  const char* env = std::getenv("KVCIM_THREADS");
  if (env && std::strcmp(env, "1") == 0) return 1;
  if (env && std::strcmp(env, "2") == 0) return 2;
  const unsigned hw = std::thread::hardware_concurrency();
  if (hw < 2) return 1;
  double load[1] = {0.0};
  if (getloadavg(load, 1) == 1 && load[0] >= hw) return 1;
  return 2;
}
std::atomic<int> g_threads{default_threads()};
std::atomic<int64_t> g_parallel_min{65536};
std::atomic_flag g_busy = ATOMIC_FLAG_INIT;  // one job in the pool at a time; others run serially

}  // namespace

void gemv_f32_serial(const float* W, int64_t ld, const float* x, float* y, int rows, int cols) {
  block(W, ld, x, cols, y, rows);
}

void gemv_f32_inputs(const float* W, int64_t ld, const float* X, int64_t x_stride, int n_inputs, float* Y,
                     int64_t y_stride, int rows, int cols) {
#ifdef KVCIM_GEMV_X86
  // (one input: the GEMV's rows one after the other, which stream best from memory)
  if (have_avx2() && n_inputs > 1) return block_inputs_avx2(W, ld, X, x_stride, n_inputs, cols, Y, y_stride, rows);
#endif
  for (int t = 0; t < n_inputs; ++t) block(W, ld, X + t * x_stride, cols, Y + t * y_stride, rows);
}

void parallel_rows(int rows, int64_t elements, RowsFn fn, void* ctx, int chunk) {
  if (rows <= 0) return;
  if (g_threads.load(std::memory_order_relaxed) < 2 ||
      elements < g_parallel_min.load(std::memory_order_relaxed) || rows < (chunk > 0 ? 2 : 32))
    return fn(ctx, 0, rows);
  if (g_busy.test_and_set(std::memory_order_acquire)) return fn(ctx, 0, rows);
  pool().run(fn, ctx, rows, chunk);
  g_busy.clear(std::memory_order_release);
}

void gemv_f32(const float* W, int64_t ld, const float* x, float* y, int rows, int cols) {
  struct Job {
    const float* W;
    int64_t ld;
    const float* x;
    float* y;
    int cols;
  } job{W, ld, x, y, cols};
  parallel_rows(rows, int64_t(rows) * cols, [](void* c, int r0, int r1) {
    const Job& j = *static_cast<const Job*>(c);
    block(j.W + r0 * j.ld, j.ld, j.x, j.cols, j.y + r0, r1 - r0);
  }, &job);
}

void attend_f32_scalar(const float* q, const float* keys, const float* values, int n, int hd,
                       float scale, float* att, float* out) {
  for (int t = 0; t < n; ++t) {
    const float* k = keys + static_cast<int64_t>(t) * hd;
    float score = 0.0f;
    for (int i = 0; i < hd; ++i) score += q[i] * k[i];
    att[t] = score * scale;
  }
  float max_val = att[0];
  for (int i = 1; i < n; ++i) max_val = std::max(max_val, att[i]);
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += (att[i] = std::exp(att[i] - max_val));
  for (int i = 0; i < n; ++i) att[i] /= sum;
  std::fill(out, out + hd, 0.0f);
  for (int t = 0; t < n; ++t) {
    const float* v = values + static_cast<int64_t>(t) * hd;
    const float a = att[t];
    for (int i = 0; i < hd; ++i) out[i] += a * v[i];
  }
}

void attend_f32(const float* q, const float* keys, const float* values, int n, int hd,
                float scale, float* att, float* out) {
#ifdef KVCIM_GEMV_X86
  if (have_avx2() && hd % 8 == 0 && hd > 0 && n > 0) {
    switch (hd / 8) {
      case 1: return attend_avx2<1>(q, keys, values, n, hd, scale, att, out);
      case 2: return attend_avx2<2>(q, keys, values, n, hd, scale, att, out);
      case 4: return attend_avx2<4>(q, keys, values, n, hd, scale, att, out);
      case 6: return attend_avx2<6>(q, keys, values, n, hd, scale, att, out);
      case 8: return attend_avx2<8>(q, keys, values, n, hd, scale, att, out);
      default: return attend_avx2<0>(q, keys, values, n, hd, scale, att, out);
    }
  }
#endif
  attend_f32_scalar(q, keys, values, n, hd, scale, att, out);
}

int gemv_threads() { return g_threads.load(); }
void set_gemv_threads(int threads) { g_threads.store(threads >= 2 ? 2 : 1); }
int64_t gemv_parallel_min() { return g_parallel_min.load(); }
void set_gemv_parallel_min(int64_t elements) { g_parallel_min.store(std::max<int64_t>(elements, 0)); }

}  // namespace kvcim::cmodel
