// The analytic per-token events against block-by-block sums and against simulated attention
// tiles; derived figures against hand formulas; policies beyond capacity.
#include <gtest/gtest.h>

#include <random>

#include "kvcim/cmodel/energy/cim_charges.hpp"
#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/analysis.hpp"
#include "random_cases.hpp"

using namespace kvcim::mapper;
using namespace kvcim::cmodel::energy;
namespace cim = kvcim::cmodel::cim;

namespace {

HardwareSpec default_hw() { return load_hardware_spec(default_hardware_spec_path()); }


// A random spec derived from the default: geometry and circuit changed, validated.
HardwareSpec random_hw(std::mt19937_64& rng) {
  HardwareSpec hw = default_hw();
  cim::MacroSpec m = random_cases::random_macro(rng);
  m.weight_bits = hw.precision.weight_bits;
  m.input_bits = hw.precision.activation_bits;
  m.cols = std::max(m.cols, m.slices_per_weight());
  m.adc_share = std::min(m.adc_share, m.cols);
  m.kind = cim::MacroKind::digital;  // the default tech table has no ADC rows
  hw.macro = m;
  hw.kv.tokens_per_tile = 1 << (rng() % 4);  // 1..8
  hw.organization.macros = 1 + static_cast<int64_t>(rng() % 400);
  hw.validate();
  return hw;
}

// A random spec and model shape, placed under overflow=spill (any capacity works).
struct Spilled {
  HardwareSpec hw;
  ModelShape shape;
  Policy policy;
  Placement placement;
};
Spilled random_spilled(std::mt19937_64& rng) {
  HardwareSpec hw = random_hw(rng);
  ModelShape shape{"random", random_cases::random_shape(rng)};
  Policy p;
  p.overflow = KvOverflow::spill;
  Placement pl = place(shape, hw, p, 0);
  return {std::move(hw), std::move(shape), p, std::move(pl)};
}

}  // namespace

TEST(Analysis, LinearEventsEqualBlockByBlockSums) {
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 40; ++trial) {
    const auto [hw, shape, p, pl] = random_spilled(rng);
    const TokenLedgers t = token_ledgers(shape, hw, p, pl.weights, pl.kv, 3);
    for (const MatrixPlacement& m : pl.weights.matrices) {
      cim::MacroEvents sum;
      int64_t off = 0;
      for (int64_t b = 0; b < m.blocks(); ++b) {
        const WeightBlock bl = m.block(b, hw.macro);
        if (bl.macro >= 0) sum += cim::compute_events(hw.macro, bl.rows, bl.outs);
        else off += int64_t{bl.rows} * bl.outs;
      }
      ASSERT_EQ(t.cim.count(m.layer, m.op, EventKind::column_read), sum.column_reads);
      ASSERT_EQ(t.cim.count(m.layer, m.op, EventKind::row_activation), sum.row_activations);
      ASSERT_EQ(t.cim.count(m.layer, m.op, EventKind::adder_op), sum.adder_ops);
      ASSERT_EQ(t.cim.count(m.layer, m.op, EventKind::macro_cycle), sum.cycles);
      ASSERT_EQ(t.periphery.count(m.layer, m.op, EventKind::int8_mac), off);
      ASSERT_EQ(t.periphery.count(m.layer, m.op, hw.offchip_event()), off * hw.precision.weight_bits);
    }
  }
}

