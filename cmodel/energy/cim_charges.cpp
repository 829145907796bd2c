#include "kvcim/cmodel/energy/cim_charges.hpp"

#include "kvcim/cmodel/cim/attention_tile_analog.hpp"

#include "kvcim/error.hpp"

namespace kvcim::cmodel::energy {

void charge_cim_linear(Ledger& l, int layer, Op op, const cim::MacroEvents& macro,
                       int64_t partial_sum_adds, int64_t dequant_muls, int64_t quant_ops) {
  l.add_macro(layer, op, macro);
  l.add(layer, op, EventKind::int32_add, partial_sum_adds);
  l.add(layer, op, EventKind::fp32_mul, dequant_muls + quant_ops);
}

void charge_softmax_unit(Ledger& l, int layer, const cim::SoftmaxEvents& s) {
  l.add(layer, Op::softmax, EventKind::int32_mul, s.multiplies + s.divisions);
  l.add(layer, Op::softmax, EventKind::int32_add, s.shifts + s.adds + s.comparisons);
  l.add(layer, Op::softmax, EventKind::buffer_bit, s.exp_lookups * (cim::kExpOneBits + 1));
}

void charge_tile_append(Ledger& l, int layer, const cim::TileEvents& write, int64_t kv_quant_ops) {
  l.add_macro(layer, Op::kv_write, write.k_macro);
  l.add_macro(layer, Op::kv_write, write.v_macro);
  l.add(layer, Op::kv_write, EventKind::fp32_mul, kv_quant_ops);
}

void charge_tile_query(Ledger& l, int layer, const cim::TileEvents& query, int64_t q_quant_ops,
                       int64_t combine_ops) {
  l.add_macro(layer, Op::attn_scores, query.k_macro);
  l.add_macro(layer, Op::attn_weighted_sum, query.v_macro);
  charge_softmax_unit(l, layer, query.softmax);
  l.add(layer, Op::attn_scores, EventKind::fp32_mul, q_quant_ops);
  l.add(layer, Op::attn_weighted_sum, EventKind::fp32_mul, combine_ops);
}

cim::SoftmaxEvents softmax_unit_events(const cim::TileParams& p, int64_t n) {
  cim::SoftmaxEvents s;
  s.multiplies = n;
  s.shifts = 3 * n;
  s.adds = 4 * n;
  s.comparisons = 2 * n;
  s.exp_lookups = n;
  s.divisions = n;
  s.cycles = cim::softmax_cycles(p, n);
  return s;
}

cim::TileEvents tile_append_events(const cim::TileParams& p) {
  if (p.kind == cim::TileKind::analog) return cim::analog_append_events(p);
  cim::TileEvents e;
  e.k_macro = cim::write_events(cim::k_macro_spec(p), p.head_dim, 1);
  e.v_macro = cim::write_events(cim::v_macro_spec(p), 1, p.head_dim);
  e.cycles = cim::append_cycles(p);
  e.appends = 1;
  return e;
}

cim::TileEvents tile_query_events(const cim::TileParams& p, int n) {
  if (n < 1 || n > p.tokens)
    fail("tile_query_events", "n_tokens", std::to_string(n),
         "expected 1.." + std::to_string(p.tokens));
  if (p.kind == cim::TileKind::analog) return cim::analog_query_events(p, n);
  cim::TileEvents e;
  e.k_macro = cim::compute_events(cim::k_macro_spec(p), p.head_dim, n);
  e.v_macro = cim::compute_events(cim::v_macro_spec(p), n, p.head_dim);
  e.softmax = softmax_unit_events(p, n);
  e.cycles = cim::query_cycles(p, n);
  e.queries = 1;
  return e;
}

int64_t tile_combine_ops(int64_t tiles, int head_dim) {
  return tiles > 1 ? tiles * (head_dim + 2) : 0;
}

}  // namespace kvcim::cmodel::energy
