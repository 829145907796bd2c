#include "kvcim/cmodel/energy/baseline.hpp"

#include <algorithm>

#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel::energy {

void BaselineConfig::validate(const std::string& where) const {
  check_fields(*this, where, "baseline.");  // the ranges of its field table
}

Ledger baseline_ledger(const Config& c, int64_t position, const BaselineConfig& cfg, int64_t sequences) {
  c.validate("baseline shape");
  cfg.validate("baseline");
  if (position < 0) fail("baseline", "position", std::to_string(position), "expected >= 0");
  if (sequences < 1) fail("baseline", "sequences", std::to_string(sequences), "expected >= 1");
  const int64_t ctx = position + 1;
  const int bits = cfg.storage_bits();
  const EventKind mac = cfg.mac_event(), off = cfg.offchip_event();
  Ledger l(c.n_layers);
  int64_t sram_left = cfg.sram_bytes * 8;

  // Weights first: they are read every token.
  for (const auto& m : token_matrices(c)) {
    const int64_t need = m.n_in * m.n_out * bits;
    const int64_t in_sram = std::min(sram_left, need);
    sram_left -= in_sram;
    charge_conventional_matvec(l, m.layer, m.op, m.n_in, m.n_out, bits, mac, in_sram, off);
    charge_matvec_buffer(l, m.layer, m.op, m.n_in, m.n_out, bits);
  }
  l.add(kModelLevel, Op::other, off, int64_t(c.dim) * bits);  // embedding row

  // Then the KV cache, layer by layer, oldest tokens first, every sequence alike.
  const int64_t token_kv_bits = 2 * int64_t(c.kv_dim()) * bits;
  for (int layer = 0; layer < c.n_layers; ++layer) {
    const int64_t sram_tokens = std::min(ctx, sram_left / sequences / token_kv_bits);
    sram_left -= sram_tokens * token_kv_bits * sequences;
    // The new token's K and V go where its slot is: SRAM only if the whole context fits.
    l.add(layer, Op::kv_write, sram_tokens == ctx ? EventKind::sram_bit : off, token_kv_bits);
    charge_conventional_attention(l, layer, c.n_heads, c.n_kv_heads, c.head_dim(), ctx,
                                  sram_tokens, bits, mac, off);
    charge_softmax(l, layer, c.n_heads, ctx);
    charge_attention_buffer(l, layer, c.n_heads, c.head_dim(), ctx, bits, kBaselineProbBits);
    charge_layer_elementwise(l, layer, c);
  }
  charge_model_elementwise(l, c);
  return l;
}

double LatencyBound::bound_ns() const { return std::max({offchip_ns, onchip_ns, compute_ns}); }

LatencyBound baseline_latency(const Ledger& ledger, const Costs& costs, const BaselineConfig& cfg) {
  cfg.validate("baseline");
  LatencyBound b;
  for (auto k : all_event_kinds()) {
    const double t = static_cast<double>(ledger.count(k)) * costs.latency(k) * 1e-6;
    switch (component_of(k)) {
      case Component::offchip: b.offchip_ns += t; break;
      case Component::buffer:
      case Component::weight_sram:
      case Component::kv_sram: b.onchip_ns += t; break;
      case Component::digital: b.compute_ns += t / static_cast<double>(cfg.mac_units); break;
      // wires and static terms take no time of their own (wire delay is inside the cycles)
      default: break;  // CIM events do not occur on the conventional engine
    }
  }
  return b;
}

}  // namespace kvcim::cmodel::energy
