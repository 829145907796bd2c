// How the work of CIM macros and attention tiles enters a ledger, defined once: the runtime
// charges what it simulated through these functions and the mapper charges its analytic counts
// through the very same ones, so "simulated == analytic" compares like with like.
//
// Conventions (also in docs/energy.md):
// - a CIM linear layer: the macros' events; int32 adds joining the blocks of an output column;
//   fp32 multiplies for quantising the input (one per input) and dequantising (one per output);
// - the tile's softmax unit (fixed point): multiplies and divisions as int32 multiplies; shifts,
//   adds and comparisons as int32 adds; each exponent-table read as a buffer read of a 17-bit entry;
// - a KV append: the K and V macros' write events and one fp32 multiply per element quantised;
// - a query: the K macro's events to attn_scores, the V macro's to attn_weighted_sum, the softmax
//   unit to softmax, the query's quantisation (one fp32 multiply per element) to attn_scores and
//   the float multiply-adds joining tiles (as fp32 multiplies) to attn_weighted_sum.
// Tile and softmax cycle counts are latency, not ledger events (see mapper latency bound).
#pragma once
#include <cstdint>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/cmodel/energy/ledger.hpp"

namespace kvcim::cmodel::energy {

void charge_cim_linear(Ledger& l, int layer, Op op, const cim::MacroEvents& macro,
                       int64_t partial_sum_adds, int64_t dequant_muls, int64_t quant_ops);
void charge_softmax_unit(Ledger& l, int layer, const cim::SoftmaxEvents& s);
void charge_tile_append(Ledger& l, int layer, const cim::TileEvents& write, int64_t kv_quant_ops);
void charge_tile_query(Ledger& l, int layer, const cim::TileEvents& query, int64_t q_quant_ops,
                       int64_t combine_ops);

// Analytic events of the tile p.kind names (the analog tile: cim::analog_append_events /
// analog_query_events). The digital C-model tile (cim::CModelTile): from the macro event formulas
// (cim::compute_events / write_events on k_macro_spec / v_macro_spec) and the softmax unit's
// per-token operation counts (softmax_fixed.cpp: per valid token 1 multiply, 3 shifts, 4 adds,
// 2 comparisons, 1 table read, 1 division, 3 cycles; plus the pipelined divider's fill,
// divider_stages - 1 cycles, once per query). Tested against the simulated tile.
cim::SoftmaxEvents softmax_unit_events(const cim::TileParams& p, int64_t n_tokens);
cim::TileEvents tile_append_events(const cim::TileParams& p);
cim::TileEvents tile_query_events(const cim::TileParams& p, int n_tokens);
// The float multiply-adds joining `tiles` tile results of one query (runtime: tiles x
// (head_dim + 2) when more than one tile answered, else 0).
int64_t tile_combine_ops(int64_t tiles, int head_dim);

}  // namespace kvcim::cmodel::energy
