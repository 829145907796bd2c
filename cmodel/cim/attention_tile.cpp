// The C model of the CIM attention tile: a K macro, a V macro and the fixed-point softmax.
// Every integer it returns and every event it counts is what rtl/cim_attention_tile.sv produces.
#include "kvcim/cmodel/cim/attention_tile.hpp"

#include "kvcim/cmodel/cim/attention_tile_analog.hpp"

#include "kvcim/error.hpp"

namespace kvcim::cmodel::cim {

namespace {
MacroSpec base_spec(const TileParams& p) {
  MacroSpec s;
  s.kind = MacroKind::digital;
  s.cell_bits = 1;  // SRAM
  s.weight_bits = p.kv_bits;
  s.input_bits_per_cycle = 1;  // bit-serial
  s.encoding = WeightEncoding::twos_complement;
  return s;
}
}  // namespace

// K: one token per column group; q (signed, kv_bits) enters on the head_dim rows.
MacroSpec k_macro_spec(const TileParams& p) {
  MacroSpec s = base_spec(p);
  s.weight_bits = p.kb();
  s.rows = p.head_dim;
  s.cols = p.tokens * p.kb();
  s.input_bits = p.kv_bits;
  s.input_signed = true;
  s.rows_per_cycle = p.head_dim;  // all rows summed at once: one adder tree per column
  return s;
}

// V: one token per row; the folded probabilities (unsigned, prob_bits) enter on the token rows.
MacroSpec v_macro_spec(const TileParams& p) {
  MacroSpec s = base_spec(p);
  s.rows = p.tokens;
  s.weight_bits = p.vb();
  s.cols = p.head_dim * p.vb();
  s.input_bits = p.prob_bits;
  s.input_signed = false;
  s.rows_per_cycle = p.tokens;
  return s;
}

namespace {
const TileParams& validated(const TileParams& p) {
  p.validate("attention tile");
  if (p.kind != TileKind::digital)
    fail("attention tile", "kind", "analog", "CModelTile is the digital tile (make_tile picks by kind)");
  if (p.softmax != TileSoftmax::fixed)
    fail("attention tile", "softmax", std::to_string(static_cast<int>(p.softmax)),
         "the digital tile has the fixed-point softmax only");
  return p;
}
}  // namespace

CModelTile::CModelTile(const TileParams& p)
    : p_(validated(p)),
      k_(k_macro_spec(p)),
      v_(v_macro_spec(p)),
      lut_(exp_lut(p.exp_frac)),
      ek_(p.tokens),
      ev_(p.tokens) {}

void AttentionTile::overwrite(int slot, std::span<const int8_t>, std::span<const int8_t>, int, int) {
  fail("attention tile", "overwrite", "slot " + std::to_string(slot),
       "this tile appends at its next slot only (token-granular eviction needs a tile that overwrites one)");
}

void SlotTile::append(std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) {
  check_append(params(), tokens(), k, v, ek, ev, std::string(name()) + " append");
  write_slot(tokens(), k, v, ek, ev);
}

void SlotTile::overwrite(int slot, std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) {
  check_overwrite(params(), tokens(), slot, k, v, ek, ev, std::string(name()) + " overwrite");
  write_slot(slot, k, v, ek, ev);
}

void CModelTile::write_slot(int slot, std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) {
  k_.write_column_group(slot, k.data(), p_.head_dim);
  v_.write_row(slot, v.data(), p_.head_dim);
  ek_[slot] = ek;
  ev_[slot] = ev;
  if (slot == n_) ++n_;
  own_.cycles += append_cycles(p_);
  own_.appends += 1;
}

TileResult CModelTile::query(std::span<const int8_t> q, uint16_t qmul, int qexp) {
  check_query(p_, n_, q, qmul, qexp, "attention tile query");
  // 1. scores from the K macro
  std::vector<int32_t> x(q.begin(), q.end());
  std::vector<int64_t> s(n_);
  k_.compute(x.data(), p_.head_dim, s.data(), n_);
  // 2-5. fixed-point softmax and V-exponent fold
  SoftmaxOutput sm = softmax_fixed(p_, s, std::span<const int>(ek_.data(), n_),
                                   std::span<const int>(ev_.data(), n_), QueryScale{qmul, qexp},
                                   lut_, own_.softmax);
  // 6. output from the V macro
  std::vector<int32_t> prob(sm.prob.begin(), sm.prob.end());
  std::vector<int64_t> o(p_.head_dim);
  v_.compute(prob.data(), n_, o.data(), p_.head_dim);

  last_e_ = sm.e;
  own_.cycles += query_cycles(p_, n_);
  own_.queries += 1;
  // sum_t p'_t <= 2^P - 1 + n/2 (folding rounds each p_t at most half up), so
  // |o_i| <= (2^P + n) 2^(kv_bits - 1) fits int32 for every valid TileParams.
  return sm.result(std::vector<int32_t>(o.begin(), o.end()));
}

std::unique_ptr<AttentionTile> make_tile(const TileParams& p) {
  if (p.kind == TileKind::analog) return std::make_unique<AnalogTile>(p);
  return std::make_unique<CModelTile>(p);
}

TileEvents CModelTile::events() const {
  TileEvents e = own_;
  e.k_macro = k_.events();
  e.v_macro = v_.events();
  return e;
}

void CModelTile::reset_events() {
  own_ = TileEvents{};
  k_.reset_events();
  v_.reset_events();
}

}  // namespace kvcim::cmodel::cim
