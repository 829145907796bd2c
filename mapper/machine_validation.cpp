// Published decode measurements reproduced on the named machines (see machine.hpp). Fitting data
// and checking data are kept apart: the machines' active power comes from a batch-1 H100 power
// reading (configs/machines/h100-sxm.yaml), which no row below is.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "kvcim/mapper/machine.hpp"
#include "kvcim/mapper/shape.hpp"

namespace kvcim::mapper {

const std::vector<Measurement>& measurements() {
  // C1/C2: the ML.ENERGY v1 chat responses' mean length (420.1 and 379.5 tokens) is published, the
  // prompt is not. C3: ML.ENERGY v3's Text Conversation responses average 717 tokens ("Diagnosing
  // Inference Energy Consumption with the ML.ENERGY Leaderboard v3.0"); the prompt is not published.
  static const std::vector<Measurement> rows = {
      {"C1", "a100-80gb", "llama2-7b", 1, 300, 420, 16, 1828.8 / 420.1, 44.5, Check::software_gap, 0.30,
       "whole-GPU energy of each chat response (short prefill included), Hugging Face/FastChat, PyTorch 2.0.1 eager, batch 1",
       "batch 1, fp16; 420-token responses (published) after a 300-token prompt (assumption: FastChat's system "
       "prompt and one user turn)"},
      {"C2", "a100-80gb", "llama2-13b", 1, 300, 380, 16, 3050.0 / 379.5, 30.0, Check::software_gap, 0.30,
       "as C1, Llama-2-13B-chat",
       "batch 1, fp16; 380-token responses (published) after a 300-token prompt (assumption, as C1)"},
      {"C3 v3", "h100-sxm", "llama3-8b", 64, 717, 717, 16, 0.12, 0, Check::reproduced, 0.55,
       "GPU energy per output token of a serving run, vLLM 0.11.1 (ML.ENERGY v3), prefill of arriving requests included",
       "batch 64, fp16 (Llama-3.1-8B has the llama3-8b shape); 717-token responses (published) after 717-token "
       "prompts (assumption: conversations whose history is as long as the answer); each response's prefill charged"},
      {"C3 v2", "h100-sxm", "llama3-8b", 64, 717, 717, 16, 0.20, 0, Check::software_gap, 0,
       "as C3 v3, vLLM 0.5.4 (ML.ENERGY v2)",
       "as C3 v3"},
  };
  return rows;
}

std::vector<Reproduction> reproduce_measurements() {
  std::vector<Reproduction> out;
  for (const Measurement& m : measurements()) {
    const Machine machine = machine_by_name(m.machine);
    const cmodel::Config c = shape_preset(m.preset).config;
    const MachineRegime r{m.sequences, m.context(), m.weight_bits, 16};
    Reproduction x{m, machine_step(machine, c, r), machine_prefill(machine, c, m.prompt_tokens, m.weight_bits)};
    const double B = static_cast<double>(m.sequences);
    x.decode_joules_per_token = x.step.energy_pj_per_token(m.sequences) * 1e-12;
    x.prefill_joules_per_token = x.prefill.energy_pj() / static_cast<double>(m.output_tokens) * 1e-12;
    x.joules_per_token = x.decode_joules_per_token + x.prefill_joules_per_token;
    x.tokens_per_s = x.step.tokens_per_s(m.sequences);
    x.power_w = x.step.power_w();
    x.energy_error = x.joules_per_token / m.joules_per_token - 1;
    if (m.tokens_per_s > 0) {
      // each sequence makes tokens_per_s / B tokens a second at the modelled power
      x.joules_at_measured_rate = x.power_w / (m.tokens_per_s / B) / B + x.prefill_joules_per_token;
      x.rate_error = x.joules_at_measured_rate / m.joules_per_token - 1;
    }
    out.push_back(x);
  }
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
       "(decode: static + active + memory + compute; + prefill) | modelled power | error | held to | measured "
       "tokens/s | predicted tokens/s | at the measured tokens/s |\n";
  o << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Reproduction& x : rows) {
    const double B = static_cast<double>(x.m.sequences);
    const auto part = [&](double pj) { return f("%.2g", pj / B * 1e-12); };
    std::string held = "not held: the software moved it (below)";
    if (x.m.check == Check::reproduced) held = f("±%.0f%% (energy)", 100 * x.m.uncertainty);
    else if (x.m.tokens_per_s > 0) held = f("±%.0f%% (at the measured rate)", 100 * x.m.uncertainty);
    o << "| " << x.m.id << " | " << x.m.machine << ", " << x.m.preset << " | " << x.m.includes << " | " << x.m.regime
      << " | " << f("%.3g", x.m.joules_per_token) << " | " << f("%.3g", x.joules_per_token) << " ("
      << part(x.step.static_pj) << " + " << part(x.step.active_pj) << " + " << part(x.step.memory_pj) << " + "
      << part(x.step.compute_pj) << "; + " << f("%.2g", x.prefill_joules_per_token) << ") | "
      << f("%.0f W", x.power_w) << " | " << f("%+.0f%%", 100 * x.energy_error) << " | " << held << " | "
      << (x.m.tokens_per_s > 0 ? f("%.3g", x.m.tokens_per_s) : "not published") << " | "
      << f("%.4g", x.tokens_per_s) << " | "
      << (x.m.tokens_per_s > 0 ? f("%.3g J", x.joules_at_measured_rate) + f(" (%+.0f%%)", 100 * x.rate_error) : "—")
      << " |\n";
  }
  return o.str();
}

}  // namespace kvcim::mapper