TEST(Analysis, AttentionEventsEqualSimulatedTilesPageByPage) {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 12; ++trial) {
    HardwareSpec hw = default_hw();
    hw.kv.tokens_per_tile = 8;
    hw.organization.macros = 200 + static_cast<int64_t>(rng() % 200);
    kvcim::cmodel::Config c = random_cases::random_shape(rng);
    c.n_layers = 1 + static_cast<int>(rng() % 2);
    const ModelShape shape{"random", c};
    Policy p;
    p.tokens_per_page = 1 << (rng() % 4);
    p.gqa_sharing = rng() % 2;
    const Placement pl = place(shape, hw, p, 0);
    const int64_t max_ctx = pl.kv.pages_per_stream() * pl.kv.tokens_per_page;
    if (max_ctx == 0) continue;
    const int64_t context = 1 + static_cast<int64_t>(rng() % std::min<int64_t>(max_ctx, 40));
    SCOPED_TRACE("trial " + std::to_string(trial) + " context " + std::to_string(context));
    const TokenLedgers t = token_ledgers(shape, hw, p, pl.weights, pl.kv, context);

    // Simulate: per layer and stored head, one C-model tile per page (tokens_per_page tokens at
    // most), every query head of the stream queries every page; the new token is appended.
    Ledger sim(c.n_layers);
    const cim::TileParams tp = pl.kv.tile;
    const int qmax = (1 << (tp.kv_bits - 1)) - 1;
    std::vector<int8_t> k(tp.head_dim), v(tp.head_dim), q(tp.head_dim);
    auto fill = [&](std::vector<int8_t>& x) {
      for (auto& e : x) e = static_cast<int8_t>(static_cast<int>(rng() % (2 * qmax + 1)) - qmax);
    };
    for (int l = 0; l < c.n_layers; ++l) {
      for (int h = 0; h < pl.kv.stored_heads; ++h) {
        const int64_t pages = (context + pl.kv.tokens_per_page - 1) / pl.kv.tokens_per_page;
        std::vector<cim::CModelTile> tiles;
        for (int64_t pg = 0; pg < pages; ++pg) {
          tiles.emplace_back(tp);
          const int64_t n = std::min<int64_t>(pl.kv.tokens_per_page, context - pg * pl.kv.tokens_per_page);
          for (int64_t i = 0; i < n; ++i) {
            fill(k);
            fill(v);
            tiles.back().append(k, v, 0, 0);
          }
        }
        // the newest token's append, counted alone
        cim::CModelTile probe(tp);
        fill(k);
        fill(v);
        probe.append(k, v, 0, 0);
        charge_tile_append(sim, l, probe.events(), 0);
        for (int qh = 0; qh < pl.kv.query_heads_per_stream; ++qh) {
          fill(q);
          cim::TileEvents ev;
          for (auto& tile : tiles) {
            tile.reset_events();
            tile.query(q, cim::query_scale(0.01, tp.head_dim));
            ev += tile.events();
          }
          charge_tile_query(sim, l, ev, tp.head_dim, tile_combine_ops(pages, tp.head_dim));
        }
      }
      sim.add(l, Op::kv_write, EventKind::fp32_mul, 2 * int64_t{c.head_dim()} * c.n_kv_heads);
    }
    for (Op op : {Op::attn_scores, Op::softmax, Op::attn_weighted_sum, Op::kv_write})
      for (auto kind : all_event_kinds())
        ASSERT_EQ(t.cim.count(op, kind), sim.count(op, kind)) << name(op) << " " << name(kind);
  }
}

