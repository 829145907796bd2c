#include "kvcim/runtime/cim_linear.hpp"

#include <algorithm>
#include <utility>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/error.hpp"

namespace kvcim::runtime {

using cmodel::cim::Macro;
using cmodel::cim::MacroSpec;

std::vector<Block> tile_blocks(int inputs, int outputs, const MacroSpec& spec) {
  std::vector<Block> blocks;
  const int per_row = spec.weights_per_row();
  for (int r = 0; r < inputs; r += spec.rows)
    for (int o = 0; o < outputs; o += per_row)
      blocks.push_back({r, std::min(spec.rows, inputs - r), o, std::min(per_row, outputs - o)});
  return blocks;
}

CimLinear::CimLinear(cmodel::MatrixRef w, const MacroSpec& spec, std::vector<Block> blocks)
    : spec_(spec), blocks_(std::move(blocks)) {
  q_.rows = static_cast<int>(w.rows());
  q_.cols = static_cast<int>(w.cols());
  q_.bits = spec.weight_bits;
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const Block& bl = blocks_[b];
    if (bl.rows > spec.rows || bl.outs > spec.weights_per_row() || bl.row0 + bl.rows > q_.cols ||
        bl.out0 + bl.outs > q_.rows)
      throw Error("CimLinear: block " + std::to_string(b) + " does not fit its macro or matrix");
  }
  // The codes stay only for blocks the digital engine computes: the macros hold the others.
  // Then each output group's codes are quantised as its blocks are written (the same codes and
  // scales: one scale per output row), not the whole matrix first (a classifier's codes would be
  // 9 MB beside its macros, which also left malloc's heap that much larger for the whole run).
  const bool all_onchip = std::all_of(blocks_.begin(), blocks_.end(), [](const Block& bl) { return bl.onchip; });
  if (all_onchip) {
    q_.scale.resize(static_cast<size_t>(q_.rows));
  } else {
    q_ = cmodel::quant::quantize_weights(w, spec.weight_bits);
  }
  // blocks written grouped by outputs (each macro's seed is its block's index, whatever the order)
  std::vector<size_t> order(blocks_.size());
  for (size_t b = 0; b < order.size(); ++b) order[b] = b;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(blocks_[a].out0, blocks_[a].outs) < std::pair(blocks_[b].out0, blocks_[b].outs);
  });
  std::vector<int8_t> group, tile;  // codes of outputs [g0, g0 + gn) x every input; one block's
  int g0 = -1, gn = 0;
  macros_.resize(blocks_.size());
  for (const size_t b : order) {
    const Block& bl = blocks_[b];
    if (!bl.onchip) continue;
    const int8_t* codes = nullptr;  // output out0's row of codes
    if (!all_onchip) {
      codes = q_.q.data() + static_cast<size_t>(bl.out0) * q_.cols;
    } else {
      if (bl.out0 != g0 || bl.outs != gn) {
        group.resize(static_cast<size_t>(bl.outs) * q_.cols);
        cmodel::quant::quantize_weights_into(w.middleRows(bl.out0, bl.outs), spec.weight_bits, group.data(),
                                             static_cast<size_t>(q_.cols), q_.scale.data() + bl.out0);
        g0 = bl.out0;
        gn = bl.outs;
      }
      codes = group.data();
    }
    // the macro holds W^T: its rows are the inputs, its column groups the outputs
    tile.resize(static_cast<size_t>(bl.rows) * bl.outs);
    for (int r = 0; r < bl.rows; ++r)
      for (int o = 0; o < bl.outs; ++o) tile[r * bl.outs + o] = codes[static_cast<size_t>(o) * q_.cols + bl.row0 + r];
    MacroSpec s = spec;
    s.seed = spec.seed + b;  // each macro its own noise stream, reproducible from the spec seed
    auto m = std::make_unique<Macro>(s);
    m->write_block(tile.data(), bl.rows, bl.outs);
    load_events_ += m->events();
    m->reset_events();
    macros_[b] = std::move(m);
  }
  xq_.resize(q_.cols);
  // one slot of partial sums per block; the adds joining the blocks of an output (the first
  // block of each output needs none) are the same every token
  std::vector<int> blocks_per_output(q_.rows, 0);
  for (const Block& bl : blocks_) {
    slot_.push_back(static_cast<int64_t>(n_parts_));
    n_parts_ += static_cast<size_t>(bl.outs);
    macs_ += int64_t{bl.rows} * bl.outs;
    for (int o = 0; o < bl.outs; ++o) partial_sum_adds_ += blocks_per_output[bl.out0 + o]++ > 0;
  }
}

void CimLinear::compute_blocks(int b0, int b1) {
  for (int b = b0; b < b1; ++b) {
    const Block& bl = blocks_[b];
    int64_t* part = parts_.data() + slot_[b];
    if (!bl.onchip) {
      // the digital engine: exact integer dot products over the block
      for (int o = 0; o < bl.outs; ++o) {
        const int8_t* w = q_.q.data() + static_cast<size_t>(bl.out0 + o) * q_.cols + bl.row0;
        int64_t acc = 0;
        for (int r = 0; r < bl.rows; ++r) acc += int64_t{w[r]} * xq_[bl.row0 + r];
        part[o] = acc;
      }
    } else {
      macros_[b]->compute(xq_.data() + bl.row0, bl.rows, part, bl.outs);
    }
  }
}

void CimLinear::apply(const float* x, float* y, LinearEvents& ev) {
  // per-token dynamic activation scale, the codes straight into xq_
  const float x_scale = cmodel::quant::quantize_activation_into(x, q_.cols, spec_.input_bits, xq_.data());
  ev.quant_ops += q_.cols;
  if (parts_.size() < n_parts_) parts_.resize(n_parts_);
  acc_.resize(static_cast<size_t>(q_.rows));
  // Each block into its own slot, on this thread and parallel_rows' helper: a macro's noise
  // generator and events are its own, so which thread computes a block changes nothing. The
  // slots are then joined in block order with integer sums: the same on one thread and two.
  cmodel::parallel_rows(static_cast<int>(blocks_.size()), macs_, [](void* c, int b0, int b1) {
    static_cast<CimLinear*>(c)->compute_blocks(b0, b1);
  }, this);
  std::fill(acc_.begin(), acc_.end(), 0);
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const Block& bl = blocks_[b];
    const int64_t* part = parts_.data() + slot_[b];
    for (int o = 0; o < bl.outs; ++o) acc_[bl.out0 + o] += part[o];
    if (bl.onchip) {
      ev.macro += macros_[b]->events();
      macros_[b]->reset_events();
    } else {
      ev.offchip_macs += int64_t{bl.rows} * bl.outs;
      ev.offchip_weight_bits += int64_t{bl.rows} * bl.outs * spec_.weight_bits;
    }
  }
  ev.partial_sum_adds += partial_sum_adds_;
  // dequantise: y = acc * x_scale * w_scale[out]
  for (int o = 0; o < q_.rows; ++o) y[o] = static_cast<float>(acc_[o]) * x_scale * q_.scale[o];
  ev.dequant_muls += q_.rows;
}

}  // namespace kvcim::runtime
