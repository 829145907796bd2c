// A decode step on a named machine: roofline time, static and dynamic energy (see machine.hpp).
#include <algorithm>
#include <cstdio>

#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/machine.hpp"
#include "kvcim/mapper/placement.hpp"
#include "kvcim/spec_fields_json.hpp"

namespace kvcim::mapper {

namespace {

constexpr double kPjPerWattNs = 1e3;  // 1 W for 1 ns is 1 nJ
constexpr int64_t kMaxSequences = 65536;
constexpr const char* kMachineAssumes =
    "roofline: max(bytes / (bandwidth x achieved fraction), 2 MACs / (peak x utilization)); energy: (idle + "
    "active power) x step time + bytes x (HBM + L2 + L1 pJ/bit) + bytes x on-die wire pJ/bit/mm x half the die's "
    "side + MACs x the board's MAC energy ((TDP - idle - active) / sustained MAC rate); a step that would draw more "
    "than the TDP runs at it (clocks lowered, the step longer); no kernel launch, host or framework overhead; "
    "softmax and norms not charged";

std::string gb(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g GB", bytes / 1e9);
  return buf;
}

void check_regime(const MachineRegime& r) {
  if (r.sequences < 1 || r.sequences > kMaxSequences)
    fail("baseline", "sequences", std::to_string(r.sequences), "expected 1.." + std::to_string(kMaxSequences));
  if (r.context < 1) fail("baseline", "context", std::to_string(r.context), "expected >= 1 token");
  if (r.weight_bits != 8 && r.weight_bits != 16)
    fail("baseline", "weight_bits", std::to_string(r.weight_bits), "expected 8 (int8) or 16 (fp16)");
  if (r.kv_bits != 8 && r.kv_bits != 16)
    fail("baseline", "kv_bits", std::to_string(r.kv_bits), "expected 8 or 16");
}

// The two roofline legs and the board's energy over the step (machine.hpp).
void time_and_charge(const Machine& m, MachineStep& s, double compute_pj, int bits) {
  const double bw_bytes_per_ns = m.hbm_bandwidth_gb_s;  // 1 GB/s = 1 byte/ns
  s.roofline_ns = s.bytes_moved / bw_bytes_per_ns;
  s.memory_ns = s.roofline_ns / m.bandwidth_utilization;
  const double peak_ops_per_ns = (bits == 8 ? m.peak_int8_tops : m.peak_fp16_tflops) * 1e3;
  s.compute_ns = 2 * s.macs / (peak_ops_per_ns * m.compute_utilization);
  s.memory_pj = s.bytes_moved * 8 * (m.hbm_pj_per_bit + m.l2_pj_per_bit + m.l1_pj_per_bit);
  s.wire_pj = s.bytes_moved * 8 * m.wire_pj_per_bit_mm * m.wire_mm();
  s.compute_pj = compute_pj;
  s.step_ns = std::max(s.memory_ns, s.compute_ns);
  // A step whose bytes and MACs would draw more than the TDP at that time (a compute-bound step
  // moving many KV bytes besides) runs at the board's power limit instead: its clocks drop until
  // idle + active power and the dynamic energy over the longer time make the TDP (the parser
  // keeps tdp_w above idle + active).
  const double limited_ns =
      (s.memory_pj + s.wire_pj + s.compute_pj) / ((m.tdp_w - m.idle_power_w - m.active_power_w) * kPjPerWattNs);
  if (limited_ns > s.step_ns) {
    s.step_ns = limited_ns;
    s.power_limited = true;
  }
  s.static_pj = m.idle_power_w * s.step_ns * kPjPerWattNs;
  s.active_pj = m.active_power_w * s.step_ns * kPjPerWattNs;
  s.tdp_pj = m.tdp_w * s.step_ns * kPjPerWattNs;
}

}  // namespace

MachineRegime machine_regime(const Placement& p) {
  const int bits = p.hw.baseline.storage_bits();
  return {p.policy.sequences, p.context, bits, bits};
}

MachineStep machine_step(const Machine& m, const cmodel::Config& c, const MachineRegime& r) {
  check_regime(r);
  c.validate("baseline shape");
  const double B = static_cast<double>(r.sequences), ctx = static_cast<double>(r.context);
  const double wbytes = r.weight_bits / 8.0, kvbytes = r.kv_bits / 8.0;
  const double matrices = static_cast<double>(cmodel::energy::weight_elements(c));
  // the embedding table is resident beside the matrices unless the classifier shares it
  const double embedding = c.shared_classifier ? 0 : static_cast<double>(c.vocab_size) * c.dim;
  const double kv_per_token = 2.0 * c.n_layers * c.kv_dim() * kvbytes;
  MachineStep s;
  s.weight_bytes = (matrices + embedding) * wbytes;
  s.kv_bytes = B * ctx * kv_per_token;
  const double need = s.weight_bytes + s.kv_bytes;
  if (need > m.hbm_bytes())
    fail("baseline " + m.name, "HBM capacity", gb(m.hbm_bytes()),
         "the weights (" + gb(s.weight_bytes) + ") and the KV cache of " + std::to_string(r.sequences) +
             " sequence(s) x " + std::to_string(r.context) + " tokens (" + gb(s.kv_bytes) + ") need " + gb(need) +
             ", " + gb(need - m.hbm_bytes()) + " more than the machine's HBM holds");
  // per step: every matrix once (shared by the batch), each sequence's embedding row, its whole
  // KV cache and its new token's K and V
  s.bytes_moved = matrices * wbytes + B * c.dim * wbytes + s.kv_bytes + B * kv_per_token;
  const double weight_macs = B * matrices;
  const double attention_macs = B * 2.0 * c.n_layers * c.n_heads * c.head_dim() * ctx;
  s.macs = weight_macs + attention_macs;
  time_and_charge(m, s, weight_macs * m.mac_pj(r.weight_bits) + attention_macs * m.mac_pj(r.kv_bits),
                  r.weight_bits);
  return s;
}

std::optional<MachineReport> placement_machine(const Placement& p) {
  if (p.baseline == "synthetic") return std::nullopt;
  const Machine m = machine_by_name(p.baseline);
  const MachineRegime r = machine_regime(p);
  const MachineStep s = machine_step(m, p.shape.config, r);
  return MachineReport{machine_step_json(m, r, s), machine_step_line(m, r, s)};
}

MachineStep machine_prefill(const Machine& m, const cmodel::Config& c, int64_t tokens, int weight_bits) {
  check_regime({1, tokens, weight_bits, weight_bits});
  c.validate("baseline shape");
  const double P = static_cast<double>(tokens), wbytes = weight_bits / 8.0;
  const double matrices = static_cast<double>(cmodel::energy::weight_elements(c));
  const double kv_per_token = 2.0 * c.n_layers * c.kv_dim() * wbytes;
  MachineStep s;
  s.weight_bytes = matrices * wbytes;
  s.kv_bytes = P * kv_per_token;
  // the weights once for the whole prompt, each token's embedding row, its K and V written
  s.bytes_moved = s.weight_bytes + P * c.dim * wbytes + s.kv_bytes;
  // causal attention: token i attends over i + 1 tokens
  const double attention_macs = 2.0 * c.n_layers * c.n_heads * c.head_dim() * P * (P + 1) / 2;
  s.macs = P * matrices + attention_macs;
  time_and_charge(m, s, s.macs * m.mac_pj(weight_bits), weight_bits);
  return s;
}

nlohmann::json machine_step_json(const Machine& m, const MachineRegime& r, const MachineStep& s) {
  const nlohmann::json fields = value_fields(m);
  const double B = static_cast<double>(r.sequences);
  return {{"name", m.name},
          {"description", m.description},
          {"machine", fields},
          {"provenance", provenance_json(m)},
          {"regime", {{"sequences", r.sequences}, {"context", r.context}, {"weight_bits", r.weight_bits},
                      {"kv_bits", r.kv_bits}}},
          {"weight_bytes", s.weight_bytes},
          {"kv_bytes", s.kv_bytes},
          {"bytes_per_step", s.bytes_moved},
          {"macs_per_step", s.macs},
          {"step_ns", s.step_ns},
          {"roofline_ns", s.roofline_ns},
          {"memory_ns", s.memory_ns},
          {"compute_ns", s.compute_ns},
          {"bound", s.bound()},
          {"tokens_per_s", s.tokens_per_s(r.sequences)},
          {"energy_pj_per_token", s.energy_pj_per_token(r.sequences)},
          {"energy_pj_per_token_split", {{"static", s.static_pj / B}, {"active", s.active_pj / B},
                                         {"memory", s.memory_pj / B}, {"wire", s.wire_pj / B},
                                         {"compute", s.compute_pj / B}}},
          {"power_w", s.power_w()},
          {"energy_pj_per_token_at_tdp", s.tdp_pj / B},
          {"assumes", kMachineAssumes}};
}

std::string machine_step_line(const Machine& m, const MachineRegime& r, const MachineStep& s) {
  char buf[512];
  const double B = static_cast<double>(r.sequences);
  std::snprintf(buf, sizeof buf,
                "%s: %.4g mJ/token (static %.3g, active %.3g, memory %.3g, wire %.3g, compute %.3g) at %.0f W, "
                "%.4g tokens/s, "
                "%.4g us/step bound by %s (HBM roofline %.4g us); at the %.0f W TDP for the whole step %.4g "
                "mJ/token (%lld sequence(s) x %lld tokens, %s weights, %d-bit KV; no software overhead)",
                m.name.c_str(), s.energy_pj_per_token(r.sequences) * 1e-9, s.static_pj / B * 1e-9,
                s.active_pj / B * 1e-9, s.memory_pj / B * 1e-9, s.wire_pj / B * 1e-9, s.compute_pj / B * 1e-9,
                s.power_w(),
                s.tokens_per_s(r.sequences), s.step_ns * 1e-3, s.bound(), s.roofline_ns * 1e-3, m.tdp_w,
                s.tdp_pj / B * 1e-9,
                static_cast<long long>(r.sequences), static_cast<long long>(r.context),
                r.weight_bits == 8 ? "int8" : "fp16", r.kv_bits);
  return buf;
}

}  // namespace kvcim::mapper

