#include "kvcim/runtime/run_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <utility>
#include <vector>

#include "kvcim/mapper/dies.hpp"

namespace kvcim::runtime {

namespace energy = cmodel::energy;

namespace {

// printf into a string
__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* format, ...) {
  char buf[1024];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (n < static_cast<int>(sizeof buf)) {
    out += buf;
    return;
  }
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(args, format);
  std::vsnprintf(big.data(), big.size(), format, args);
  va_end(args);
  big.pop_back();
  out += big;
}

// Wraps text at `width` columns, breaking at spaces, honouring newlines.
std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line, word;
  auto flush_word = [&] {
    if (line.size() + word.size() > width && !line.empty()) {
      lines.push_back(line);
      line.clear();
    }
    line += word;
    word.clear();
  };
  for (char ch : text) {
    if (ch == '\n') {
      flush_word();
      lines.push_back(line);
      line.clear();
    } else {
      word += ch;
      if (ch == ' ') flush_word();
    }
  }
  flush_word();
  if (!line.empty()) lines.push_back(line);
  return lines;
}

void side_by_side(std::string& out, const std::string& left, const std::string& right) {
  const size_t w = 48;
  auto l = wrap(left, w), r = wrap(right, w);
  appendf(out, "%-*s | %s\n", int(w), "reference (float32)", "CIM");
  appendf(out, "%s-+-%s\n", std::string(w, '-').c_str(), std::string(w, '-').c_str());
  for (size_t i = 0; i < std::max(l.size(), r.size()); ++i)
    appendf(out, "%-*s | %s\n", int(w), i < l.size() ? l[i].c_str() : "", i < r.size() ? r[i].c_str() : "");
}

std::string si(double pj) {
  char buf[32];
  if (pj >= 1e6) std::snprintf(buf, sizeof buf, "%.3f uJ", pj * 1e-6);
  else if (pj >= 1e3) std::snprintf(buf, sizeof buf, "%.3f nJ", pj * 1e-3);
  else std::snprintf(buf, sizeof buf, "%.3f pJ", pj);
  return buf;
}

// "v ± h" with h the interval's half-width, or "v [lo, hi]" when the interval is lopsided (one
// side more than 1.5 times the other, as KL's can be), the value and the ends in the formats given.
std::string with_interval(const Interval& i, const char* value_format, const char* width_format) {
  const double v = i.value, lo = i.low, hi = i.high;
  const double below = v - lo, above = hi - v;
  char buf[96];
  if (std::max(below, above) <= 1.5 * std::min(below, above) || std::max(below, above) == 0.0) {
    const std::string f = std::string(value_format) + " \u00b1 " + width_format;
    std::snprintf(buf, sizeof buf, f.c_str(), v, (hi - lo) / 2);
  } else {
    const std::string f = std::string(value_format) + " [" + width_format + ", " + width_format + "]";
    std::snprintf(buf, sizeof buf, f.c_str(), v, lo, hi);
  }
  return buf;
}

// 10240 -> "10,240"
std::string thousands(long long n) {
  const std::string digits = std::to_string(n);
  std::string s;  // built forwards (gcc 12 warns falsely, -Wrestrict, on insert() here)
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') s += ',';
    s += digits[i];
  }
  return s;
}

// What the intervals of `e` resample, when it is not whole sequences.
std::string blocks_note(const EvalStatistics& e) {
  if (e.interval_block_tokens == 0) return "";
  return " (intervals over blocks of " + std::to_string(e.interval_block_tokens) + " tokens: fewer than " +
         std::to_string(kMinSequencesForIntervals) + " sequences; they miss the correlation across a sequence)";
}

void evaluation(std::string& out, const RunReport& rep) {
  if (!rep.result.evaluation) {
    out += "  no evaluation (--eval-text ''): perplexity not measured\n";
    return;
  }
  const Evaluation& ev = *rep.result.evaluation;
  appendf(out, "  evaluation, teacher-forced (95%% intervals): %s tokens sampled from the reference in %d sequences "
          "(seed %llu)%s\n", thousands(ev.tokens).c_str(), ev.sequences, static_cast<unsigned long long>(rep.options.eval_seed),
          blocks_note(ev).c_str());
  appendf(out, "  KL mean %s nats   top-1 %s   \u0394NLL %s nats/token\n",
          with_interval(ev.kl_mean, "%.3g", "%.2g").c_str(),
          with_interval(ev.top1_agreement, "%.4f", "%.4f").c_str(),
          with_interval(ev.delta_nll, "%+.4f", "%.4f").c_str());
  if (!ev.text) return;
  const EvalStatistics& t = *ev.text;
  appendf(out, "  human-written text: %s tokens in %d sequence%s%s\n", thousands(t.tokens).c_str(), t.sequences,
          t.sequences == 1 ? "" : "s", blocks_note(t).c_str());
  // a perplexity past 10^6 (an untrained model's) in exponent form, not 100 digits
  const char* ppl = std::max(t.perplexity_reference.high, t.perplexity_cim.high) < 1e6 ? "%.3f" : "%.4g";
  appendf(out, "  \u0394NLL %s nats/token   perplexity reference %s, CIM %s   KL mean %s nats\n",
          with_interval(t.delta_nll, "%+.4f", "%.4f").c_str(), with_interval(t.perplexity_reference, ppl, ppl).c_str(),
          with_interval(t.perplexity_cim, ppl, ppl).c_str(), with_interval(t.kl_mean, "%.3g", "%.2g").c_str());
}

std::string bank_text(double bytes) {
  char buf[32];
  if (bytes >= 1 << 20) std::snprintf(buf, sizeof buf, "%.3g MiB", bytes / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%.3g KiB", bytes / 1024);
  return buf;
}

// a figure that was not computed prints as nan
double or_nan(const std::optional<double>& x) { return x ? *x : std::nan(""); }
double or_nan(double x) { return std::isfinite(x) ? x : std::nan(""); }

}  // namespace

