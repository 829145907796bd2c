// Analytic events per token, latency bound and derived figures (see analysis.hpp).
#include "kvcim/mapper/analysis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/cmodel/energy/cim_charges.hpp"
#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/enum_names.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/batch.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/dies.hpp"

namespace kvcim::mapper {

namespace cim = cmodel::cim;
namespace energy = cmodel::energy;
using energy::EventKind;
using energy::Ledger;

namespace {

// Two classes of streams in lock-step: the first `streams_with_extra_page()` streams hold one
// page more than the others. Per layer of sequence 0, how many streams are in the first class.
int64_t extra_streams_in_layer(const KvLayout& kv, int layer) {
  const int64_t first = int64_t{layer} * kv.stored_heads;
  return std::clamp<int64_t>(kv.streams_with_extra_page() - first, 0, kv.stored_heads);
}

// The attention events of one stream class, computed once.
struct StreamClass {
  StreamTokens tokens;
  cim::TileEvents query;   // all pages, one query head
  int64_t parts = 0;       // partial results joined per query (pages + an off-chip part)
};

StreamClass stream_class(const KvLayout& kv, const Policy& p, int64_t stream, int64_t context) {
  StreamClass c;
  c.tokens = stream_tokens(kv, p, stream, context);
  const StreamTokens& s = c.tokens;
  if (s.resident_pages > 0) {
    c.query = energy::tile_query_events(kv.tile, static_cast<int>(s.last_page_tokens));
    if (s.resident_pages > 1)
      c.query += times_fields(energy::tile_query_events(kv.tile, kv.tokens_per_page), s.resident_pages - 1);
  }
  c.parts = s.resident_pages + (s.offchip_tokens > 0 ? 1 : 0);
  return c;
}

void charge_stream(TokenLedgers& t, const HardwareSpec& hw, const KvLayout& kv, int layer,
                   const StreamClass& c, int64_t n_streams, const Floorplan& f) {
  if (n_streams == 0) return;
  const int hd = kv.tile.head_dim, qh = kv.query_heads_per_stream;
  const StreamTokens& s = c.tokens;
  const EventKind off = hw.offchip_event();
  const int64_t token_bits = int64_t{hd} * (kv.tile.kb() + kv.tile.vb());
  if (s.resident_pages > 0) {
    // wires between the centre and the tiles: the new K and V in, each query head's q in and its
    // output from every page's tile back (chip.hpp)
    auto wire = [&](Op op, double bits) {
      t.periphery.add(layer, op, EventKind::wire_bit_um,
                      std::llround(static_cast<double>(n_streams) * bits * f.edge_um));
    };
    wire(Op::kv_write, static_cast<double>(token_bits));
    wire(Op::attn_scores, double(qh) * hd * hw.precision.activation_bits);
    wire(Op::attn_weighted_sum, double(qh) * hd * energy::kAccumulatorBits * double(s.resident_pages));
    energy::charge_tile_query(t.cim, layer, times_fields(c.query, qh * n_streams), qh * n_streams * hd,
                              qh * n_streams * energy::tile_combine_ops(c.parts, hd));
    // the new token is written into the newest page, which is on chip
    energy::charge_tile_append(t.cim, layer, times_fields(energy::tile_append_events(kv.tile), n_streams), 0);
  } else {
    t.periphery.add(layer, Op::kv_write, off, n_streams * token_bits);
  }
  if (s.offchip_tokens > 0) {
    // attention over spilled pages on the digital engine, and the spill traffic: in steady state
    // one token's K and V leave the chip per generated token (amortised over a page)
    energy::charge_conventional_attention(t.periphery, layer, qh * n_streams, n_streams, hd,
                                          s.offchip_tokens, 0, kv.tile.kv_bits,
                                          EventKind::int8_mac, off);
    energy::charge_softmax(t.periphery, layer, qh * n_streams, s.offchip_tokens);
    if (s.resident_pages > 0) t.periphery.add(layer, Op::kv_write, off, n_streams * token_bits);
  }
  // The tile keeps scores and probabilities inside (K macro -> softmax unit -> V macro): only q
  // and the output cross the buffer; the digital engine's share over spilled tokens does not.
  energy::charge_attention_buffer(t.periphery, layer, qh * n_streams, hd, s.offchip_tokens,
                                  kv.tile.kv_bits, kv.tile.prob_bits);
}

DieItem item_of(Op op) {
  switch (op) {
    case Op::q_proj: return DieItem::q;
    case Op::k_proj: return DieItem::k;
    case Op::v_proj: return DieItem::v;
    case Op::o_proj: return DieItem::o;
    case Op::ffn_w1: return DieItem::w1;
    case Op::ffn_w3: return DieItem::w3;
    case Op::ffn_w2: return DieItem::w2;
    default: return DieItem::q;  // the classifier: its own row
  }
}

}  // namespace

cim::MacroEvents blocks_compute_events(const MatrixPlacement& m, const cim::MacroSpec& spec,
                                       int64_t k) {
  k = std::clamp<int64_t>(k, 0, m.blocks());
  cim::MacroEvents sum;
  if (k == 0) return sum;
  const int R = spec.rows, W = spec.weights_per_row();
  const int RT = m.row_tiles, CT = m.col_tiles;
  const int last_rows = static_cast<int>(m.n_in - int64_t{RT - 1} * R);
  const int last_outs = static_cast<int>(m.n_out - int64_t{CT - 1} * W);
  auto row_tile = [&](int rows) {
    cim::MacroEvents e = cim::compute_events(spec, rows, last_outs);
    if (CT > 1) e += times_fields(cim::compute_events(spec, rows, W), CT - 1);
    return e;
  };
  const int64_t full_rows = k / CT, rem = k % CT;
  const int64_t full_height = std::min<int64_t>(full_rows, RT - 1);
  if (full_height > 0) sum += times_fields(row_tile(R), full_height);
  if (full_rows == RT) sum += row_tile(last_rows);
  if (rem > 0) {  // a partial row tile: its first rem blocks, none of them the last column
    const int rows = full_rows == RT - 1 ? last_rows : R;
    sum += times_fields(cim::compute_events(spec, rows, W), rem);
  }
  return sum;
}

int64_t blocks_elements(const MatrixPlacement& m, const cim::MacroSpec& spec, int64_t k) {
  k = std::clamp<int64_t>(k, 0, m.blocks());
  const int64_t R = spec.rows, W = spec.weights_per_row();
  const int64_t full_rows = k / m.col_tiles, rem = k % m.col_tiles;
  int64_t n = std::min(full_rows * R, m.n_in) * m.n_out;
  if (rem > 0) n += std::min(R, m.n_in - full_rows * R) * std::min(rem * W, m.n_out);
  return n;
}

Ledger TokenLedgers::total() const {
  Ledger l = cim;
  l += periphery;
  return l;
}

TokenLedgers token_ledgers(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                           const WeightPlacement& weights, const KvLayout& kv, int64_t context,
                           bool per_layer, const LatencyBound* latency) {
  const cmodel::Config& c = shape.config;
  if (context < 1) fail("map", "context", std::to_string(context), "expected >= 1 token");
  const int n_slots = per_layer ? c.n_layers : 1;
  auto slot = [&](int layer) { return per_layer || layer == energy::kModelLevel ? layer : 0; };
  TokenLedgers t{Ledger(n_slots), Ledger(n_slots), 0};
  const EventKind off = hw.offchip_event();
  const int wb = hw.precision.weight_bits, ab = hw.precision.activation_bits;
  // the macros holding data at this context: the weights' and the KV pages' in use (every
  // stream at `context` tokens, whole pages), as far as the reserved KV macros go
  const double kv_cells = static_cast<double>(kv.streams()) *
                          std::ceil(static_cast<double>(context) / std::max(1, kv.tokens_per_page)) *
                          static_cast<double>(kv.page_cells());
  const int64_t kv_used = std::min<int64_t>(
      kv.macros, static_cast<int64_t>(std::ceil(kv_cells / static_cast<double>(hw.macro_cells()))));
  // each die its own floorplan (its macros in use: its weights and its share of the KV in use)
  const DiePlan dies = plan_dies(shape, hw, weights, kv);
  std::vector<Floorplan> plans;
  if (dies.dies.size() == 1) {
    plans.push_back(floorplan(hw, weights.macros_used + kv_used, 0));
  } else {
    const double kv_in_use = kv.macros > 0 ? static_cast<double>(kv_used) / static_cast<double>(kv.macros) : 0;
    for (const Die& d : dies.dies)
      plans.push_back(floorplan(
          hw, d.weight_macros + std::llround(static_cast<double>(d.kv_macros) * kv_in_use), 0));
  }
  auto plan_of = [&](int layer, DieItem item) -> const Floorplan& {
    const size_t row = layer == energy::kModelLevel ? static_cast<size_t>(c.n_layers) : static_cast<size_t>(layer);
    return plans[static_cast<size_t>(dies.item_die[row][layer == energy::kModelLevel ? 0 : static_cast<int>(item)])];
  };

  // Weights (replica 0 serves the sequence). Matrices fully on chip repeat across layers: their
  // events are computed once per shape.
  std::map<std::pair<int64_t, int64_t>, cim::MacroEvents> full;
  for (const MatrixPlacement& m : weights.matrices) {
    if (m.replica != 0) continue;
    if (m.onchip_blocks > 0) {
      cim::MacroEvents e;
      if (m.onchip_blocks == m.blocks()) {
        auto key = std::make_pair(m.n_in, m.n_out);
        auto it = full.find(key);
        if (it == full.end()) it = full.emplace(key, blocks_compute_events(m, hw.macro, m.blocks())).first;
        e = it->second;
      } else {
        e = blocks_compute_events(m, hw.macro, m.onchip_blocks);
      }
      energy::charge_cim_linear(t.cim, slot(m.layer), m.op, e, m.n_out * (m.row_tiles - 1), m.n_out, m.n_in);
    }
    const int64_t off_elems = m.n_in * m.n_out - blocks_elements(m, hw.macro, m.onchip_blocks);
    if (off_elems > 0)
      energy::charge_conventional_matvec(t.periphery, slot(m.layer), m.op, off_elems, 1, wb,
                                         EventKind::int8_mac, 0, off);
    energy::charge_matvec_buffer(t.periphery, slot(m.layer), m.op, m.n_in, m.n_out, ab);
    t.periphery.add(slot(m.layer), m.op, EventKind::wire_bit_um, matvec_wire_bit_um(m, hw, plan_of(m.layer, item_of(m.op))));
  }

  // Attention: two stream classes (with and without the extra page).
  const StreamClass plain = stream_class(kv, policy, kv.streams() - 1, context);
  const bool any_extra = kv.streams_with_extra_page() > 0;
  const StreamClass extra = any_extra ? stream_class(kv, policy, 0, context) : plain;
  for (int l = 0; l < c.n_layers; ++l) {
    const int64_t n_extra = extra_streams_in_layer(kv, l);
    const Floorplan& plan = plan_of(l, DieItem::kv);
    charge_stream(t, hw, kv, slot(l), extra, n_extra, plan);
    charge_stream(t, hw, kv, slot(l), plain, kv.stored_heads - n_extra, plan);
    // K and V are quantised once per KV head, however many copies are stored
    t.cim.add(slot(l), Op::kv_write, EventKind::fp32_mul, 2 * int64_t{c.head_dim()} * c.n_kv_heads);
    energy::charge_layer_elementwise(t.periphery, slot(l), c);
  }
  energy::charge_model_elementwise(t.periphery, c);
  t.periphery.add(energy::kModelLevel, Op::other, off, int64_t{c.dim} * wb);  // embedding row
  // the activations crossing from die to die (a step's over its sequences, per token)
  for (const DieCut& cut : dies.cuts)
    t.periphery.add(cut.layer == c.n_layers ? energy::kModelLevel : slot(cut.layer), Op::other,
                    EventKind::die_link_bit, std::llround(cut.bits_per_token));
  // leakage of every macro and the buffer, and the lanes, for as long as the token takes; clock
  // and sequencing of every digital operation
  const double latency_ns =
      (latency ? *latency : cim_latency(shape, hw, policy, weights, kv, context)).total_ns();
  t.leaking_links = leaking_links(hw, dies.dies.size());
  charge_static_and_control(t.periphery, digital_lane_cycles(t.cim) + digital_lane_cycles(t.periphery),
                            cim_kib(hw), hw.digital.units, latency_ns, t.leaking_links);
  return t;
}

TokenLedgers token_ledgers(const Placement& p) {
  return token_ledgers(p.shape, p.hw, p.policy, p.weights, p.kv, p.context);
}

TokenLedgers generation_ledgers(const Placement& p, int64_t steps) {
  TokenLedgers sum{Ledger(p.shape.config.n_layers), Ledger(p.shape.config.n_layers), 0};
  for (int64_t c = 1; c <= steps; ++c) {
    TokenLedgers t = token_ledgers(p.shape, p.hw, p.policy, p.weights, p.kv, c);
    sum.cim += t.cim;
    sum.periphery += t.periphery;
  }
  return sum;
}

constexpr std::array kBoundNames{"compute", "on-chip cycles", "off-chip bytes"};
static_assert(kBoundNames.size() == enum_count(Bound::offchip_bytes));
const char* name(Bound b) { return enum_name(b, kBoundNames); }

double LatencyBound::total_ns() const { return std::max(critical_path_ns(), offchip_ns); }

Bound LatencyBound::bound() const {
  if (offchip_ns >= critical_path_ns()) return Bound::offchip_bytes;
  return 2 * macro_ns >= critical_path_ns() ? Bound::onchip_cycles : Bound::compute;
}

Bound baseline_bound(const energy::LatencyBound& b) {
  if (b.offchip_ns >= std::max(b.onchip_ns, b.compute_ns)) return Bound::offchip_bytes;
  return b.onchip_ns >= b.compute_ns ? Bound::onchip_cycles : Bound::compute;
}

LatencyBound cim_latency(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                         const WeightPlacement& weights, const KvLayout& kv, int64_t context) {
  const cmodel::Config& c = shape.config;
  const energy::Costs costs = hw.costs(), kvc = hw.kv_costs();
  const double cycle = costs.latency(EventKind::macro_cycle) * 1e-6;
  const double kv_cycle = kvc.latency(EventKind::macro_cycle) * 1e-6;
  const double off_bit = costs.latency(hw.offchip_event()) * 1e-6;
  const double mac = costs.latency(EventKind::int8_mac) * 1e-6 / static_cast<double>(hw.digital.units);
  const int wb = hw.precision.weight_bits;
  LatencyBound lb;
  // Per matrix of replica 0 (token order, seven per layer, then the classifier): the cycles of
  // its slowest macro (block 0 is the largest) and its weights left off-chip.
  struct M { double macro_ns = 0, offchip_elems = 0; };
  std::vector<M> ms;
  ms.reserve(weights.matrices.size());
  for (const MatrixPlacement& m : weights.matrices) {
    if (m.replica != 0) continue;
    M x;
    if (m.onchip_blocks > 0) {
      const WeightBlock b = m.block(0, hw.macro);
      x.macro_ns = static_cast<double>(cim::compute_events(hw.macro, b.rows, b.outs).cycles) * cycle;
    }
    x.offchip_elems = static_cast<double>(m.n_in * m.n_out - blocks_elements(m, hw.macro, m.onchip_blocks));
    lb.offchip_bits += x.offchip_elems * wb;
    lb.offchip_weight_bits += x.offchip_elems * wb;
    ms.push_back(x);
  }
  // A stage: its matrices' macros in parallel, their off-chip MACs on the shared lanes.
  auto stage = [&](std::initializer_list<const M*> group) {
    double macro_ns = 0, digital = 0;
    for (const M* m : group) {
      macro_ns = std::max(macro_ns, m->macro_ns);
      digital += m->offchip_elems * mac;
    }
    lb.weights_ns += std::max(macro_ns, digital);
    if (macro_ns >= digital) lb.macro_ns += macro_ns;
    lb.slowest_macro_stage_ns = std::max(lb.slowest_macro_stage_ns, macro_ns);
    lb.lanes_ns += digital;
  };
  for (int l = 0; l < c.n_layers; ++l) {
    const M* m = &ms[7 * static_cast<size_t>(l)];  // q k v o w1 w2 w3
    stage({&m[0], &m[1], &m[2]});
    stage({&m[3]});
    stage({&m[4], &m[6]});
    stage({&m[5]});
  }
  stage({&ms.back()});
  lb.offchip_bits += static_cast<double>(c.dim) * wb;  // the embedding row

  // KV write and attention per layer: the streams of a layer in parallel on their tiles (the
  // slowest stream class sets the pace), their spilled tokens on the shared lanes.
  const StreamTokens plain = stream_tokens(kv, policy, kv.streams() - 1, context);
  const StreamTokens extra = kv.streams_with_extra_page() > 0 ? stream_tokens(kv, policy, 0, context) : plain;
  const double token_bits = double(kv.tile.head_dim) * (kv.tile.kb() + kv.tile.vb());
  auto tile_ns = [&](const StreamTokens& s, double& write, double& attn) {
    write = attn = 0;
    if (s.resident_pages == 0) return;
    write = static_cast<double>(cim::append_cycles(kv.tile)) * kv_cycle;
    const int longest = static_cast<int>(std::min<int64_t>(kv.tokens_per_page, s.resident_tokens));
    attn = static_cast<double>(kv.query_heads_per_stream) *
           static_cast<double>(cim::query_cycles(kv.tile, longest)) * kv_cycle;
  };
  double write_plain, attn_plain, write_extra, attn_extra;
  tile_ns(plain, write_plain, attn_plain);
  tile_ns(extra, write_extra, attn_extra);
  for (int l = 0; l < c.n_layers; ++l) {
    const int64_t n_extra = extra_streams_in_layer(kv, l), n_plain = kv.stored_heads - n_extra;
    double write = 0, attn = 0, spilled = 0;
    for (auto [s, n, w, a] : {std::tuple{&extra, n_extra, write_extra, attn_extra},
                              std::tuple{&plain, n_plain, write_plain, attn_plain}}) {
      if (n == 0) continue;
      write = std::max(write, w);
      attn = std::max(attn, a);
      spilled += static_cast<double>(n * s->offchip_tokens);
      // off-chip traffic: spilled K/V read; the new K/V written off-chip (no page on chip) or,
      // once a stream spills, one token's K/V leaving the chip per token (amortised)
      const bool writes_off = s->resident_pages == 0 || s->offchip_tokens > 0;
      lb.offchip_bits += static_cast<double>(n) *
                         (static_cast<double>(s->offchip_tokens) + (writes_off ? 1.0 : 0.0)) * token_bits;
    }
    const double digital = 2.0 * spilled * kv.tile.head_dim * kv.query_heads_per_stream * mac;
    lb.kv_write_ns += write;
    lb.macro_ns += write;
    lb.attention_ns += std::max(attn, digital);
    if (attn >= digital) lb.macro_ns += attn;
    lb.lanes_ns += digital;
  }
  lb.offchip_ns = lb.offchip_bits * off_bit;
  // Elementwise digital work on the periphery lanes (every layer does the same).
  Ledger layer(1), model(0);
  energy::charge_layer_elementwise(layer, 0, c);
  energy::charge_model_elementwise(model, c);
  for (auto k : energy::all_event_kinds())
    lb.digital_ns += static_cast<double>(layer.count(k) * c.n_layers + model.count(k)) *
                     costs.latency(k) * 1e-6 / static_cast<double>(hw.digital.units);
  lb.lanes_ns += lb.digital_ns;
  lb.link_ns = plan_dies(shape, hw, weights, kv).link_latency_ns;
  return lb;
}

BaselineFigures baseline_figures(const ModelShape& shape, const HardwareSpec& hw, int64_t context,
                                 int64_t sequences) {
  if (context < 1) fail("map", "context", std::to_string(context), "expected >= 1 token");
  const StepFigures s = conventional_step(shape, hw, context, sequences);
  return {s.energy_pj_per_token, s.step_ns, s.bound, s.tokens_per_s, s.shared_pj};
}

Figures figures(const ModelShape& shape, const HardwareSpec& hw, const Policy& policy,
                const WeightPlacement& weights, const KvLayout& kv, int64_t context,
                const BaselineFigures* baseline) {
  const cmodel::Config& c = shape.config;
  Figures f;
  f.context = context;
  f.macros_total = hw.organization.macros;
  f.weight_macros = weights.macros_used;
  f.kv_macros_reserved = kv.macros;
  f.kv_tiles = kv.tiles;
  f.kv_slots = kv.slots();
  f.weight_blocks_offchip = weights.blocks_offchip;
  f.weights_onchip_fraction =
      weights.elements_total ? static_cast<double>(weights.elements_onchip) / weights.elements_total : 0;
  f.max_context_tokens = kv.pages_per_stream() * kv.tokens_per_page;

  // KV pages in use: all sequences in lock-step, two stream classes.
  const int64_t r = kv.streams_with_extra_page();
  const StreamTokens plain = stream_tokens(kv, policy, kv.streams() - 1, context);
  const StreamTokens extra = r > 0 ? stream_tokens(kv, policy, 0, context) : plain;
  f.kv_pages_in_use = r * extra.resident_pages + (kv.streams() - r) * plain.resident_pages;
  const int64_t resident_all = r * extra.resident_tokens + (kv.streams() - r) * plain.resident_tokens;
  const int64_t kv_tiles_used = (f.kv_pages_in_use + kv.pages_per_tile - 1) / kv.pages_per_tile;
  const int64_t mc = hw.macro_cells();
  f.kv_macros_used = (kv_tiles_used * kv.tile_cells + mc - 1) / mc;
  f.macros_used = f.weight_macros + f.kv_macros_used;
  const double data = static_cast<double>(weights.cells_used) +
                      static_cast<double>(resident_all) * static_cast<double>(kv.token_cells());
  const double allocated = static_cast<double>(f.weight_macros) * static_cast<double>(mc) +
                           static_cast<double>(f.kv_pages_in_use) * static_cast<double>(kv.page_cells());
  f.utilization = f.macros_used ? data / (static_cast<double>(f.macros_used) * mc) : 0;
  f.fragmentation = allocated > 0 ? (allocated - data) / allocated : 0;
  f.occupancy = static_cast<double>(f.macros_used) / static_cast<double>(f.macros_total);
  // sequence 0's streams
  const int64_t r0 = std::min(r, kv.streams_per_sequence()), n0 = kv.streams_per_sequence() - r0;
  f.resident_tokens = r0 * extra.resident_tokens + n0 * plain.resident_tokens;
  f.offchip_tokens = r0 * extra.offchip_tokens + n0 * plain.offchip_tokens;
  f.evicted_tokens = r0 * extra.evicted_tokens + n0 * plain.evicted_tokens;
  f.offchip_bytes = offchip_bytes(c, hw, weights,
                                  r * extra.offchip_tokens + (kv.streams() - r) * plain.offchip_tokens);

  // the latency bound first: the ledgers charge leakage over it
  f.latency = cim_latency(shape, hw, policy, weights, kv, context);
  const TokenLedgers t = token_ledgers(shape, hw, policy, weights, kv, context, false, &f.latency);
  f.kv_cell_writes_per_token = t.cim.count(Op::kv_write, EventKind::cell_write);
  f.sequences = policy.sequences;
  const StepFigures cs = cim_step(t, f.latency, hw, policy);
  f.energy_pj_cim = cs.energy_pj_per_token;
  f.latency_ns_cim = cs.step_ns;
  f.bound_cim = cs.bound;
  f.tokens_per_s_cim = cs.tokens_per_s;
  f.shared_pj_cim = cs.shared_pj;
  const BaselineFigures b = baseline ? *baseline : baseline_figures(shape, hw, context, policy.sequences);
  f.energy_pj_conventional = b.energy_pj;
  f.latency_ns_conventional = b.latency_ns;
  f.bound_conventional = b.bound;
  f.tokens_per_s_conventional = b.tokens_per_s;
  f.shared_pj_conventional = b.shared_pj;

  // Endurance of the KV cells: the most-written cell belongs to the stream whose slots are
  // reused most often (ceil(pages / pages it may hold) writes per sequence).
  const double inf = std::numeric_limits<double>::infinity();
  f.lifetime_tokens = f.lifetime_tokens_wear_levelled = f.lifetime_seconds = inf;
  if (hw.kv_tech.endurance_writes) {
    const double E = hw.kv_tech.endurance_writes->value;
    f.endurance_writes = E;
    int64_t most = 0;
    for (const StreamTokens* s : {&plain, &extra}) most = std::max(most, s->cell_writes);
    if (most > 0) {
      f.lifetime_tokens = std::floor(E / static_cast<double>(most)) * static_cast<double>(context) *
                          policy.sequences;
      f.lifetime_tokens_wear_levelled = E * static_cast<double>(kv.slots()) * kv.tokens_per_page /
                                        static_cast<double>(kv.streams_per_sequence());
      f.lifetime_seconds = f.lifetime_tokens / f.tokens_per_s_cim;
    }
  }
  return f;
}

Figures figures(const Placement& p) {
  return figures(p.shape, p.hw, p.policy, p.weights, p.kv, p.context);
}

}  // namespace kvcim::mapper
