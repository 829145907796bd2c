// Published decode measurements reproduced on the named machines (see machine.hpp).
#include <cmath>
#include <cstdio>
#include <sstream>

#include "kvcim/mapper/machine.hpp"
#include "kvcim/mapper/shape.hpp"

namespace kvcim::mapper {

const std::vector<Measurement>& measurements() {
  static const std::vector<Measurement> rows = {
      {"C1", "a100-80gb", "llama2-7b", 1, 512, 16, 1828.8 / 420.1, 44.5,
       "whole-GPU energy of each chat response (short prefill included), Hugging Face/FastChat, PyTorch 2.0.1 eager, batch 1",
       "batch 1, fp16; context 512 (assumption: the mean position over a 420-token response after a short prompt)"},
      {"C2", "a100-80gb", "llama2-13b", 1, 512, 16, 3050.0 / 379.5, 30.0,
       "as C1, Llama-2-13B-chat",
       "batch 1, fp16; context 512 (assumption, as C1)"},
      {"C3 v3", "h100-sxm", "llama3-8b", 64, 1024, 16, 0.12, 0,
       "GPU energy per output token of a serving run, vLLM 0.11.1 (ML.ENERGY v3), prefill of arriving requests included",
       "batch 64, fp16 (Llama-3.1-8B has the llama3-8b shape); context 1024 (assumption: chat prompts and responses of hundreds of tokens)"},
      {"C3 v2", "h100-sxm", "llama3-8b", 64, 1024, 16, 0.20, 0,
       "as C3 v3, vLLM 0.5.4 (ML.ENERGY v2)",
       "as C3 v3"},
  };
  return rows;
}

std::vector<Reproduction> reproduce_measurements() {
  std::vector<Reproduction> out;
  for (const Measurement& m : measurements()) {
    const Machine machine = machine_by_name(m.machine);
    const MachineRegime r{m.sequences, m.context, m.weight_bits, 16};
    Reproduction x{m, machine_step(machine, shape_preset(m.preset).config, r)};
    x.joules_per_token = x.step.energy_pj_per_token(m.sequences) * 1e-12;
    x.joules_at_tdp = x.step.tdp_pj / static_cast<double>(m.sequences) * 1e-12;
    x.tokens_per_s = x.step.tokens_per_s(m.sequences);
    x.energy_error = x.joules_per_token / m.joules_per_token - 1;
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
       "(static + memory + compute) | error | at TDP for the step | measured tokens/s | predicted tokens/s |\n";
  o << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Reproduction& x : rows) {
    const double B = static_cast<double>(x.m.sequences);
    o << "| " << x.m.id << " | " << x.m.machine << ", " << x.m.preset << " | " << x.m.includes << " | " << x.m.regime
      << " | " << f("%.3g", x.m.joules_per_token) << " | " << f("%.3g", x.joules_per_token) << " ("
      << f("%.2g", x.step.static_pj / B * 1e-12) << " + " << f("%.2g", x.step.memory_pj / B * 1e-12) << " + "
      << f("%.2g", x.step.compute_pj / B * 1e-12) << ") | " << f("%+.0f%%", 100 * x.energy_error) << " | "
      << f("%.3g", x.joules_at_tdp) << " | " << (x.m.tokens_per_s > 0 ? f("%.3g", x.m.tokens_per_s) : "not published")
      << " | " << f("%.4g", x.tokens_per_s) << " |\n";
  }
  return o.str();
}

}  // namespace kvcim::mapper
