// Named conventional machines (configs/machines/*.yaml: an A100, an H100, ...) and their decode
// step: a roofline time at the bandwidth decode achieves, and the board's energy over it: idle
// power and the power of the busy board (clocks, SMs issuing, L2 and HBM interface) over the step
// time, plus the energy of the bytes moved and of the MACs done. They stand beside the synthetic conventional engine of
// a hardware spec (baseline: section), which models the same step event by event at the
// comparison node; a machine is a product with its own node, memory and power, each figure from
// a cited source or stated as an assumption in its file (docs/baseline.md).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/cmodel/config.hpp"
#include "kvcim/spec_fields.hpp"

namespace kvcim::mapper {

// The fields of a machine file, declared once (mapper::Machine's members and its spec field table,
// kvcim/spec_fields.hpp, so that docs/hardware_fields.md lists them): key, legal range, unit and
// meaning. Every field is sourced: the file writes `name: {value: V, source: "..."}` or
// `{value: V, assumption: "..."}`, V in the row's range, and the text lands in name_source.
#define KVCIM_MACHINE_FIELDS(X)                                                                                     \
  X(node_nm, 1, 180, "nm", "process node of the compute die (reported)")                                            \
  X(hbm_capacity_gb, 0.001, 1e6, "GB", "off-chip (HBM) capacity, 1e9 bytes")                                        \
  X(hbm_bandwidth_gb_s, 0.001, 1e6, "GB/s", "peak off-chip bandwidth")                                              \
  X(bandwidth_utilization, 0.01, 1, "", "fraction of the peak bandwidth a decode step achieves")                    \
  X(peak_fp16_tflops, 0.001, 1e6, "TFLOP/s", "dense fp16 tensor throughput (2 per MAC)")                            \
  X(peak_int8_tops, 0.001, 1e6, "TOP/s", "dense int8 tensor throughput (2 per MAC)")                                \
  X(compute_utilization, 0.01, 1, "", "fraction of the peak throughput a step sustains")                            \
  X(sram_mib, 0, 1e6, "MiB", "on-chip SRAM, L2 plus L1/shared (reported)")                                          \
  X(tdp_w, 1, 1e5, "W", "board power limit, drawn at peak tensor throughput")                                       \
  X(idle_power_w, 0, 1e5, "W", "the powered board doing nothing, over the step")                                    \
  X(active_power_w, 0, 1e5, "W", "above idle while decode kernels run (clocks, SMs, L2, HBM PHY)")                  \
  X(hbm_pj_per_bit, 0, 1e3, "pJ", "off-chip access energy per bit moved")                                           \
  X(l2_pj_per_bit, 0, 1e3, "pJ", "L2 energy per bit passing through it")                                            \
  X(l1_pj_per_bit, 0, 1e3, "pJ", "L1/shared-memory energy per bit passing through it")                              \
  X(die_mm2, 1, 1e5, "mm2", "compute die area: a byte crosses half its side from the HBM interface to an SM")       \
  X(wire_pj_per_bit_mm, 0, 10, "pJ", "on-die wire energy per bit per mm, charged per byte moved over wire_mm")

struct Machine {
  std::string name, description, source;  // source: the file it was read from
  // each field, and beside it its "source: ..." or "assumption: ..." as the file gives it
#define KVCIM_MACHINE_MEMBER(key, lo, hi, unit, doc) \
  double key = 0;                                   \
  std::string key##_source;
  KVCIM_MACHINE_FIELDS(KVCIM_MACHINE_MEMBER)
#undef KVCIM_MACHINE_MEMBER

