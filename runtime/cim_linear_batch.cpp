// CimLinear over many tokens at once: the weights stationary in their macros, every token's
// input streamed through each macro in turn (cim::Macro::compute_batch), token t's read noise
// keyed by keys[t], so the floats equal those of one token at a time (CimLinearBatch tests).
#include <algorithm>
#include <atomic>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/error.hpp"
#include "kvcim/runtime/cim_linear.hpp"

namespace kvcim::runtime {

void CimLinear::compute_blocks_batch(int b0, int b1) {
  const int n = batch_n_, cols = q_.cols;
  for (int b = b0; b < b1; ++b) {
    const Block& bl = blocks_[b];
    int64_t* part = batch_parts_.data() + static_cast<size_t>(slot_[b]) * n;
    if (!bl.onchip) {
      for (int t = 0; t < n; ++t)
        for (int o = 0; o < bl.outs; ++o) {
          const int8_t* w = q_.q.data() + static_cast<size_t>(bl.out0 + o) * cols + bl.row0;
          const int32_t* xt = batch_xq_.data() + static_cast<size_t>(t) * cols + bl.row0;
          int64_t acc = 0;
          for (int r = 0; r < bl.rows; ++r) acc += int64_t{w[r]} * xt[r];
          part[static_cast<size_t>(t) * bl.outs + o] = acc;
        }
      continue;
    }
    // the block's rows of every token's codes, read in place (stride: the matrix's inputs)
    cmodel::cim::Macro& m = *macros_[b];
    // the run's input bit-planes (apply_run) from the block's first row's word, when it has one
    cmodel::cim::Macro::InputPlanes planes;
    const bool shared = !batch_planes_.empty() && bl.row0 % 64 == 0;
    if (shared) {
      const size_t nw = static_cast<size_t>(cols + 63) / 64;
      planes = {batch_planes_.data() + bl.row0 / 64, nw * static_cast<size_t>(spec_.input_bits), nw, spec_.input_bits,
                batch_planes_id_};
    }
    m.compute_batch(batch_xq_.data() + bl.row0, n, bl.rows, part, bl.outs, batch_keys_, cols, shared ? &planes : nullptr);
  }
}

void CimLinear::apply_batch(const float* x, int n, float* y, LinearEvents& ev, const uint64_t* keys) {
  if (n < 0) throw Error("CimLinear::apply_batch: n = " + std::to_string(n) + ": expected a count >= 0");
  // The tokens' partial sums take 8 bytes per block output each (a classifier's 96,000 per token):
  // runs of at most 16 MiB of them, each token's floats its own either way. The scratch is this
  // thread's, lent to the matrix for the call and given back after it: one set for all the matrices
  // (the largest run's), neither allocated, zeroed and faulted in again per matrix (a chunk of the
  // 110M shape's matrices is ~3 MB of partial sums a token) nor kept by each.
  struct Scratch {
    std::vector<int32_t> xq;
    std::vector<int64_t> parts, acc;
    std::vector<uint64_t> planes;
  };
  thread_local Scratch lent;
  const auto swap_scratch = [this] {
    batch_xq_.swap(lent.xq);
    batch_parts_.swap(lent.parts);
    batch_acc_.swap(lent.acc);
    batch_planes_.swap(lent.planes);
  };
  swap_scratch();
  const int most = std::max<int>(1, static_cast<int>((size_t{16} << 20) / (8 * std::max<size_t>(1, n_parts_))));
  for (int t0 = 0; t0 < n; t0 += most)
    apply_run(x + static_cast<size_t>(t0) * q_.cols, std::min(most, n - t0), y + static_cast<size_t>(t0) * q_.rows, ev,
              keys + t0);
  swap_scratch();
}

void CimLinear::apply_run(const float* x, int n, float* y, LinearEvents& ev, const uint64_t* keys) {
  const int cols = q_.cols;
  // every element below is written before it is read: grown, never cut (no fill per run)
  const auto at_least = [](auto& v, size_t size) {
    if (v.size() < size) v.resize(size);
  };
  at_least(batch_xq_, static_cast<size_t>(n) * cols);
  std::vector<float> scale(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t)  // per-token dynamic activation scale, as apply()
    scale[t] = cmodel::quant::quantize_activation_into(x + static_cast<size_t>(t) * cols, cols, spec_.input_bits,
                                                       batch_xq_.data() + static_cast<size_t>(t) * cols);
  ev.quant_ops += int64_t{n} * cols;
  // Every analog macro reads its rows' input bits as bit-planes: formed here once per token for
  // the whole input, shared by all the blocks of a row range (a matrix of 768 outputs has 24
  // macros on the same rows), not once per macro.
  // Each formation gets its own id, so that the macros of a row range share each token's
  // popcount terms (listed by the first of them on a thread) and no list outlives its planes.
  static std::atomic<uint64_t> formations{0};
  if (spec_.kind == cmodel::cim::MacroKind::analog) {
    cmodel::cim::Macro::form_input_planes(batch_xq_.data(), n, cols, cols, spec_.input_bits, batch_planes_);
    batch_planes_id_ = formations.fetch_add(1, std::memory_order_relaxed) + 1;
  } else
    batch_planes_.clear();
  at_least(batch_parts_, n_parts_ * static_cast<size_t>(n));
  at_least(batch_acc_, static_cast<size_t>(q_.rows));
  batch_keys_ = keys;
  batch_n_ = n;
  // each block into its own slot on either thread; the join below is in block order (apply()).
  // A block over the run's tokens is heavy: claimed one at a time, so that the threads finish
  // together (in chunks of 16 the last one left a thread spinning for up to 16 blocks' time).
  cmodel::parallel_rows(static_cast<int>(blocks_.size()), macs_ * n, [](void* c, int b0, int b1) {
    static_cast<CimLinear*>(c)->compute_blocks_batch(b0, b1);
  }, this, 1);
  for (int t = 0; t < n; ++t) {
    int64_t* acc = batch_acc_.data();
    std::fill(acc, acc + q_.rows, 0);
    for (size_t b = 0; b < blocks_.size(); ++b) {
      const Block& bl = blocks_[b];
      const int64_t* part = batch_parts_.data() + static_cast<size_t>(slot_[b]) * n + static_cast<size_t>(t) * bl.outs;
      for (int o = 0; o < bl.outs; ++o) acc[bl.out0 + o] += part[o];
    }
    float* yt = y + static_cast<size_t>(t) * q_.rows;
    for (int o = 0; o < q_.rows; ++o) yt[o] = static_cast<float>(acc[o]) * scale[t] * q_.scale[o];
  }
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const Block& bl = blocks_[b];
    if (bl.onchip) {
      ev.macro += macros_[b]->events();
      macros_[b]->reset_events();
    } else {
      ev.offchip_macs += int64_t{n} * bl.rows * bl.outs;
      ev.offchip_weight_bits += int64_t{n} * bl.rows * bl.outs * spec_.weight_bits;
    }
  }
  ev.partial_sum_adds += partial_sum_adds_ * n;
  ev.dequant_muls += int64_t{n} * q_.rows;
}

}  // namespace kvcim::runtime
