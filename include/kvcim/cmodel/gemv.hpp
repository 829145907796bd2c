// The float matrix-vector product of the reference model, y = W x for a row-major W, without a
// library's per-call overhead: each row's dot product in one fixed order
// (two 8-lane FMA accumulators over 16 columns a step, one more 8-column step if present, the
// two accumulators added, the 8 lanes summed pairwise, then the remaining columns one by one
// with FMA). A row's result depends on nothing but its own data, so splitting the rows of a
// large matrix between threads gives the same floats, bit for bit, as one thread.
//
// Large matrices (rows * cols >= gemv_parallel_min()) are split into chunks of rows shared with
// one helper thread (started on first use) when gemv_threads() is 2; the calling thread takes
// every chunk the helper has not claimed, so a busy machine never makes it wait for a helper
// that is not running.
#pragma once
#include <cstdint>

namespace kvcim::cmodel {

// y[r] = sum_c W[r * ld + c] * x[c] for r < rows, c < cols.
void gemv_f32(const float* W, int64_t ld, const float* x, float* y, int rows, int cols);
// The same on the calling thread only (the reference the threaded path is tested against).
void gemv_f32_serial(const float* W, int64_t ld, const float* x, float* y, int rows, int cols);
// gemv_f32_serial for n_inputs inputs X + t * x_stride into Y + t * y_stride, t < n_inputs: the
// same floats, bit for bit, with each step's weights loaded once for two inputs and its inputs
// once for two rows (the batched evaluation's reference pass).
void gemv_f32_inputs(const float* W, int64_t ld, const float* X, int64_t x_stride, int n_inputs, float* Y,
                     int64_t y_stride, int rows, int cols);

// Attention of one query head over positions 0..n-1 of its KV head: rows of hd floats at
// keys[t * hd] and values[t * hd]; att[0..n-1] receives the softmax weights of
// q . k_t * scale, out[0..hd-1] the weighted sum of the values. With AVX2 and FMA and hd a
// multiple of 8 the dot products, the softmax (a Cephes-style polynomial exp, within 2 ulp of
// expf) and the sums run 8 lanes wide; otherwise, the scalar loops of the reference.
void attend_f32(const float* q, const float* keys, const float* values, int n, int hd,
                float scale, float* att, float* out);
// The scalar reference of attend_f32 (std::exp, sequential sums).
void attend_f32_scalar(const float* q, const float* keys, const float* values, int n, int hd,
                       float scale, float* att, float* out);

// Row-parallel work shared with gemv_f32's helper thread: fn(ctx, r0, r1) computes rows
// [r0, r1); every row of [0, rows) is computed by exactly one call, on the calling thread or the
// helper. Split only when gemv_threads() is 2, elements >= gemv_parallel_min() and rows >= 32;
// otherwise (or while another job holds the helper) one call fn(ctx, 0, rows). Results are the
// same whichever thread runs a row as long as fn computes each row from its own data alone.
// chunk > 0: rows are heavy (a CIM macro's block over a chunk of tokens), claimed `chunk` at a
// time and split from 2 rows on, so that neither thread waits long for the other's last claim.
using RowsFn = void (*)(void* ctx, int r0, int r1);
void parallel_rows(int rows, int64_t elements, RowsFn fn, void* ctx, int chunk = 0);

// Threads gemv_f32 may use: 1 or 2 (default: KVCIM_THREADS if it is 1 or 2, else 2 unless the
// 1-minute load average already reaches the machine's hardware threads).
int gemv_threads();
void set_gemv_threads(int threads);
// Matrices of at least this many elements are split between threads (default 65536).
int64_t gemv_parallel_min();
void set_gemv_parallel_min(int64_t elements);

}  // namespace kvcim::cmodel