  double hbm_bytes() const { return hbm_capacity_gb * 1e9; }
  // The board's energy of one MAC: what it draws above idle and active power at its TDP, over the
  // MACs per second it sustains there (peak int8 or fp16 tensor throughput x compute_utilization:
  // no step runs faster, so the TDP is spent on that many MACs, not on the peak). It holds the
  // tensor cores and their operand traffic (register file, shared memory), which a bare
  // multiplier's energy leaves out.
  double mac_pj(int weight_bits) const;
  // How far a byte travels on the die from the HBM interface to the SM that uses it: half the
  // side of the (square) die, the rule the CIM and synthetic floorplans use for centre to a
  // macro or bank (mapper/chip.hpp Floorplan::edge_um), in mm.
  double wire_mm() const;
};

constexpr auto spec_fields(const Machine*) {
  using Self = Machine;
  return std::tuple{
#define KVCIM_MACHINE_ROW(key, lo, hi, unit, doc) \
  ::kvcim::range_field(#key, &Self::key, lo, hi, unit, doc).needed().sourced(&Self::key##_source),
      KVCIM_MACHINE_FIELDS(KVCIM_MACHINE_ROW)
#undef KVCIM_MACHINE_ROW
  };
}

// The machine names shipped in configs/machines (file names without .yaml), sorted.
std::vector<std::string> machine_names();
// A shipped machine by name. Throws kvcim::Error "baseline: name = 'x': unknown machine;
// expected one of: ..." for any other name.
Machine machine_by_name(const std::string& name);
// Reads a machine file; text: the YAML itself, `source` naming it in errors.
Machine load_machine(const std::string& path);
Machine machine_from_text(const std::string& yaml, const std::string& source);
// The same from the file's tree as JSON (a Python dict); `where` names it in errors.
Machine machine_file_from_json(const nlohmann::json& j, const std::string& where = "<dict>");
// The file as its tree (name, description, every field as {value: V, source: "..."} or
// {value: V, assumption: "..."}): the parser's inverse.
nlohmann::json machine_file_to_json(const Machine& m);

// The regime of a decode step: every sequence attends over `context` tokens.
struct MachineRegime {
  int64_t sequences = 1;
  int64_t context = 1;
  int weight_bits = 16;  // 16: fp16 weights on fp16 tensor cores; 8: int8 weights (W8A8)
  int kv_bits = 16;
};

// A whole run on the machine: at every position `pos`, a step of active[pos] sequences over
// pos + 1 tokens; energy per token over all of them, with the line and JSON reports show.
struct MachineRun {
  double tokens = 0, ns = 0, energy_pj_per_token = 0;
  std::string line;
  nlohmann::json json;
};
MachineRun machine_run(const Machine& m, const cmodel::Config& c, const std::vector<int>& active, int bits);

struct Placement;
// The regime of a placement: its sequences and context, weights and KV at the width of the spec's
// synthetic engine (baseline.mac: int8 or fp16), so that both conventional sides do the same work.
MachineRegime machine_regime(const Placement& p);

// One decode step of `regime.sequences` sequences on the machine.
struct MachineStep {
  double weight_bytes = 0, kv_bytes = 0;   // resident in HBM
  double bytes_moved = 0;                  // per step: weights once, every sequence's KV and its new token
  double macs = 0;                         // per step
  double memory_ns = 0, compute_ns = 0;    // the two roofline legs (sustained rates)
  double roofline_ns = 0;                  // bytes / peak bandwidth: no step is faster
  // max(memory_ns, compute_ns), or longer where that would draw more than the TDP: the board then
  // lowers its clocks until it draws its limit (power_limited), the step's dynamic energy spread
  // over the time at which idle + active power plus it make the TDP
  double step_ns = 0;
  bool power_limited = false;
  double static_pj = 0;   // idle power x step time
  double active_pj = 0;   // active power x step time
  double memory_pj = 0;   // bytes x (HBM + L2 + L1 pJ/bit)
  double wire_pj = 0;     // bytes x on-die wire pJ/bit/mm x wire_mm
  double compute_pj = 0;  // MACs x mac_pj
  double energy_pj() const { return static_pj + active_pj + memory_pj + wire_pj + compute_pj; }
  double power_w() const { return energy_pj() / step_ns * 1e-3; }
  double energy_pj_per_token(int64_t sequences) const { return energy_pj() / static_cast<double>(sequences); }
  double tokens_per_s(int64_t sequences) const { return static_cast<double>(sequences) / (step_ns * 1e-9); }
  // The board at its power limit over the whole step: no step of this time costs more.
  double tdp_pj = 0;
  const char* bound() const { return power_limited ? "power" : memory_ns >= compute_ns ? "memory" : "compute"; }
  // The step with no overlap of memory and compute (the roofline's max assumes perfect overlap).
  double serial_ns() const { return memory_ns + compute_ns; }
};

// Throws kvcim::Error naming the machine's memory and the shortfall when the weights and the KV
// cache of the regime do not fit its HBM, or when the regime is invalid (sequences outside
// 1..65536, context < 1, weight_bits not 8 or 16).
MachineStep machine_step(const Machine& m, const cmodel::Config& c, const MachineRegime& r);

// The prefill of one prompt of `tokens` tokens: every weight read once, every token's MACs and
// its causal attention, its K and V written; timed and charged as a step.
MachineStep machine_prefill(const Machine& m, const cmodel::Config& c, int64_t tokens, int weight_bits);

// The machine a placement names (Placement::baseline) at its regime: what `kvcim map` records as
// baseline_machine and prints as its machine line; none for "synthetic".
struct MachineReport {
  nlohmann::json json;
  std::string line;
};
std::optional<MachineReport> placement_machine(const Placement& p);

// What reports print and record: the machine, its regime, its step and its conditions.
nlohmann::json machine_step_json(const Machine& m, const MachineRegime& r, const MachineStep& s);
std::string machine_step_line(const Machine& m, const MachineRegime& r, const MachineStep& s);

}  // namespace kvcim::mapper

namespace kvcim::mapper {

// A published measurement of decode on a machine (llm-anchors.md C), the regime it was taken in
// and what it includes, reproduced by machine_step.
// What a row is to the model: held to the model's band (reproduced), or a run whose software the
// model lacks (then the model's board power over the measured time is held to the uncertainty).
// shown: a point of a measured sweep, printed beside the model to show how the miss varies, held
// to nothing but the command's output.
enum class Check { reproduced, software_gap, shown };
struct Measurement {
  const char* id;        // llm-anchors.md row
  const char* machine;   // configs/machines name
  const char* preset;    // model shape preset (mapper/shape.hpp)
  int64_t sequences;     // running together throughout the measured window
  int64_t prompt_tokens, output_tokens;  // per response; decode runs at prompt + output / 2
  int weight_bits;
  double joules_per_token;  // per output token
  double tokens_per_s;      // output tokens per second over the measured window; 0: not published
  double power_w;           // average board power over the window; 0: not published
  Check check;
  double uncertainty;    // software_gap rows: the stated relative error at the measured rate
  const char* includes;  // what the measured figure includes
  const char* regime;    // how the regime was configured, and what is assumed
  int64_t context() const { return prompt_tokens + output_tokens / 2; }
};
const std::vector<Measurement>& measurements();

struct Reproduction {
  Measurement m;
  MachineStep step;     // one decode step of the regime
  MachineStep prefill;  // one prompt's prefill
  double decode_joules_per_token = 0, prefill_joules_per_token = 0;
  double joules_per_token = 0;  // the model: decode plus each response's prefill, per output token
  // Per output token the board spends a decode step's share and a prefill's share of time: the
  // measured rate is output tokens over a window in which the prefills of arriving requests run.
  double tokens_per_s = 0, power_w = 0;
  double tdp_w = 0;  // the machine's: no board power above it
  // The model's band. Two things it does not pin down have physical bounds: memory and compute
  // overlap perfectly (its roofline time) or not at all (their sum), and the busy board draws
  // between its idle + active power (active derived from a batch-1 reading, which averages the
  // host's gaps in: a lower bound) and its TDP. Low: the model; high: the TDP over the sum.
  double joules_per_token_hi = 0;
  double energy_error = 0;  // predicted / measured - 1
  // the modelled power over the measured time per token (rows with a published rate)
  double joules_at_measured_rate = 0, rate_error = 0;
  // the other end for a run slower than the model: the busy board for the modelled time, idle
  // power for the rest of the measured time (the host's gaps with the GPU idle)
  double joules_gaps_idle = 0, gaps_idle_error = 0;
  // the decode bandwidth the measured run achieved, as a fraction of the peak: the model's decode
  // bytes per output token over the measured time per output token less the modelled prefill's
  double achieved_bandwidth_fraction = 0;
  bool in_band() const { return m.joules_per_token >= joules_per_token && m.joules_per_token <= joules_per_token_hi; }
};
Reproduction reproduce(const Measurement& m);
std::vector<Reproduction> reproduce_measurements();
// The batch sweep C3 v3 is one point of (ML.ENERGY v3, Llama-3.1-8B on one H100, batch 16-256), the
// model beside each point (`kvcim baseline --validate`, second table).
const std::vector<Measurement>& batch_sweep();
std::vector<Reproduction> reproduce_batch_sweep();
std::string batch_sweep_markdown(const std::vector<Reproduction>& rows);
// The table docs/baseline.md shows (`kvcim baseline --validate`).
std::string validation_markdown(const std::vector<Reproduction>& rows);

}  // namespace kvcim::mapper
