#include "kvcim/mapper/placement.hpp"

#include <algorithm>
#include <cmath>

#include "kvcim/cmodel/energy/ledger.hpp"

#include "kvcim/error.hpp"
#include "kvcim/mapper/dies.hpp"
#include "kvcim/mapper/sizing.hpp"

namespace kvcim::mapper {

int64_t weight_macro_budget(const cmodel::Config& c, const HardwareSpec& hw, const Policy& p) {
  if (hw.organization.weights == Home::offchip) return 0;  // attention-only CIM
  const int64_t total = hw.organization.macros;
  const int64_t needed = weight_macros_needed(c, hw.macro, p.replicas);
  if (hw.organization.kv == Home::offchip || p.kv_fraction < 0) return std::min(total, needed);  // weights first
  const int64_t kv = static_cast<int64_t>(std::floor(p.kv_fraction * static_cast<double>(total)));
  return std::min(total - kv, needed);
}

namespace {
// kv_needed < 0: every macro the weights leave (the spare capacity default_context asks about).
int64_t kv_macros_for(const HardwareSpec& hw, const Policy& p, int64_t weight_macros, int64_t kv_needed) {
  if (hw.organization.kv == Home::offchip) return 0;  // weights-only CIM
  const int64_t total = hw.organization.macros;
  if (hw.organization.weights == Home::offchip || p.kv_fraction < 0)
    return kv_needed < 0 ? total - weight_macros : std::min(total - weight_macros, kv_needed);
  return static_cast<int64_t>(std::floor(p.kv_fraction * static_cast<double>(total)));
}

// The chip as built: the weights' macros and the KV macros the work needs, in whole tiles; the
// spec's other macros are not built (never filled with KV pages nobody uses).
HardwareSpec built(HardwareSpec hw, int64_t weight_macros, int64_t kv_macros) {
  const int per_tile = hw.organization.macros_per_tile;
  const int64_t used = std::max<int64_t>(weight_macros + kv_macros, 1);
  hw.organization.macros = std::min(hw.organization.macros, (used + per_tile - 1) / per_tile * per_tile);
  return hw;
}
}  // namespace

int64_t place_kv_macros(const cmodel::Config& c, HardwareSpec& hw, const Policy& p, int64_t weight_macros,
                        int64_t context) {
  const int64_t kv_needed = context > 0 ? kv_macros_needed(c, hw, p, context) : -1;
  int64_t kv = kv_macros_for(hw, p, weight_macros, kv_needed);
  if (kv_needed >= 0 && (hw.organization.weights == Home::offchip || p.kv_fraction < 0)) {
    hw = built(hw, weight_macros, kv);
    kv = kv_macros_for(hw, p, weight_macros, kv_needed);
  }
  hw.idle_macros = std::max<int64_t>(0, hw.organization.macros - weight_macros - kv);
  return kv;
}

Op op_of(cmodel::MatrixKind kind) {
  switch (kind) {
    case cmodel::MatrixKind::wq: return Op::q_proj;
    case cmodel::MatrixKind::wk: return Op::k_proj;
    case cmodel::MatrixKind::wv: return Op::v_proj;
    case cmodel::MatrixKind::wo: return Op::o_proj;
    case cmodel::MatrixKind::w1: return Op::ffn_w1;
    case cmodel::MatrixKind::w2: return Op::ffn_w2;
    case cmodel::MatrixKind::w3: return Op::ffn_w3;
    case cmodel::MatrixKind::classifier: return Op::classifier;
  }
  return Op::other;
}

std::vector<WeightBlock> matrix_blocks(const Placement& p, int layer, cmodel::MatrixKind kind,
                                       int replica) {
  const bool cls = kind == cmodel::MatrixKind::classifier;
  const MatrixPlacement& m =
      p.weights.matrices[p.weights.find(op_of(kind), cls ? cmodel::energy::kModelLevel : layer, replica)];
  std::vector<WeightBlock> out;
  out.reserve(static_cast<size_t>(m.blocks()));
  for (int64_t b = 0; b < m.blocks(); ++b) out.push_back(m.block(b, p.hw.macro));
  return out;
}

int64_t offchip_bytes(const cmodel::Config& c, const HardwareSpec& hw, const WeightPlacement& w,
                      int64_t offchip_token_heads) {
  const int64_t weight_bits =
      (w.elements_total - w.elements_onchip + int64_t{c.vocab_size} * c.dim) * hw.precision.weight_bits;
  const int64_t kv_bits = offchip_token_heads * int64_t{c.head_dim()} * (hw.kv.k_bits + hw.kv.v_bits);
  return (weight_bits + kv_bits + 7) / 8;
}

Placement place(const ModelShape& shape, const HardwareSpec& spec, const Policy& requested,
                int64_t requested_context) {
  shape.config.validate(shape.name);
  check_mappable(shape.config, shape.name);
  spec.validate();
  requested.validate("policy");
  if (requested_context < 0)
    fail("map", "context", std::to_string(requested_context), "expected >= 0 tokens");
  // Sliding-window attention reads the last `window` tokens: a token at a longer context costs
  // what the token at the window does.
  const int64_t context = shape.kv_context(requested_context);
  const Policy policy = effective_policy(spec, requested);
  // The allocator grows every sequence token by token: bound the work it is asked to do.
  if (static_cast<double>(context) * policy.sequences > static_cast<double>(int64_t{1} << 26))
    fail("map", "context", std::to_string(context),
         "context x sequences above 2^26 tokens: too many to allocate page by page");
  std::optional<Sizing> sizing;
  if (spec.organization.macros_auto || spec.organization.area_mm2 > 0)
    sizing = size_chip(shape, spec, policy, context);
  HardwareSpec hw = sizing ? sized(spec, *sizing) : spec;
  const int64_t budget = weight_macro_budget(shape.config, hw, policy);
  WeightPlacement w = place_weights(shape.config, hw.macro, policy.replicas, budget);
  // KV sized to the work (context x sequences) unless the policy splits the chip itself; context
  // 0 asks what the spec could hold (default_context)
  const int64_t kv_macros = place_kv_macros(shape.config, hw, policy, w.macros_used, context);
  const KvLayout kv = kv_layout(shape.config, hw, policy, kv_macros);
  Placement p{shape, hw, policy, std::move(w), kv, KvAllocator(kv, policy), context, context, false, std::nullopt};
  p.requested_context = requested_context;
  p.sizing = sizing;
  plan_dies(shape, hw, p.weights, kv);  // refuses a die too small for one macro before long work
  // Block tables page by page for placements small enough to list; beyond that the closed form
  // (stream_tokens, tested against the allocator) gives every figure, and the allocator stays
  // empty (Placement::allocator_grown).
  const double pages = static_cast<double>(kv.streams()) *
                       std::ceil(static_cast<double>(context) / kv.tokens_per_page);
  int64_t spilled = 0;
  if (pages <= static_cast<double>(kMaxGrownPages)) {
    for (int64_t t = 0; t < context; ++t)
      for (int s = 0; s < policy.sequences; ++s) p.allocator.append(s);
    p.allocator_grown = true;
    // spilled tokens: whole off-chip pages, the last page of a stream possibly partly filled
    for (int64_t st = 0; st < p.kv.streams(); ++st) {
      const auto& table = p.allocator.block_table(st);
      const int64_t len = p.allocator.length(static_cast<int>(st / p.kv.streams_per_sequence()));
      for (size_t i = 0; i < table.size(); ++i)
        if (table[i].where == Where::offchip)
          spilled += std::min<int64_t>(p.kv.tokens_per_page, len - static_cast<int64_t>(i) * p.kv.tokens_per_page);
    }
  } else if (context > 0) {
    const int64_t r = kv.streams_with_extra_page();
    const StreamTokens plain = stream_tokens(kv, policy, kv.streams() - 1, context);
    const StreamTokens extra = r > 0 ? stream_tokens(kv, policy, 0, context) : plain;
    spilled = r * extra.offchip_tokens + (kv.streams() - r) * plain.offchip_tokens;
  }
  const int64_t need = offchip_bytes(shape.config, hw, p.weights, spilled);
  if (need > hw.offchip.capacity)
    fail(hw.source, "offchip.capacity", std::to_string(hw.offchip.capacity) + " bytes",
         "the placement needs " + std::to_string(need) +
             " bytes off-chip (weights not in CIM, the embedding table, spilled KV pages)");
  return p;
}

}  // namespace kvcim::mapper
