#include "kvcim/mapper/report.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/mapper/machine.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/dies.hpp"

namespace kvcim::mapper {

namespace energy = cmodel::energy;
using nlohmann::json;

namespace {

// JSON has no infinity: an unlimited figure is null.
json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

const char* layer_name(int layer) { return layer == energy::kModelLevel ? "model" : nullptr; }

json matrix_json(const MatrixPlacement& m, const HardwareSpec& hw) {
  json j;
  j["op"] = std::string(energy::name(m.op));
  if (m.layer == energy::kModelLevel) j["layer"] = layer_name(m.layer);
  else j["layer"] = m.layer;
  j["replica"] = m.replica;
  j["inputs"] = m.n_in;
  j["outputs"] = m.n_out;
  j["row_tiles"] = m.row_tiles;
  j["col_tiles"] = m.col_tiles;
  j["blocks"] = m.blocks();
  j["onchip_blocks"] = m.onchip_blocks;
  j["first_macro"] = m.first_macro;
  int64_t cells = 0;
  for (int64_t b = 0; b < m.onchip_blocks; ++b) cells += m.block_cells(b, hw.macro);
  // no block on chip: no utilisation to speak of (null, never 0)
  j["utilization"] = m.onchip_blocks
                         ? json(static_cast<double>(cells) / (static_cast<double>(m.onchip_blocks) * hw.macro_cells()))
                         : json(nullptr);
  return j;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

MapReport analyse(const Placement& p) {
  MapReport r;
  r.conventional = conventional_ledger(p.shape, p.hw, p.context - 1);
  r.figures = figures(p.shape, p.hw, p.policy, p.weights, p.kv, p.context);
  r.ledgers = token_ledgers(p);
  {
    const energy::Costs costs = p.hw.costs(), kvc = p.hw.kv_costs();
    r.cim_band = macro_energy_band(r.ledgers.total().cost(costs, &kvc), r.figures.energy_pj_cim, p.hw);
  }
  // Iso-area only when both chips hold the same data; a chip sized for a 70B model with a long
  // batch of contexts has ~1e5 mm2, whose iso-area SRAM leaks beyond the ledger's int64 range
  // (9.2 J per token). Either is reported as unavailable (NaN; null in JSON, with the reason).
  r.comparison = compare(p);
  r.conventional_iso_area_pj = r.comparison.iso_area_conventional_pj.value_or(std::numeric_limits<double>::quiet_NaN());
  return r;
}

json figures_json(const Figures& f) {
  json j;
  j["macros_used"] = f.macros_used;
  j["utilization"] = f.utilization;
  j["max_context_tokens"] = f.max_context_tokens;
  j["kv_cell_writes_per_token"] = f.kv_cell_writes_per_token;
  j["energy_per_token_pj"] = {{"cim", f.energy_pj_cim}, {"conventional", f.energy_pj_conventional}};
  j["batch"] = {{"sequences", f.sequences},
                {"step_ns", {{"cim", f.latency_ns_cim}, {"conventional", f.latency_ns_conventional}}},
                {"tokens_per_s", {{"cim", f.tokens_per_s_cim}, {"conventional", f.tokens_per_s_conventional}}},
                {"shared_pj_per_step", {{"cim", f.shared_pj_cim}, {"conventional", f.shared_pj_conventional}}}};

  j["macros_total"] = f.macros_total;
  j["fragmentation"] = f.fragmentation;
  j["offchip_bytes"] = f.offchip_bytes;
  j["occupancy"] = f.occupancy;
  j["latency_per_token_ns"] = {{"cim", f.latency_ns_cim},
                               {"conventional", f.latency_ns_conventional},
                               {"cim_weights", f.latency.weights_ns},
                               {"cim_kv_write", f.latency.kv_write_ns},
                               {"cim_attention", f.latency.attention_ns},
                               {"cim_digital", f.latency.digital_ns},
                               {"cim_macro_cycles", f.latency.macro_ns},
                               {"cim_critical_path", f.latency.critical_path_ns()},
                               {"cim_offchip", f.latency.offchip_ns},
                               {"cim_offchip_bytes", f.latency.offchip_bits / 8}};
  j["bound_per_token"] = {{"cim", name(f.bound_cim)}, {"conventional", name(f.bound_conventional)}};
  j["endurance"] = {{"writes", f.endurance_writes ? json(*f.endurance_writes) : json(nullptr)},
                    {"lifetime_tokens", finite_or_null(f.lifetime_tokens)},
                    {"lifetime_tokens_wear_levelled", finite_or_null(f.lifetime_tokens_wear_levelled)},
                    {"lifetime_seconds", finite_or_null(f.lifetime_seconds)}};
  j["weights"] = {{"macros_used", f.weight_macros},
                  {"blocks_offchip", f.weight_blocks_offchip},
                  {"onchip_fraction", f.weights_onchip_fraction}};
  j["kv"] = {{"tiles", f.kv_tiles},
             {"slots", f.kv_slots},
             {"macros_reserved", f.kv_macros_reserved},
             {"macros_used", f.kv_macros_used},
             {"pages_in_use", f.kv_pages_in_use},
             {"tokens", {{"resident", f.resident_tokens},
                         {"offchip", f.offchip_tokens},
                         {"evicted", f.evicted_tokens}}}};
  return j;
}

json figures_json(const Placement& p, const MapReport& r) {
  json j = figures_json(r.figures);
  j["context"] = p.context;
  j["energy_per_token_pj"]["conventional_iso_area"] = finite_or_null(r.conventional_iso_area_pj);
  j["energy_band_cim_per_token"] = to_json(r.cim_band);
  j["comparison"] = to_json(r.comparison);
  j["dies"] = to_json(with_idle_links(plan_dies(p), p.hw, r.figures.latency_ns_cim, r.figures.sequences), p.hw);
  if (const std::optional<MachineReport> m = placement_machine(p)) j["baseline_machine"] = m->json;
  return j;
}

json to_json(const Placement& p, const MapReport& r) {
  const Figures& f = r.figures;
  const cmodel::Config& c = p.shape.config;
  const HardwareSpec& hw = p.hw;
  json j = figures_json(p, r);  // the figures, then the placement they come from
  j["schema_version"] = kSchemaVersion;
  j["model"] = {{"name", p.shape.name},       {"dim", c.dim},
                {"hidden", c.hidden_dim},      {"layers", c.n_layers},
                {"heads", c.n_heads},          {"kv_heads", c.n_kv_heads},
                {"head_dim", c.head_dim()},    {"vocab", c.vocab_size},       {"context", c.seq_len},
                {"shared_classifier", c.shared_classifier}};
  j["hardware"] = hardware_report_json(hw);
  if (p.sizing) {
    const Sizing& z = *p.sizing;
    j["sizing"] = {{"weight_macros", z.weight_macros},     {"kv_macros", z.kv_macros},
                   {"macros_needed", z.macros_needed},     {"area_needed_mm2", z.area_needed_mm2()},
                   {"macros_cap", z.macros_cap},           {"macros", z.macros},
                   {"area_mm2", z.area_mm2()},             {"macro_mm2", z.macro_mm2},
                   {"budget_mm2", hw.organization.area_mm2}, {"capped", z.capped()}};
  }
  j["policy"] = policy_to_json(p.policy);
  j["policy"]["text"] = to_string(p.policy);
  j["policy"]["tokens_per_page"] = p.kv.tokens_per_page;  // the page placed (the policy's 0: the tile's)
  j["requested_context"] = p.requested_context;
  j["sliding_window"] = p.shape.sliding_window;
  j["conditions"] = to_json(energy_conditions(hw, p.kv.tiles));
  j["conditions"]["context"] = {
      {"tokens", p.context},
      {"sequences", p.policy.sequences},
      {"averaged_over", p.policy.sequences == 1
                            ? "one token at this context"
                            : "one decode step of every sequence at this context, per token (weights fetched once per step)"}};

  // weights
  json mats = json::array();
  for (const auto& mp : p.weights.matrices) mats.push_back(matrix_json(mp, hw));
  json& w = j["weights"];
  w["matrices"] = mats;
  if (p.weights.macros_used <= kMaxListedMacros) {
    json macros = json::array();
    for (int64_t id = 0; id < p.weights.macros_used; ++id) {
      const auto where = p.weights.macro_contents(id);
      const MatrixPlacement& mp = p.weights.matrices[where->first];
      const WeightBlock b = mp.block(where->second, hw.macro);
      const int64_t tile = id / hw.organization.macros_per_tile;
      macros.push_back({{"macro", id},
                        {"tile", tile},
                        {"bank", tile / hw.organization.tiles_per_bank},
                        {"matrix", where->first},
                        {"block", where->second},
                        {"row0", b.row0}, {"rows", b.rows}, {"out0", b.out0}, {"outs", b.outs},
                        {"utilization", static_cast<double>(mp.block_cells(where->second, hw.macro)) /
                                            static_cast<double>(hw.macro_cells())}});
    }
    w["macros"] = macros;
  } else {
    w["macros"] = nullptr;
    w["macros_omitted"] = "more than " + std::to_string(kMaxListedMacros) +
                          " macros: macro first_macro + b of a matrix holds its block b "
                          "(row tile b / col_tiles, column tile b % col_tiles)";
  }

  // KV cache
  json& kv = j["kv"];
  kv["tokens_per_tile"] = p.kv.tile.tokens;
  kv["tokens_per_page"] = p.kv.tokens_per_page;
  kv["pages_per_tile"] = p.kv.pages_per_tile;
  kv["tile_cells"] = p.kv.tile_cells;
  kv["first_macro"] = f.weight_macros;
  kv["stored_heads"] = p.kv.stored_heads;
  kv["query_heads_per_stream"] = p.kv.query_heads_per_stream;
  kv["sequences"] = p.kv.sequences;
  int64_t pages = kMaxListedPages + 1;
  if (p.allocator_grown) {
    pages = 0;
    for (int64_t st = 0; st < p.kv.streams(); ++st)
      pages += static_cast<int64_t>(p.allocator.block_table(st).size());
  }
  if (pages <= kMaxListedPages) {
    json tables = json::array();
    for (int s = 0; s < p.kv.sequences; ++s)
      for (int l = 0; l < p.kv.layers; ++l)
        for (int h = 0; h < p.kv.stored_heads; ++h) {
          json pl = json::array();
          for (const PageRef& r : p.allocator.block_table(p.allocator.stream(s, l, h))) {
            json e = {{"where", name(r.where)}};
            if (r.where == Where::cim) {
              e["slot"] = r.slot;
              e["tile"] = r.slot / p.kv.pages_per_tile;
              e["first_column_group"] = (r.slot % p.kv.pages_per_tile) * p.kv.tokens_per_page;
            } else if (r.where == Where::offchip) {
              e["offchip_page"] = r.slot;
            }
            pl.push_back(e);
          }
          tables.push_back({{"sequence", s}, {"layer", l}, {"head", h}, {"pages", pl}});
        }
    kv["block_tables"] = tables;
  } else {
    kv["block_tables"] = nullptr;
    kv["block_tables_omitted"] = "more than " + std::to_string(kMaxListedPages) + " pages";
  }

  // ledgers and per-layer table
  const energy::Costs costs = hw.costs(), kvc = hw.kv_costs(), bc = hw.baseline_costs();
  j["ledgers"] = {{"cim", r.ledgers.cim.to_json(costs, &kvc)},
                  {"periphery", r.ledgers.periphery.to_json(costs, &kvc)},
                  {"conventional", r.conventional.to_json(bc)}};
  const energy::Breakdown bcim = r.ledgers.total().cost(costs, &kvc), bconv = r.conventional.cost(bc);
  json layers = json::array();
  for (int l = 0; l < c.n_layers; ++l) {
    int64_t onchip = 0, off = 0;
    for (const auto& mp : p.weights.matrices)
      if (mp.layer == l && mp.replica == 0) {
        onchip += mp.onchip_blocks;
        off += mp.blocks() - mp.onchip_blocks;
      }
    layers.push_back({{"layer", l},
                      {"weight_macros", onchip},
                      {"offchip_blocks", off},
                      {"energy_per_token_pj", {{"cim", bcim.layer_energy_aj[l] * 1e-6},
                                               {"conventional", bconv.layer_energy_aj[l] * 1e-6}}}});
  }
  j["layers"] = layers;
  return j;
}

std::string summary(const Placement& p, const MapReport& r) {
  const Figures& f = r.figures;
  const cmodel::Config& c = p.shape.config;
  const HardwareSpec& hw = p.hw;
  std::ostringstream o;
  o << "model     " << p.shape.name << ": dim " << c.dim << ", hidden " << c.hidden_dim << ", "
    << c.n_layers << " layers, " << c.n_heads << " heads / " << c.n_kv_heads << " KV heads"
    << (c.head_dim() * c.n_heads != c.dim ? " of " + std::to_string(c.head_dim()) : std::string()) << ", vocab "
    << c.vocab_size << ", context " << c.seq_len << "\n";
  o << "hardware  " << hw.name << " (" << hw.source << "): " << hw.organization.macros << " "
    << cmodel::cim::kMacroKindNames[static_cast<size_t>(hw.macro.kind)] << " macros of "
    << hw.macro.rows << " x " << hw.macro.cols << " cells (" << hw.macro.cell_bits
    << " bit), technology " << hw.tech.name << "\n";
  o << "policy    " << to_string(p.policy) << "; context " << p.context << " tokens";
  if (p.context != p.requested_context)
    o << " (sliding window of " << p.shape.sliding_window << " of the " << p.requested_context << " asked)";
  o << "\n";
  if (hw.organization.weights == Home::offchip)
    o << "design    attention-only CIM: weights off-chip on the digital engine, KV cache in CIM tiles\n";
  else if (hw.organization.kv == Home::offchip)
    o << "design    weights-only CIM: KV cache off-chip, attention on the digital engine\n";
  if (p.sizing) {
    const Sizing& z = *p.sizing;
    o << "sizing    " << z.macros_needed << " macros hold the model (weights " << z.weight_macros << ", KV "
      << z.kv_macros << "): " << fmt("%.4g", z.area_needed_mm2()) << " mm2, "
      << fmt("%.3g", static_cast<double>(z.macros_needed) * hw.macro_cells() * hw.macro.cell_bits / 8 / 1e9)
      << " GB of cells";
    if (z.capped())
      o << "; the " << fmt("%g", hw.organization.area_mm2) << " mm2 budget allows " << z.macros
        << " macros (" << fmt("%.4g", z.area_mm2()) << " mm2)";
    o << "\n";
  }
  o << dies_summary(with_idle_links(plan_dies(p), hw, f.latency_ns_cim, f.sequences), hw) << "\n";
  o << "macros    " << f.macros_used << " of " << f.macros_total << " used (weights "
    << f.weight_macros << ", KV " << f.kv_macros_used << " of " << f.kv_macros_reserved
    << " reserved); utilization " << fmt("%.3f", f.utilization) << ", fragmentation "
    << fmt("%.3f", f.fragmentation) << "\n";
  if (f.weight_blocks_offchip)
    o << "weights   " << f.weight_blocks_offchip << " blocks off-chip (" << fmt("%.1f", 100 * (1 - f.weights_onchip_fraction))
      << "% of the weights, " << fmt("%.3g", (1 - f.weights_onchip_fraction) * static_cast<double>(p.weights.elements_total) * hw.precision.weight_bits / 8 / 1e9)
      << " GB), computed by the digital engine\n";
  o << "KV cache  " << p.kv.tiles << " tiles x " << p.kv.pages_per_tile << " pages of "
    << p.kv.tokens_per_page << " tokens; max context " << f.max_context_tokens
    << " tokens per sequence; " << f.kv_cell_writes_per_token << " cell writes per token";
  if (f.offchip_tokens || f.evicted_tokens)
    o << "; sequence 0: " << f.offchip_tokens << " token-heads off-chip, " << f.evicted_tokens << " evicted";
  o << "\n";
  if (f.sequences > 1)
    o << "batch     " << f.sequences << " sequences per step, each with its own KV cache; weights fetched once per step "
      << "(" << fmt("%.4g", f.shared_pj_conventional) << " pJ conventional, " << fmt("%.4g", f.shared_pj_cim)
      << " pJ CIM per step); energy per token\n";
  o << "energy    " << fmt("%.1f", f.energy_pj_cim) << " pJ/token CIM, "
    << fmt("%.1f", f.energy_pj_conventional) << " pJ/token conventional ("
    << fmt("%.2f", f.energy_pj_conventional / f.energy_pj_cim) << "x), each at its best throughput\n";
  for (const std::string& line : comparison_lines(r.comparison)) o << "          " << line << "\n";
  o << "          CIM " << fmt("%.1f", f.energy_pj_cim) << " pJ/token " << band_text(r.cim_band) << "\n";
  for (const std::string& line : conditions_lines(energy_conditions(hw, p.kv.tiles))) o << "          " << line << "\n";
  const char* per = f.sequences == 1 ? " ns/token " : " ns/step ";
  o << "latency   " << fmt("%.1f", f.latency_ns_cim) << per << "CIM (bound by " << name(f.bound_cim)
    << (f.sequences == 1 ? "" : "; one token alone") << ": critical path " << fmt("%.1f", f.latency.critical_path_ns())
    << " ns, of it macro cycles "
    << fmt("%.1f", f.latency.macro_ns) << " ns; off-chip " << fmt("%.4g", f.latency.offchip_bits / 8)
    << " bytes in " << fmt("%.1f", f.latency.offchip_ns) << " ns), "
    << fmt("%.1f", f.latency_ns_conventional) << per << "conventional (bound by "
    << name(f.bound_conventional) << ")\n";
  o << "throughput " << fmt("%.4g", f.tokens_per_s_cim) << " tokens/s CIM, " << fmt("%.4g", f.tokens_per_s_conventional)
    << " tokens/s conventional (" << f.sequences << (f.sequences == 1 ? " sequence" : " sequences") << ")\n";
  if (f.endurance_writes)
    o << "endurance " << fmt("%.3g", *f.endurance_writes) << " writes per cell: "
      << fmt("%.3g", f.lifetime_tokens) << " tokens (" << fmt("%.3g", f.lifetime_seconds / 3600)
      << " h) until the most-written KV cell wears out; " << fmt("%.3g", f.lifetime_tokens_wear_levelled)
      << " tokens with ideal wear levelling\n";
  else
    o << "endurance unlimited (volatile cells)\n";

  const energy::Costs costs = hw.costs(), kvc = hw.kv_costs(), bc = hw.baseline_costs();
  const energy::Breakdown bcim = r.ledgers.total().cost(costs, &kvc), bconv = r.conventional.cost(bc);
  o << "\n layer |    q    k    v    o   w1   w2   w3 | off-chip | KV pages |   CIM pJ   | conv. pJ\n";
  o << "-------+------------------------------------+----------+----------+------------+------------\n";
  const Op ops[] = {Op::q_proj, Op::k_proj, Op::v_proj, Op::o_proj, Op::ffn_w1, Op::ffn_w2, Op::ffn_w3};
  const int64_t kv_pages_per_layer = f.kv_pages_in_use / c.n_layers;
  for (int l = 0; l <= c.n_layers; ++l) {
    const bool model = l == c.n_layers;
    char buf[256];
    if (model) {
      const auto& cls = p.weights.matrices[p.weights.find(Op::classifier, energy::kModelLevel)];
      std::snprintf(buf, sizeof buf, " model | classifier %4lld                    | %8lld | %8s | %10.1f | %10.1f\n",
                    static_cast<long long>(cls.onchip_blocks),
                    static_cast<long long>(cls.blocks() - cls.onchip_blocks), "-",
                    bcim.layer_energy_aj[l] * 1e-6, bconv.layer_energy_aj[l] * 1e-6);
    } else {
      long long n[7], off = 0;
      for (int i = 0; i < 7; ++i) {
        const auto& mp = p.weights.matrices[p.weights.find(ops[i], l)];
        n[i] = mp.onchip_blocks;
        off += mp.blocks() - mp.onchip_blocks;
      }
      std::snprintf(buf, sizeof buf,
                    " %5d | %4lld %4lld %4lld %4lld %4lld %4lld %4lld | %8lld | %8lld | %10.1f | %10.1f\n", l,
                    n[0], n[1], n[2], n[3], n[4], n[5], n[6], off,
                    static_cast<long long>(kv_pages_per_layer), bcim.layer_energy_aj[l] * 1e-6,
                    bconv.layer_energy_aj[l] * 1e-6);
    }
    o << buf;
  }
  o << "(macros per matrix of replica 0; KV pages of all sequences; energy of one token at the context)\n";
  return o.str();
}

}  // namespace kvcim::mapper
