// Published decode measurements reproduced on the named machines (see machine.hpp). Fitting data
// and checking data are kept apart: the machines' active power comes from a batch-1 H100 power
// reading (configs/machines/h100-sxm.yaml), which no row below is.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "kvcim/mapper/machine.hpp"
#include "kvcim/mapper/shape.hpp"

namespace kvcim::mapper {

const std::vector<Measurement>& measurements() {
  // C1/C2: the ML.ENERGY v1 chat responses' mean length (420.1 and 379.5 tokens) is published, the
  // prompt is not; the power is the energy per response over its time (tokens / rate). C3: ML.ENERGY v3's Text Conversation prompts average 634 tokens and its responses
  // 717 ("Reading the ML.ENERGY Leaderboard v3.0", ml-energy/blog docs/posts/ml-energy-leaderboard-v3.0.md:
  // input 634 for the Qwen 3 32B case study, output 717 over models). The benchmark
  // (ml-energy/benchmark mlenergy/llm/benchmark.py) sends every request at once and measures the
  // GPUs' energy (Zeus) from the moment max_num_seqs requests have their first token to the moment
  // N - max_num_seqs have: the batch is full throughout, and the prefills of the requests admitted
  // in that window are in its energy but not in its output-token count. C3's average power and
  // output tokens/s at batch 64 are read from the longitudinal post's figures
  // (ml-energy/blog docs/posts/assets/llm-energy-over-time/llama-power-light.svg and
  // assets/llm-energy-over-time/llama-throughput-light.svg, Llama 3.1 8B panel): matplotlib writes
  // each point's data coordinates, so the reading is exact to the figure's rounding; power / rate
  // gives the published energy (610 / 5150 = 0.118, 366 / 1740 = 0.21). V2's power is averaged over
  // the whole benchmark, ramps included (the post's footnote), so it reads low.
  static const std::vector<Measurement> rows = {
      {"C1", "a100-80gb", "llama2-7b", 1, 300, 420, 16, 1828.8 / 420.1, 44.5, 1828.8 * 44.5 / 420.1, Check::software_gap,
       0.30,
       "whole-GPU energy of each chat response (short prefill included), Hugging Face/FastChat, PyTorch 2.0.1 eager, batch 1",
       "batch 1, fp16; 420-token responses (published) after a 300-token prompt (assumption: FastChat's system "
       "prompt and one user turn)"},
      {"C2", "a100-80gb", "llama2-13b", 1, 300, 380, 16, 3050.0 / 379.5, 30.0, 3050.0 * 30.0 / 379.5,
       Check::software_gap, 0.30,
       "as C1, Llama-2-13B-chat",
       "batch 1, fp16; 380-token responses (published) after a 300-token prompt (assumption, as C1)"},
      {"C3 v3", "h100-sxm", "llama3-8b", 64, 634, 717, 16, 0.12, 5150, 610, Check::reproduced, 0,
       "GPU energy (Zeus, the GPU alone) per output token over a serving run's steady state, vLLM 0.11.1 (ML.ENERGY "
       "v3): every request sent at once, 64 sequences running throughout the window, the prefills of the requests "
       "admitted in it included; power and tokens/s read from the source's figures",
       "batch 64, fp16 (Llama-3.1-8B has the llama3-8b shape); 634-token prompts and 717-token responses (v3's "
       "published means), decode at prompt + output / 2; each response's prefill charged, and its time counted in "
       "the rate"},
      {"C3 v2", "h100-sxm", "llama3-8b", 64, 634, 717, 16, 0.20, 1740, 366, Check::software_gap, 0,
       "as C3 v3, vLLM 0.5.4 (ML.ENERGY v2); power averaged over the whole benchmark, ramps included",
       "as C3 v3"},
  };
  return rows;
}

Reproduction reproduce(const Measurement& m) {
  const Machine machine = machine_by_name(m.machine);
  const cmodel::Config c = shape_preset(m.preset).config;
  const MachineRegime r{m.sequences, m.context(), m.weight_bits, 16};
  Reproduction x{m, machine_step(machine, c, r), machine_prefill(machine, c, m.prompt_tokens, m.weight_bits)};
  const double B = static_cast<double>(m.sequences), out_tokens = static_cast<double>(m.output_tokens);
  x.decode_joules_per_token = x.step.energy_pj_per_token(m.sequences) * 1e-12;
  x.prefill_joules_per_token = x.prefill.energy_pj() / out_tokens * 1e-12;
  x.joules_per_token = x.decode_joules_per_token + x.prefill_joules_per_token;
  const double ns_per_token = x.step.step_ns / B + x.prefill.step_ns / out_tokens;
  x.tokens_per_s = 1e9 / ns_per_token;
  x.power_w = x.joules_per_token / (ns_per_token * 1e-9);
  x.tdp_w = machine.tdp_w;
  x.joules_per_token_hi = machine.tdp_w * (x.step.serial_ns() / B + x.prefill.serial_ns() / out_tokens) * 1e-9;
  x.energy_error = x.joules_per_token / m.joules_per_token - 1;
  if (m.tokens_per_s > 0) {
    x.joules_at_measured_rate = x.power_w / m.tokens_per_s;
    x.rate_error = x.joules_at_measured_rate / m.joules_per_token - 1;
    const double gap_ns = std::max(0.0, 1e9 / m.tokens_per_s - ns_per_token);
    x.joules_gaps_idle = x.joules_per_token + machine.idle_power_w * gap_ns * 1e-9;
    x.gaps_idle_error = x.joules_gaps_idle / m.joules_per_token - 1;
    // the decode bytes per output token over the measured time per output token less the modelled
    // prefill's (at the sustained tensor rate, a lower bound on it): the bandwidth the run achieved
    const double decode_ns = 1e9 / m.tokens_per_s - x.prefill.step_ns / out_tokens;
    x.achieved_bandwidth_fraction = x.step.bytes_moved / B / decode_ns / machine.hbm_bandwidth_gb_s;
  }
  return x;
}

std::vector<Reproduction> reproduce_measurements() {
  std::vector<Reproduction> out;
  for (const Measurement& m : measurements()) out.push_back(reproduce(m));
  return out;
}

const std::vector<Measurement>& batch_sweep() {
  // ML.ENERGY v3's Llama 3.1 8B panel on one H100 (the longitudinal post's power and throughput
  // figures, llama-power-light.svg and llama-throughput-light.svg, as for C3 v3): each point's data
  // coordinates, rounded to the figure's precision. Batches above 256 are left out: there the KV
  // cache of 1,351-token sequences (634 + 717) no longer fits beside the weights for every one of
  // max_num_seqs, so the number actually running is not known.
  static const std::vector<Measurement> rows = [] {
    struct Point {
      const char* id;
      int64_t batch;
      double power_w, tokens_per_s;
    };
    const Point points[] = {{"v3 b16", 16, 513, 1954},  {"v3 b32", 32, 560, 3391},   {"v3 b64", 64, 610, 5147},
                            {"v3 b96", 96, 644, 6260},  {"v3 b128", 128, 669, 7037}, {"v3 b192", 192, 688, 8223},
                            {"v3 b256", 256, 690, 9010}};
    // C3 v3: the regime every point shares
    const Measurement& c3 = *std::find_if(measurements().begin(), measurements().end(),
                                          [](const Measurement& m) { return std::string(m.id) == "C3 v3"; });
    std::vector<Measurement> out;
    for (const Point& p : points) {
      Measurement m = c3;
      m.id = p.id;
      m.sequences = p.batch;
      m.power_w = p.power_w;
      m.tokens_per_s = p.tokens_per_s;
      m.joules_per_token = p.power_w / p.tokens_per_s;
      m.check = Check::shown;
      out.push_back(m);
    }
    return out;
  }();
  return rows;
}

std::vector<Reproduction> reproduce_batch_sweep() {
  std::vector<Reproduction> out;
  for (const Measurement& m : batch_sweep()) out.push_back(reproduce(m));
  return out;
}

namespace {
std::string f(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
}  // namespace

std::string validation_markdown(const std::vector<Reproduction>& rows) {
  std::ostringstream o;
  o << "| measurement | machine, model | what it includes | regime modelled | measured J/token | predicted J/token "
       "(decode: static + active + memory + wire + compute; + prefill) | error | model's band J/token | held to | "
       "measured tokens/s | predicted tokens/s | measured power | modelled power | modelled power at the measured "
       "tokens/s | the same, the host's gaps at idle power |\n";
  o << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Reproduction& x : rows) {
    const double B = static_cast<double>(x.m.sequences);
    const auto part = [&](double pj) { return f("%.2g", pj / B * 1e-12); };
    std::string held = "not held: the software moved it (below)";
    if (x.m.check == Check::reproduced) held = "the band";
    else if (x.m.tokens_per_s > 0 && x.m.uncertainty > 0) held = f("±%.0f%% (at the measured rate)", 100 * x.m.uncertainty);
    o << "| " << x.m.id << " | " << x.m.machine << ", " << x.m.preset << " | " << x.m.includes << " | " << x.m.regime
      << " | " << f("%.3g", x.m.joules_per_token) << " | " << f("%.3g", x.joules_per_token) << " ("
      << part(x.step.static_pj) << " + " << part(x.step.active_pj) << " + " << part(x.step.memory_pj) << " + "
      << part(x.step.wire_pj) << " + " << part(x.step.compute_pj) << "; + " << f("%.2g", x.prefill_joules_per_token) << ") | "
      << f("%+.0f%%", 100 * x.energy_error) << " | " << f("%.3g", x.joules_per_token) << " - "
      << f("%.3g", x.joules_per_token_hi) << (x.in_band() ? " (measured inside)" : " (measured outside)") << " | "
      << held << " | " << (x.m.tokens_per_s > 0 ? f("%.4g", x.m.tokens_per_s) : "not published") << " | "
      << f("%.4g", x.tokens_per_s) << " | " << (x.m.power_w > 0 ? f("%.0f W", x.m.power_w) : "not published")
      << " | " << f("%.0f W", x.power_w) << f(" (TDP %.0f W)", x.tdp_w) << " | "
      << (x.m.tokens_per_s > 0 ? f("%.3g J", x.joules_at_measured_rate) + f(" (%+.0f%%)", 100 * x.rate_error) : "—")
      << " | "
      << (x.m.tokens_per_s > 0 ? f("%.3g J", x.joules_gaps_idle) + f(" (%+.0f%%)", 100 * x.gaps_idle_error) : "—")
      << " |\n";
  }
  return o.str();
}

std::string batch_sweep_markdown(const std::vector<Reproduction>& rows) {
  std::ostringstream o;
  o << "| batch | measured power | measured tokens/s | measured J/token | predicted J/token | error | modelled "
       "power | power not modelled | predicted tokens/s | predicted / measured tokens/s | decode bandwidth "
       "achieved (of peak) |\n";
  o << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Reproduction& x : rows) {
    o << "| " << x.m.sequences << " | " << f("%.0f W", x.m.power_w) << " | " << f("%.4g", x.m.tokens_per_s) << " | "
      << f("%.3g", x.m.joules_per_token) << " | " << f("%.3g", x.joules_per_token) << " | "
      << f("%+.0f%%", 100 * x.energy_error) << " | " << f("%.0f W", x.power_w) << " | "
      << f("%.0f W", x.m.power_w - x.power_w) << " | " << f("%.4g", x.tokens_per_s) << " | "
      << f("%.2fx", x.tokens_per_s / x.m.tokens_per_s)
      << " | " << f("%.0f%%", 100 * x.achieved_bandwidth_fraction) << " |\n";
  }
  return o.str();
}

}  // namespace kvcim::mapper
