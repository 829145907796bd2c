// A weight matrix held in CIM macros, as the mapper placed it: quantised per output channel,
// cut into blocks (a range of input rows x a range of outputs, one block per macro), each block
// computed by its macro on the per-token quantised input; the partial sums of a column of blocks
// are added digitally and the result dequantised.
#pragma once
#include <memory>
#include <vector>

#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/cmodel/quant/quant.hpp"

namespace kvcim::runtime {

// One macro's share of a matrix: inputs [row0, row0 + rows) x outputs [out0, out0 + outs).
// Blocks the placement left off-chip (no macro free) are computed by the digital engine: the
// same integer products, its weights fetched from off-chip memory.
struct Block {
  int row0 = 0, rows = 0, out0 = 0, outs = 0;
  bool onchip = true;
};

// What one matrix-vector product cost besides the macros' own events.
#define KVCIM_LINEAR_EVENTS(X)                                                                  \
  X(cmodel::cim::MacroEvents, macro, "the macros' own events")                                    \
  X(int64_t, partial_sum_adds, "int32 adds joining the blocks of one output column")              \
  X(int64_t, dequant_muls, "fp32 multiplies: y = acc * x_scale * w_scale[out]")                   \
  X(int64_t, quant_ops, "activation quantisation: one divide-round per input")                    \
  X(int64_t, offchip_macs, "int8 MACs of off-chip blocks on the digital engine")                  \
  X(int64_t, offchip_weight_bits, "their weights fetched from off-chip memory")
struct LinearEvents {
  KVCIM_FIELDS(LinearEvents, KVCIM_LINEAR_EVENTS)
};

class CimLinear {
 public:
  // w: [outputs, inputs] float; blocks must cover every element exactly once.
  CimLinear(cmodel::MatrixRef w, const cmodel::cim::MacroSpec& spec, std::vector<Block> blocks);
  // y = W x as the macros compute it. Adds the events to `events`. The blocks are shared with
  // the float GEMV's helper thread (cmodel::parallel_rows); results do not depend on it.
  void apply(const float* x, float* y, LinearEvents& events);
  // n tokens at once: y[t * outputs() + o] = (W x_t)[o], x_t = x + t * inputs(), token t's read
  // noise keyed keys[t] (cim::Macro::compute_batch): each macro runs every token while its
  // weights are in cache. The same floats as apply_keyed() of each token in turn, whatever n and
  // whatever came before; the events are their sum (cim_linear_batch.cpp).
  void apply_batch(const float* x, int n, float* y, LinearEvents& events, const uint64_t* keys);
  void apply_keyed(const float* x, float* y, LinearEvents& events, uint64_t key) { apply_batch(x, 1, y, events, &key); }
  // Events of writing the weights into the macros (once, at load).
  const cmodel::cim::MacroEvents& load_events() const { return load_events_; }
  int outputs() const { return q_.rows; }
  int inputs() const { return q_.cols; }

 private:
  cmodel::quant::QuantizedMatrix q_;
  cmodel::cim::MacroSpec spec_;
  std::vector<Block> blocks_;
  std::vector<std::unique_ptr<cmodel::cim::Macro>> macros_;
  cmodel::cim::MacroEvents load_events_;
  std::vector<int32_t> xq_;
  std::vector<int64_t> acc_;  // apply()'s sums of an output's blocks, sized at its first call
  // per block: its partial sums at parts_[slot_[b]..] of a token (n_parts_ in all). parts_ is
  // apply()'s alone, sized at its first call: a run that only ever calls apply_batch (the
  // generation and the evaluation) holds no per-matrix copy beside the lent scratch. A block's
  // events of a call stay in its macro until the join adds them up in block order.
  std::vector<int64_t> parts_, slot_;
  size_t n_parts_ = 0;
  int64_t macs_ = 0, partial_sum_adds_ = 0;
  void compute_blocks(int b0, int b1);  // blocks [b0, b1) into their slots
  // apply_batch's: the tokens' codes [t][inputs], their keys, every block's partial sums
  // [slot * n + t * outs + o] (slot_ scaled by n)
  std::vector<int32_t> batch_xq_;
  std::vector<int64_t> batch_parts_, batch_acc_;
  std::vector<uint64_t> batch_planes_;  // analog macros: the codes' bit-planes (Macro::form_input_planes)
  uint64_t batch_planes_id_ = 0;        // their formation's id (Macro::InputPlanes::id), unique in the process
  const uint64_t* batch_keys_ = nullptr;
  int batch_n_ = 0;
  void compute_blocks_batch(int b0, int b1);
  void apply_run(const float* x, int n, float* y, LinearEvents& events, const uint64_t* keys);  // n >= 1
};

// Row tiles over the inputs x column tiles over the outputs, one block per macro: the plain
// tiling (the mapper's placement uses the same blocks).
std::vector<Block> tile_blocks(int inputs, int outputs, const cmodel::cim::MacroSpec& spec);

}  // namespace kvcim::runtime