TEST(Analysis, FiguresFollowHandFormulasOnTheEmbeddedModel) {
  const HardwareSpec hw = default_hw();
  const ModelShape shape = shape_preset("stories260k");
  const Placement pl = place(shape, hw, Policy{}, 100);
  const Figures f = figures(pl);
  // 116 weight macros (test_weights). KV sized to the work, never to fill the chip: 100 tokens
  // of 20 streams (5 layers x 4 KV heads) need 2 pages each, 40 pages in 40 tiles of 64 tokens =
  // 5 macros (8 tiles each); the chip built is 121 macros in whole tiles of 8: 128 of the spec's
  // 1024. Capacity 2 pages = 128 tokens per stream (the page rounding is the headroom).
  EXPECT_EQ(f.weight_macros, 116);
  EXPECT_EQ(f.macros_total, 128);
  EXPECT_EQ(f.kv_macros_reserved, 5);
  EXPECT_EQ(f.kv_tiles, 40);
  EXPECT_EQ(f.max_context_tokens, 128);
  EXPECT_EQ(f.kv_pages_in_use, 40);
  EXPECT_EQ(f.kv_macros_used, 5);
  EXPECT_EQ(f.macros_used, 121);
  // Each token writes K and V (8 dims x 8 bits each) into 20 streams: 20 x 128 = 2560 bits.
  EXPECT_EQ(f.kv_cell_writes_per_token, 2560);
  // Data cells: every weight bit (weights x 8) and 100 tokens x 20 streams x 128 bits.
  const double weight_bits = 8.0 * kvcim::cmodel::energy::weight_elements(shape.config);
  const double data = weight_bits + 100.0 * 20 * 128;
  EXPECT_NEAR(f.utilization, data / (121.0 * 65536), 1e-12);
  EXPECT_NEAR(f.fragmentation, 1 - data / (116.0 * 65536 + 40.0 * 8192), 1e-12);
  EXPECT_EQ(f.resident_tokens, 20 * 100);
  EXPECT_EQ(f.offchip_tokens, 0);
  EXPECT_FALSE(f.endurance_writes.has_value());  // SRAM
  EXPECT_TRUE(std::isinf(f.lifetime_tokens));
  EXPECT_GT(f.energy_pj_cim, 0);
  EXPECT_GT(f.energy_pj_conventional, 0);
  EXPECT_GT(f.latency_ns_cim, 0);
}

TEST(Analysis, SpillAndWindowKeepGeneratingBeyondCapacity) {
  HardwareSpec hw = default_hw();
  hw.organization.macros = 118;  // 116 for weights, 2 for KV: 16 tiles, 20 streams
  const ModelShape shape = shape_preset("stories260k");
  Policy p;
  p.tokens_per_page = 16;  // 64 slots: 3 pages per stream, the first 4 streams 4
  const Placement pl = place(shape, hw, p, 48);
  EXPECT_EQ(figures(pl).max_context_tokens, 48);
  EXPECT_THROW(place(shape, hw, p, 49), kvcim::Error);

  Policy spill = p;
  spill.overflow = KvOverflow::spill;
  const Figures s = figures(place(shape, hw, spill, 200));
  // sequence 0's 20 streams: 4 hold 4 pages (64 tokens with the newest page of 8), 16 hold 3.
  // 200 tokens = 12 full pages + 8: the newest 4 (or 3) pages are resident
  EXPECT_EQ(s.resident_tokens + s.offchip_tokens, 20 * 200);
  EXPECT_EQ(s.resident_tokens, 4 * (3 * 16 + 8) + 16 * (2 * 16 + 8));
  EXPECT_EQ(s.evicted_tokens, 0);
  const Figures s400 = figures(place(shape, hw, spill, 408));  // newest page again 8 tokens
  EXPECT_GT(s400.energy_pj_cim, s.energy_pj_cim);  // more spilled tokens to fetch
  EXPECT_EQ(s400.resident_tokens, s.resident_tokens);

  Policy win = p;
  win.overflow = KvOverflow::window;
  win.window_tokens = 20;  // 2 pages
  const Figures w = figures(place(shape, hw, win, 200));
  EXPECT_EQ(w.offchip_tokens, 0);
  EXPECT_EQ(w.resident_tokens, 20 * (16 + 8));
  EXPECT_EQ(w.evicted_tokens, 20 * 200 - w.resident_tokens);
  EXPECT_LT(w.energy_pj_cim, s.energy_pj_cim);  // nothing fetched from off-chip
}