namespace kvcim::mapper {

MachineRun machine_run(const Machine& m, const cmodel::Config& c, const std::vector<int>& active, int bits) {
  MachineRun out;
  double tokens = 0, pj = 0, static_pj = 0, active_pj = 0, memory_pj = 0, wire_pj = 0, compute_pj = 0, tdp_pj = 0;
  for (size_t pos = 0; pos < active.size(); ++pos) {
    if (active[pos] < 1) continue;
    const MachineStep s = machine_step(m, c, {active[pos], static_cast<int64_t>(pos) + 1, bits, bits});
    tokens += active[pos];
    pj += s.energy_pj();
    static_pj += s.static_pj;
    active_pj += s.active_pj;
    memory_pj += s.memory_pj;
    wire_pj += s.wire_pj;
    compute_pj += s.compute_pj;
    tdp_pj += s.tdp_pj;
    out.ns += s.step_ns;
  }
  if (tokens == 0) return out;
  out.tokens = tokens;
  out.energy_pj_per_token = pj / tokens;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s: %.4g pJ/token (static %.3g, active %.3g, memory %.3g, wire %.3g, compute %.3g), %.4g tokens/s; "
                "at the "
                "%.0f W TDP %.4g pJ/token (every position of the run, %s weights and KV; no software overhead)",
                m.name.c_str(), out.energy_pj_per_token, static_pj / tokens, active_pj / tokens, memory_pj / tokens,
                wire_pj / tokens, compute_pj / tokens, tokens / (out.ns * 1e-9), m.tdp_w, tdp_pj / tokens,
                bits == 8 ? "int8" : "fp16");
  out.line = buf;
  out.json = {{"name", m.name},
              {"description", m.description},
              {"provenance", provenance_json(m)},
              {"bits", bits},
              {"energy_pj_per_token", out.energy_pj_per_token},
              {"energy_pj_per_token_split", {{"static", static_pj / tokens}, {"active", active_pj / tokens},
                                             {"memory", memory_pj / tokens}, {"wire", wire_pj / tokens},
                                             {"compute", compute_pj / tokens}}},
              {"energy_pj_per_token_at_tdp", tdp_pj / tokens},
              {"tokens_per_s", tokens / (out.ns * 1e-9)},
              {"averaged_over", "every position of the run, each a decode step of the sequences active there"},
              {"assumes", kMachineAssumes}};
  return out;
}

}  // namespace kvcim::mapper
