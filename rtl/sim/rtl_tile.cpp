// RtlTile: the Verilated cim_attention_tile behind the AttentionTile interface (the clocking and
// the model's lifetime are in rtl_tile_impl.hpp).
#include "rtl_tile_impl.hpp"

namespace kvcim::rtl {

RtlTile::RtlTile(const RtlTileOptions& options) : impl_(std::make_unique<Impl>(options)) {}
RtlTile::~RtlTile() = default;

const TileParams& RtlTile::params() const { return impl_->params; }

const char* RtlTile::trace_format() { return KVCIM_RTL_TRACE_FST ? "fst" : "vcd"; }

TileParams RtlTile::built_params() {
#ifdef KVCIM_RTL_TILE_CONFIG
  const int c[] = {KVCIM_RTL_TILE_CONFIG};  // head_dim, tokens, kv_bits, prob_bits
  return TileParams{c[0], c[1], c[2], cmodel::cim::kTileExpFrac, c[3]};
#else
  return TileParams{};
#endif
}

void RtlTile::reset() {
  // clear_i is honoured when the tile is idle, which it always is between interface calls.
  impl_->pulse(impl_->top->clear_i);
}

void RtlTile::append(std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) {
  cmodel::cim::check_append(impl_->params, tokens(), k, v, ek, ev, "rtl tile append");
  impl_->append(k, v, ek, ev, true);
}

TileResult RtlTile::query(std::span<const int8_t> q, uint16_t qmul, int qexp) {
  cmodel::cim::check_query(impl_->params, tokens(), q, qmul, qexp, "rtl tile query");
  impl_->start_query(q, qmul, qexp);
  return impl_->finish_query();
}

int RtlTile::tokens() const { return static_cast<int>(impl_->top->count_o); }

TileEvents RtlTile::events() const {
  const std::vector<uint64_t> c = impl_->counters();
  TileEvents e;  // the ADC conversions stay 0: digital macros
  size_t i = 0;
  for_each_counter(e, [&](const std::string& path, int64_t& n) {
    if (rtl_counts(path)) n = static_cast<int64_t>(c[i++]);
  });
  return e;
}

void RtlTile::reset_events() { impl_->pulse(impl_->top->evt_clear_i); }

void RtlTile::hard_reset() { impl_->pulse(impl_->top->rst); }

std::vector<uint64_t> RtlTile::counters() const { return impl_->counters(); }

uint64_t RtlTile::sim_cycles() const { return impl_->cycles; }

RtlTile::Impl& RtlTile::impl() { return *impl_; }

}  // namespace kvcim::rtl