TEST(Analysis, NonVolatileKvWearsOut) {
  const HardwareSpec hw = load_hardware_spec(std::string(KVCIM_SOURCE_DIR) + "/configs/hw/reram_analog.yaml");
  const ModelShape shape = shape_preset("stories260k");
  const Placement pl = place(shape, hw, Policy{}, 256);
  const Figures f = figures(pl);
  ASSERT_TRUE(f.endurance_writes.has_value());
  // fits: each cell written once per sequence of 256 tokens: lifetime = E x 256 tokens
  EXPECT_DOUBLE_EQ(f.lifetime_tokens, *f.endurance_writes * 256);
  // ideal wear levelling spreads the writes over every slot
  EXPECT_DOUBLE_EQ(f.lifetime_tokens_wear_levelled,
                   *f.endurance_writes * pl.kv.slots() * pl.kv.tokens_per_page / 20.0);
  EXPECT_GT(f.lifetime_seconds, 0);
  EXPECT_FALSE(std::isinf(f.lifetime_seconds));
}

TEST(Analysis, GenerationLedgerSumsTokens) {
  const HardwareSpec hw = default_hw();
  const Placement pl = place(shape_preset("stories260k"), hw, Policy{}, 0);
  const TokenLedgers g = generation_ledgers(pl, 70);
  // 70 appends per stream; 20 streams; 128 bits each
  EXPECT_EQ(g.cim.count(Op::kv_write, EventKind::cell_write), 70 * 20 * 128);
  // queries: per token, 8 query heads per layer x pages (1 until 64 tokens, then 2)
  int64_t queries = 0;
  for (int c = 1; c <= 70; ++c) queries += 5 * 8 * (c <= 64 ? 1 : 2);
  EXPECT_EQ(g.cim.count(Op::softmax, EventKind::int32_add) / 9,
            [&] { int64_t n = 0; for (int c = 1; c <= 70; ++c) n += 5 * 8 * c; return n; }());
  (void)queries;
}

TEST(Analysis, CollapsedLayersKeepTotalsAndFastEnergyEqualsBreakdown) {
  std::mt19937_64 rng(8);
  for (int trial = 0; trial < 20; ++trial) {
    const auto [hw, shape, p, pl] = random_spilled(rng);
    const int64_t ctx = 1 + static_cast<int64_t>(rng() % 50);
    const TokenLedgers a = token_ledgers(shape, hw, p, pl.weights, pl.kv, ctx, true);
    const TokenLedgers b = token_ledgers(shape, hw, p, pl.weights, pl.kv, ctx, false);
    EXPECT_EQ(b.cim.n_layers(), 1);
    for (auto op : all_ops())
      for (auto k : all_event_kinds()) {
        ASSERT_EQ(a.cim.count(op, k), b.cim.count(op, k));
        ASSERT_EQ(a.periphery.count(op, k), b.periphery.count(op, k));
      }
    const Costs c = hw.costs(), kvc = hw.kv_costs();
    EXPECT_EQ(a.cim.energy_aj(c, &kvc), a.cim.cost(c, &kvc).energy_aj);
    EXPECT_EQ(a.periphery.energy_aj(c), a.periphery.cost(c).energy_aj);
  }
}

TEST(Analysis, OffchipMemoryMustHoldWhatIsNotInCim) {
  HardwareSpec hw = default_hw();
  hw.organization.macros = 118;
  const ModelShape shape = shape_preset("stories260k");
  Policy spill;
  spill.overflow = KvOverflow::spill;
  spill.tokens_per_page = 16;
  const Placement pl = place(shape, hw, spill, 200);
  const Figures f = figures(pl);
  // the embedding table (512 x 64 bytes) and every spilled token-head (K and V, 8 x 8 bits each)
  const int64_t spilled_all = 20 * 200 - f.resident_tokens;  // one sequence
  EXPECT_EQ(f.offchip_tokens, spilled_all);
  EXPECT_EQ(f.offchip_bytes, 512 * 64 + spilled_all * 16);
  hw.offchip.capacity = f.offchip_bytes - 1;
  try {
    place(shape, hw, spill, 200);
    FAIL() << "placed more than off-chip memory holds";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("offchip.capacity"), std::string::npos) << e.what();
  }
  hw.offchip.capacity = f.offchip_bytes;
  EXPECT_NO_THROW(place(shape, hw, spill, 200));
}
