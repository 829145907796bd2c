#include "kvcim/runtime/hardware.hpp"

#include <algorithm>

#include "kvcim/error.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "kvcim/mapper/batch.hpp"
#include "kvcim/mapper/chip.hpp"

namespace kvcim::runtime {

using namespace kvcim::cmodel;

// The tile the parameters name (digital or analog). Each analog tile draws its noise from its own
// stream: seed, seed + 1, ... in the order the tiles are made. The count is each copy's own: every
// backend (the generation's, each evaluation lane's) numbers its tiles from the seed, so no run
// depends on how another's tiles, or threads, interleave (a shared count did: a data race, and
// reports that changed with thread timing).
TileFactory cmodel_tiles(const cim::TileParams& params) {
  params.validate("attention tile");
  return [params, made = uint64_t{0}]() mutable {
    cim::TileParams p = params;
    p.seed = params.seed + made++;
    return cim::make_tile(p);
  };
}

mapper::Placement place_for_run(const Checkpoint& ck, const mapper::HardwareSpec& hw,
                                const mapper::Policy& policy, int context) {
  // checked here, before the mapper would report it as its context
  if (context <= 0) fail("run", "steps", std::to_string(context), "expected a positive number");
  mapper::ModelShape shape{ck.path, ck.config, ck.config.sliding_window};
  mapper::Placement p = mapper::place(shape, hw, policy, context);
  const mapper::Figures f = mapper::figures(p);
  if ((f.offchip_tokens > 0 && policy.overflow != mapper::KvOverflow::spill) ||
      (f.evicted_tokens > 0 && policy.overflow != mapper::KvOverflow::window))
    fail(hw.source, "kv capacity", std::to_string(f.max_context_tokens) + " tokens fit in CIM",
         "kvcim run keeps all " + std::to_string(context) +
             " tokens' K and V in CIM tiles (or spills or drops the oldest: policy overflow=spill|window); give the "
             "KV cache more macros or run fewer steps");
  // The runtime holds a stream's KV in whole attention tiles (and drops or spills whole tiles), so
  // the page must be the tile.
  if (policy.overflow != mapper::KvOverflow::fail && p.kv.pages_per_tile != 1)
    fail("policy", "page", std::to_string(p.kv.tokens_per_page) + " tokens",
         "must be the tile's " + std::to_string(p.kv.tile.tokens) + " tokens under overflow=" +
             mapper::name(policy.overflow) + " (kvcim run keeps, drops and spills whole attention tiles)");
  return p;
}

SessionHardware session_hardware(const Checkpoint& /*ck: the placement holds the shape*/, const mapper::Placement& p, TileFactory tiles) {
  SessionHardware h;
  h.macro = p.hw.macro;
  h.tiles = std::move(tiles);
  h.k_per_channel = p.hw.kv.k_scale == mapper::KScale::channel;
  // overflow=window: every stream keeps the window's pages (= tiles), sinks first; at token
  // granularity exactly the window's tokens
  if (p.policy.token_window()) {
    h.kv_window.tokens = static_cast<int>(p.kv.kept_tokens(p.policy));
    h.kv_window.sink_tokens = static_cast<int>(p.policy.sink_tokens);
    h.kv_window.recent_tokens = static_cast<int>(p.kv.recent_tokens(p.policy));
    h.kv_window.heavy_hitters = p.policy.evict == mapper::KvEvict::h2o;
  } else if (p.policy.overflow == mapper::KvOverflow::window)
    h.kv_window = {static_cast<int>(std::min(p.kv.window_pages(p.policy), p.kv.pages_per_stream())),
                   static_cast<int>(p.kv.sink_pages(p.policy)), p.policy.evict == mapper::KvEvict::h2o};
  // overflow=spill: every stream keeps its newest pages (= tiles) in CIM (none when no page fits)
  if (p.policy.overflow == mapper::KvOverflow::spill) {
    h.kv_window.cim_tiles = static_cast<int>(p.kv.pages_per_stream());
    h.kv_window.cim_extra_streams = static_cast<int>(p.kv.streams_with_extra_page());
  }
  // the time between two tokens of a sequence, which the analog tiles' retention and drift see:
  // the spec's, or the placement's latency bound per token (a step of the batch)
  const mapper::KvSpec& kv = p.hw.kv;
  if (kv.retention_ns > 0 || kv.refresh_ns > 0 || kv.drift_nu > 0 || kv.drift_nu_sigma > 0)
    h.token_interval_ns =
        p.hw.kv.token_interval_ns > 0 ? p.hw.kv.token_interval_ns : mapper::figures(p).latency_ns_cim;
  h.blocks = [p](int layer, MatrixKind kind) {
    const energy::Op op = op_of(kind);
    const int l = kind == MatrixKind::classifier ? energy::kModelLevel : layer;
    const mapper::MatrixPlacement& m = p.weights.matrices.at(p.weights.find(op, l, 0));
    std::vector<Block> blocks;
    for (int64_t b = 0; b < m.blocks(); ++b) {
      const mapper::WeightBlock wb = m.block(b, p.hw.macro);
      blocks.push_back({wb.row0, wb.rows, wb.out0, wb.outs, wb.macro >= 0});
    }
    return blocks;
  };
  // a step of `sequences` sequences at a position (with one, a single token's ledgers)
  h.conventional = [p](int pos, int sequences) {
    return mapper::conventional_step_ledger(p.shape, p.hw, pos + 1, sequences);
  };
  h.periphery = [p](int pos, int sequences) {
    const mapper::LatencyBound lb = mapper::cim_latency(p.shape, p.hw, p.policy, p.weights, p.kv, pos + 1);
    const mapper::TokenLedgers t = mapper::token_ledgers(p.shape, p.hw, p.policy, p.weights, p.kv, pos + 1, true, &lb);
    return mapper::cim_step_periphery(t, lb, p.hw, p.policy, sequences);
  };
  return h;
}

}  // namespace kvcim::runtime