std::string run_summary(const RunReport& rep) {
  const GenerationResult& r = rep.result;
  const mapper::HardwareSpec& hw = rep.placement.hw;
  const mapper::Figures& m = rep.figures;
  std::string out = "\n";
  side_by_side(out, r.reference_text, r.text);
  const int sequences = static_cast<int>(r.sequences.size());
  if (sequences > 1) {
    appendf(out, "\nbatch of %d sequences decoding together (sequence 0 above; every text in --json)\n", sequences);
    int b = 0;
    for (const SequenceResult& s : r.sequences)
      appendf(out, "  %d: seed %llu, %zu tokens, top-1 %.4f, KL mean %.3g nats, prompt \"%s\"\n", b++,
              static_cast<unsigned long long>(s.seed), s.tokens.size(), s.accuracy.top1_agreement,
              s.accuracy.kl_mean, s.prompt.c_str());
  }
  const AccuracySummary& a = r.accuracy;
  appendf(out, "\naccuracy of CIM against the float reference fed the same tokens (%d forward passes of the generation)\n",
          a.steps);
  appendf(out, "  top-1 agreement %.4f   KL mean %.3g nats (max %.3g)   logit error max %.4f mean %.4f\n",
          a.top1_agreement, a.kl_mean, a.kl_max, a.max_abs_error, a.mean_abs_error);
  evaluation(out, rep);
  appendf(out, "\nenergy per token (%d forward passes; %s vs %s)\n", r.forward_passes, hw.tech.name.c_str(),
          hw.baseline_tech.name.c_str());
  appendf(out, "  %-12s %16s %16s\n", "component", "CIM", "conventional");
  // components in name order, as the report's breakdown object lists them
  std::vector<std::pair<std::string, int>> components;
  for (energy::Component c : energy::all_components())
    components.emplace_back(std::string(energy::name(c)), static_cast<int>(c));
  std::sort(components.begin(), components.end());
  const double passes = std::max(1, r.forward_passes);
  for (const auto& [name, c] : components)
    appendf(out, "  %-12s %16s %16s\n", name.c_str(), si(rep.cim.component_energy_aj[c] * 1e-6 / passes).c_str(),
            si(rep.conventional.component_energy_aj[c] * 1e-6 / passes).c_str());
  appendf(out, "  %-12s %16s %16s\n", "total", si(rep.cim.energy_pj() / passes).c_str(),
          si(rep.conventional.energy_pj() / passes).c_str());
  appendf(out, "  CIM total %s %s\n", si(rep.cim_band.total_pj).c_str(), mapper::band_text(rep.cim_band).c_str());
  const mapper::EnergyConditions& cond = rep.conditions;
  std::string of_batch;  // appended, not "literal" + std::string&& (gcc 12 warns falsely: -Wrestrict)
  if (sequences > 1) of_batch.append(" of ").append(std::to_string(sequences)).append(" sequences, weights fetched once per step");
  appendf(out,
          "  conventional / CIM = %.2fx   (both at %g nm; conventional SRAM in %s banks; every term above;\n"
          "                                 averaged over positions 0..%d%s)\n",
          or_nan(rep.conventional_over_cim), cond.at.node_nm,
          bank_text(static_cast<double>(cond.baseline.sram_bank_bytes)).c_str(), rep.positions() - 1,
          of_batch.c_str());
  if (rep.conventional_over_cim_iso_area)
    appendf(out, "  iso-area: %.2fx   (a conventional chip of the CIM chip's %.3g mm2, its SRAM %s)\n",
            *rep.conventional_over_cim_iso_area, cond.area_cim_mm2,
            bank_text(static_cast<double>(cond.iso_area_sram_bytes)).c_str());
  else
    appendf(out, "  iso-area: not compared, the chips hold different data (%s)\n",
            rep.comparison.iso_area_why_not.c_str());
  out += "  the chip as design points, one step at the run's last context (the figures above average every position):\n";
  for (const std::string& line : mapper::comparison_lines(rep.comparison)) out += "  " + line + "\n";
  appendf(out, "  weights written into the macros once: %s\n", si(rep.weight_load.energy_pj()).c_str());
  if (!rep.baseline_machine_line.empty()) out += "  machine " + rep.baseline_machine_line + "\n";
  out += "conditions of the energy figures\n";
  for (const std::string& line : mapper::conditions_lines(cond)) out += "  " + line + "\n";
  appendf(out,
          "\nmapping on %s: %lld of %lld macros used (%lld weights, %lld KV), utilisation %.3f,\n"
          "  longest context that fits %lld tokens, %lld KV cell writes per token,\n"
          "  latency bound %.1f ns per token\n",
          hw.name.c_str(), static_cast<long long>(m.macros_used), static_cast<long long>(m.macros_total),
          static_cast<long long>(m.weight_macros), static_cast<long long>(m.kv_macros_used), m.utilization,
          static_cast<long long>(m.max_context_tokens), static_cast<long long>(m.kv_cell_writes_per_token),
          m.latency_ns_cim);
  out += "  " + mapper::dies_summary(mapper::with_idle_links(mapper::plan_dies(rep.placement), hw, m.latency_ns_cim, m.sequences), hw, "  ") + "\n";
  if (sequences > 1)
    appendf(out, "  a step of %d sequences: %.0f tokens/s CIM, %.0f tokens/s conventional (latency bounds)\n",
            sequences, or_nan(m.tokens_per_s_cim), or_nan(m.tokens_per_s_conventional));
  return out;
}

}  // namespace kvcim::runtime
