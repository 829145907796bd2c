// A placement cut into dies and what crosses between them (see dies.hpp).
#include "kvcim/mapper/dies.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/enum_names.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/text.hpp"

namespace kvcim::mapper {

namespace energy = cmodel::energy;

constexpr std::array kDieItemNames{"q", "k", "v", "kv", "o", "w1", "w3", "w2"};
static_assert(kDieItemNames.size() == kDieItems);
const char* name(DieItem item) { return enum_name(item, kDieItemNames); }

namespace {

constexpr Op kItemOps[] = {Op::q_proj, Op::k_proj, Op::v_proj, Op::other, Op::o_proj,
                           Op::ffn_w1, Op::ffn_w3, Op::ffn_w2};
constexpr int kKv = static_cast<int>(DieItem::kv);
constexpr int kClassifier = 0, kSpare = 1;

// Per layer and item: its macros (every replica's on-chip blocks; the layer's share of the KV
// macros), and replica 0's matrix for the partial sums.
struct Items {
  std::vector<std::array<int64_t, kDieItems>> units;  // n_layers + 1 rows
  std::vector<std::array<const MatrixPlacement*, kDieItems>> matrix;
  int replicas = 1;
};

Items items_of(const ModelShape& shape, const HardwareSpec& hw, const WeightPlacement& w, const KvLayout& kv) {
  const int L = shape.config.n_layers;
  Items it;
  it.units.assign(L + 1, {});
  it.matrix.assign(L + 1, {});
  int64_t weight_units = 0;
  for (const MatrixPlacement& m : w.matrices) {
    const int row = m.layer == energy::kModelLevel ? L : m.layer;
    int item = kClassifier;
    if (m.layer != energy::kModelLevel)
      item = static_cast<int>(std::find(std::begin(kItemOps), std::end(kItemOps), m.op) - std::begin(kItemOps));
    it.units[row][item] += m.onchip_blocks;
    weight_units += m.onchip_blocks;
    if (m.replica == 0) it.matrix[row][item] = &m;
    it.replicas = std::max(it.replicas, m.replica + 1);
  }
  for (int l = 0; l < L; ++l)  // the KV macros spread evenly over the layers
    it.units[l][kKv] = kv.macros * (l + 1) / L - kv.macros * l / L;
  it.units[L][kSpare] = std::max<int64_t>(0, hw.organization.macros - weight_units - kv.macros);
  return it;
}

// Bits of one stream of one sequence: its inputs (q of its query heads, its K and V), its output,
// and the partial output of a stream whose pages lie on two dies.
struct StreamBits {
  double in = 0, out = 0, partial = 0;
};
StreamBits stream_bits(const HardwareSpec& hw, const KvLayout& kv) {
  const double hd = kv.tile.head_dim, qh = kv.query_heads_per_stream, ab = hw.precision.activation_bits;
  return {qh * hd * ab + hd * (kv.tile.kb() + kv.tile.vb()), qh * hd * ab, qh * hd * energy::kAccumulatorBits};
}

double live_bits(const Items& it, const ModelShape& shape, const HardwareSpec& hw, const KvLayout& kv, int layer,
                 int item, int64_t units_before) {
  const cmodel::Config& c = shape.config;
  const double ab = hw.precision.activation_bits;
  const double X = c.dim * ab, Q = double(c.n_heads) * c.head_dim() * ab, H = c.hidden_dim * ab;
  const StreamBits s = stream_bits(hw, kv);
  const double streams_in = kv.stored_heads * s.in, streams_out = kv.stored_heads * s.out;
  // partial sums of the columns blocks [0, b) of every replica have touched
  auto partial = [&](const MatrixPlacement* m) {
    if (!m || units_before <= 0) return 0.0;
    const int64_t b = units_before / it.replicas;
    const int64_t cols = std::min<int64_t>(std::min<int64_t>(b, m->col_tiles) * hw.macro.weights_per_row(), m->n_out);
    return static_cast<double>(cols) * energy::kAccumulatorBits;
  };
  if (layer == c.n_layers) return item == kClassifier ? X + partial(it.matrix[layer][kClassifier]) : 0.0;
  switch (static_cast<DieItem>(item)) {
    case DieItem::q: return X + partial(it.matrix[layer][item]);
    case DieItem::k: return X + Q + partial(it.matrix[layer][item]);
    case DieItem::v: return X + Q + double(c.kv_dim()) * kv.tile.kb() + partial(it.matrix[layer][item]);
    case DieItem::kv: {
      // the layer's streams of every sequence in order; j of them done (their outputs cross),
      // the rest still to come (their inputs cross), one possibly cut through its pages
      const int64_t n = it.units[layer][kKv], S = kv.sequences, total = S * kv.stored_heads;
      if (n <= 0 || units_before <= 0) return X + streams_in;
      const int64_t j = units_before * total / n;
      const bool cut_through = (units_before * total) % n != 0;
      const double step = static_cast<double>(S) * X + static_cast<double>(j) * s.out +
                          static_cast<double>(total - j) * s.in + (cut_through ? s.partial : 0.0);
      return step / static_cast<double>(S);
    }
    case DieItem::o: return X + streams_out + partial(it.matrix[layer][item]);
    case DieItem::w1: return X + partial(it.matrix[layer][item]);
    case DieItem::w3: return X + H + partial(it.matrix[layer][item]);
    case DieItem::w2: return X + H + partial(it.matrix[layer][item]);
  }
  return 0;
}

}  // namespace

double live_bits_per_token(const ModelShape& shape, const HardwareSpec& hw, const WeightPlacement& weights,
                           const KvLayout& kv, int layer, int item, int64_t units_before) {
  return live_bits(items_of(shape, hw, weights, kv), shape, hw, kv, layer, item, units_before);
}

DiePlan plan_dies(const ModelShape& shape, const HardwareSpec& hw, const WeightPlacement& weights,
                  const KvLayout& kv) {
  const int L = shape.config.n_layers;
  const Items it = items_of(shape, hw, weights, kv);
  DiePlan plan;
  plan.wafer_scale = hw.die.wafer_scale;
  plan.limit_mm2 = hw.die.limit_mm2();
  // areas: a macro, a KV macro with its share of the tiles' logic, the periphery spread over all
  const ChipArea chip = cim_area(hw, kv.tiles);
  const double n_macros = static_cast<double>(std::max<int64_t>(1, hw.organization.macros));
  const double macro_mm2 = (chip.macros_mm2 + chip.adcs_mm2) / n_macros;
  const double kv_macro_mm2 =
      macro_mm2 + (kv.macros > 0 ? chip.tile_logic_mm2 / static_cast<double>(kv.macros) : 0.0);
  const double own = macro_mm2 * n_macros + chip.tile_logic_mm2;
  const double spread = own > 0 ? chip.total_mm2() / own : 1.0;  // die area per unit of its own
  const double cap = plan.limit_mm2 / spread;                    // in own area
  const char* limit_key = plan.wafer_scale ? "die.wafer_mm2" : "die.reticle_mm2";
  if (std::max(macro_mm2, kv_macro_mm2) > cap) {
    fail(hw.source.empty() ? "hardware spec" : hw.source, limit_key, formatted("%g", plan.limit_mm2),
         formatted("smaller than one macro with its share of the buffer and lanes (%.4g mm2)",
                   std::max(macro_mm2, kv_macro_mm2) * spread));
  }
  const double eps = cap * 1e-12;

  plan.dies.emplace_back();
  plan.item_die.assign(L + 1, {});
  double used = 0;
  auto unit_mm2 = [&](int layer, int item) { return layer < L && item == kKv ? kv_macro_mm2 : macro_mm2; };
  auto new_die = [&](int layer, int item, int64_t before) {
    plan.dies.emplace_back();
    used = 0;
    if (layer == L && item == kSpare) return;  // nothing of the token crosses to idle macros
    plan.cuts.push_back({layer, item, before, live_bits(it, shape, hw, kv, layer, item, before)});
  };
  auto put = [&](int layer, int item, int64_t n) {
    Die& d = plan.dies.back();
    if (layer < L && item == kKv) d.kv_macros += n;
    else if (layer == L && item == kSpare) d.spare_macros += n;
    else d.weight_macros += n;
    if (d.first_layer < 0) d.first_layer = layer;
    d.last_layer = layer;
    used += static_cast<double>(n) * unit_mm2(layer, item);
  };
  // one item: whole here, whole on a new die, or poured over dies
  auto place_item = [&](int layer, int item) {
    const int64_t n = it.units[layer][item];
    plan.item_die[layer][item] = static_cast<int>(plan.dies.size()) - 1;
    if (n == 0) return;
    const double a = unit_mm2(layer, item), area = static_cast<double>(n) * a;
    const bool spare = layer == L && item == kSpare;  // idle macros fill what is left
    if (!spare && used + area > cap + eps && used > 0 && area <= cap + eps) new_die(layer, item, 0);
    plan.item_die[layer][item] = static_cast<int>(plan.dies.size()) - 1;
    for (int64_t done = 0; done < n;) {
      const int64_t fit = std::min<int64_t>(n - done, static_cast<int64_t>(std::floor((cap - used + eps) / a)));
      if (fit <= 0) {
        new_die(layer, item, done);
        continue;
      }
      put(layer, item, fit);
      done += fit;
    }
  };
  for (int l = 0; l <= L; ++l) {
    const int n_items = l < L ? kDieItems : 2;
    double area = 0;
    int first = -1;
    for (int i = 0; i < n_items; ++i) {
      area += static_cast<double>(it.units[l][i]) * unit_mm2(l, i);
      if (first < 0 && it.units[l][i] > 0 && !(l == L && i == kSpare)) first = i;
    }
    // a whole layer onto a new die when it does not fit beside what is there but fits on one
    if (l < L && first >= 0 && used > 0 && used + area > cap + eps && area <= cap + eps) new_die(l, first, 0);
    for (int i = 0; i < n_items; ++i) place_item(l, i);
  }

  for (Die& d : plan.dies) {
    d.area_mm2 = (static_cast<double>(d.weight_macros + d.spare_macros) * macro_mm2 +
                  static_cast<double>(d.kv_macros) * kv_macro_mm2) * spread;
  }
  const double bits_per_ns = 8 * hw.link.bandwidth_gb_s;
  for (const DieCut& c : plan.cuts) {
    plan.link_bits_per_token += c.bits_per_token;
    plan.link_latency_ns += hw.link.latency_ns + c.bits_per_token / bits_per_ns;
  }
  plan.link_energy_pj = plan.link_bits_per_token * hw.link.energy_pj_per_bit;
  return plan;
}

DiePlan plan_dies(const Placement& p) { return plan_dies(p.shape, p.hw, p.weights, p.kv); }

DiePlan with_idle_links(DiePlan plan, const HardwareSpec& hw, double step_ns, int64_t sequences) {
  plan.idle_links = leaking_links(hw, plan.dies.size());
  // 1 mW for 1 ns is 1 pJ
  plan.link_idle_pj_per_token = sequences > 0 ? static_cast<double>(plan.idle_links) * hw.link.idle_power_mw * step_ns /
                                                    static_cast<double>(sequences)
                                              : 0;
  return plan;
}

nlohmann::json to_json(const DiePlan& plan, const HardwareSpec& hw) {
  nlohmann::json dies = nlohmann::json::array();
  for (size_t i = 0; i < plan.dies.size(); ++i) {
    const Die& d = plan.dies[i];
    dies.push_back({{"die", i},
                    {"area_mm2", d.area_mm2},
                    {"utilization", d.area_mm2 / plan.limit_mm2},
                    {"macros", d.macros()},
                    {"weight_macros", d.weight_macros},
                    {"kv_macros", d.kv_macros},
                    {"spare_macros", d.spare_macros},
                    {"first_layer", d.first_layer},
                    {"last_layer", d.last_layer}});
  }
  const int L = static_cast<int>(plan.item_die.size()) - 1;
  nlohmann::json cuts = nlohmann::json::array();
  for (const DieCut& c : plan.cuts)
    cuts.push_back({{"layer", c.layer == L ? nlohmann::json("classifier") : nlohmann::json(c.layer)},
                    {"item", c.layer == L ? "classifier" : name(static_cast<DieItem>(c.item))},
                    {"macros_before", c.units_before},
                    {"bits_per_token", c.bits_per_token}});
  return {{"count", plan.dies.size()},
          {"limit_mm2", plan.limit_mm2},
          {"wafer_scale", plan.wafer_scale},
          {"dies", dies},
          {"cuts", cuts},
          {"link", {{"energy_pj_per_bit", hw.link.energy_pj_per_bit},
                    {"bandwidth_gb_s", hw.link.bandwidth_gb_s},
                    {"latency_ns", hw.link.latency_ns}}},
          {"link_bits_per_token", plan.link_bits_per_token},
          {"link_energy_pj_per_token", plan.link_energy_pj},
          {"link_latency_ns_per_token", plan.link_latency_ns},
          {"idle_links", plan.idle_links},
          {"link_idle_power_mw", hw.link.idle_power_mw},
          {"link_idle_pj_per_token", plan.link_idle_pj_per_token},
          {"assumptions",
           "layers pipelined over dies in the token's order; every die boundary one link crossed once per "
           "token by the activations live across it; buffer and lanes spread over the dies by area"}};
}

std::string dies_summary(const DiePlan& plan, const HardwareSpec& hw, const std::string& indent) {
  std::ostringstream o;
  double lo = plan.dies.front().area_mm2, hi = lo;
  for (const Die& d : plan.dies) lo = std::min(lo, d.area_mm2), hi = std::max(hi, d.area_mm2);
  const std::string limit = formatted("%g mm2", plan.limit_mm2) + (plan.wafer_scale ? " (wafer-scale)" : " (reticle)");
  o << "dies      " << plan.dies.size() << (plan.dies.size() == 1 ? " die" : " dies") << " of at most " << limit
    << ": " << formatted("%.4g", lo);
  if (hi > lo) o << "-" << formatted("%.4g", hi);
  o << " mm2 each (" << formatted("%.2g", lo / plan.limit_mm2);
  if (hi > lo) o << "-" << formatted("%.2g", hi / plan.limit_mm2);
  o << " of the limit)";
  if (plan.cuts.empty()) {
    o << "; no die-to-die link on the token's path";
  } else {
    o << "\n" << indent << "links     " << plan.cuts.size() << " crossed per token: " << formatted("%.6g", plan.link_bits_per_token)
      << " bits, " << formatted("%.4g", plan.link_energy_pj) << " pJ/token, " << formatted("%.4g", plan.link_latency_ns)
      << " ns/token (" << formatted("%g pJ/bit", hw.link.energy_pj_per_bit) << ", " << formatted("%g GB/s", hw.link.bandwidth_gb_s)
      << ", " << formatted("%g ns", hw.link.latency_ns) << " per link)";
    if (plan.idle_links > 0)
      o << "; idle " << formatted("%.4g", plan.link_idle_pj_per_token) << " pJ/token (" << plan.idle_links
        << (plan.idle_links == 1 ? " link" : " links") << " at " << formatted("%g mW", hw.link.idle_power_mw)
        << " over the step, idle silicon leaking)";
    else
      o << "; idle: the links sleep between crossings (idle silicon gated)";
  }
  return o.str();
}

}  // namespace kvcim::mapper
