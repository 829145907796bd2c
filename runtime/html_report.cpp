#include "kvcim/runtime/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "kvcim/error.hpp"
#include "kvcim/mapper/chip.hpp"
#include "kvcim/mapper/compare.hpp"
#include "kvcim/runtime/report.hpp"

namespace kvcim::runtime {

using nlohmann::json;

std::string html_escape(const std::string& text) {
  static const char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        case '\n': case '\t': out += static_cast<char>(c); break;
        default:
          if (c < 0x20 || c == 0x7f) out += kReplacement;  // not allowed in XML 1.0
          else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // one UTF-8 sequence: its length, the range of its second byte (no overlongs, no surrogates)
    int len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool ok = len > 0 && i + static_cast<size_t>(len) <= n && s[i + 1] >= lo && s[i + 1] <= hi;
    for (int k = 2; ok && k < len; ++k) ok = s[i + static_cast<size_t>(k)] >= 0x80 && s[i + static_cast<size_t>(k)] <= 0xBF;
    if (!ok) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(text, i, static_cast<size_t>(len));
    i += static_cast<size_t>(len);
  }
  return out;
}

namespace {

const char* kCimColour = "#1f77b4";
const char* kConvColour = "#ff7f0e";

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string energy_text(double pj) {
  if (std::abs(pj) >= 1e6) return fmt("%.3f uJ", pj * 1e-6);
  if (std::abs(pj) >= 1e3) return fmt("%.3f nJ", pj * 1e-3);
  return fmt("%.3f pJ", pj);
}

// The element of the report at a dotted path ("energy.cim.total_pj", "steps.kl.3").
const json& at(const json& r, const std::string& key) {
  const json* j = &r;
  std::stringstream ss(key);
  std::string part;
  while (std::getline(ss, part, '.')) {
    if (j->is_array()) {
      const size_t idx = std::stoul(part);
      if (idx >= j->size()) fail("report", key, "absent", "index beyond the array");
      j = &(*j)[idx];
    } else if (j->is_object() && j->contains(part)) {
      j = &(*j)[part];
    } else {
      fail("report", key, "absent", "the run report has no such field");
    }
  }
  return *j;
}

double number(const json& r, const std::string& key) {
  const json& v = at(r, key);
  if (!v.is_number()) fail("report", key, v.dump(), "expected a number");
  return v.get<double>();
}

// data-key and data-value of a number of the report (the exact JSON text, or null).
std::string attrs(const json& r, const std::string& key) {
  const json& v = at(r, key);
  const std::string value = v.is_number() ? v.dump() : "null";
  return " data-key=\"" + html_escape(key) + "\" data-value=\"" + value + "\"";
}

// A number of the report as shown: formatted, with its key and exact value; "not computed" for null.
std::string num(const json& r, const std::string& key, const char* format, const char* unit = "") {
  const json& v = at(r, key);
  const std::string shown = v.is_number() ? fmt(format, v.get<double>()) + unit : "not computed";
  return "<span class=\"num\"" + attrs(r, key) + ">" + html_escape(shown) + "</span>";
}

// ", intervals over blocks of B tokens" when a part of the evaluation had too few sequences for
// intervals over sequences (reports saved before the field have none: sequences then)
std::string blocks_note(const json& part) {
  const auto it = part.find("interval_block_tokens");
  if (it == part.end() || !it->is_number_integer() || it->get<int>() == 0) return "";
  return ", intervals over blocks of " + std::to_string(it->get<int>()) + " tokens (too few sequences)";
}

std::string energy_num(const json& r, const std::string& key) {
  const json& v = at(r, key);
  const std::string shown = v.is_number() ? energy_text(v.get<double>()) : "not computed";
  return "<span class=\"num\"" + attrs(r, key) + ">" + html_escape(shown) + "</span>";
}

std::string svg_open(int w, int h, const std::string& label) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) + "\" height=\"" +
         std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(h) +
         "\" role=\"img\" aria-label=\"" + html_escape(label) + "\" font-family=\"sans-serif\" font-size=\"12\">";
}

std::string text_at(double x, double y, const std::string& t, const char* anchor = "start",
                    const char* extra = "") {
  return "<text x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.1f", y) + "\" text-anchor=\"" + anchor + "\"" + extra +
         ">" + html_escape(t) + "</text>";
}

// Side-by-side horizontal bars, CIM and conventional, per category; `divide` turns the report's
// totals into the per-token values drawn. Each bar carries its report key and exact total.
struct BarRow {
  std::string label, cim_key, conv_key;
};

std::string bar_chart(const json& r, const std::string& title, const std::vector<BarRow>& rows, double divide) {
  const int left = 150, width = 1100, bar_w = 760, bar_h = 11, row_h = 2 * bar_h + 8, top = 30;
  double max_v = 0;
  for (const BarRow& b : rows) {
    const json &c = at(r, b.cim_key), &v = at(r, b.conv_key);
    if (c.is_number()) max_v = std::max(max_v, c.get<double>() / divide);
    if (v.is_number()) max_v = std::max(max_v, v.get<double>() / divide);
  }
  if (max_v <= 0) max_v = 1;
  const int height = top + static_cast<int>(rows.size()) * row_h + 10;
  std::string s = svg_open(width, height, title);
  s += "<rect x=\"" + std::to_string(left) + "\" y=\"6\" width=\"12\" height=\"12\" fill=\"" + kCimColour + "\"/>";
  s += text_at(left + 16, 16, "CIM");
  s += "<rect x=\"" + std::to_string(left + 70) + "\" y=\"6\" width=\"12\" height=\"12\" fill=\"" + kConvColour + "\"/>";
  s += text_at(left + 86, 16, "conventional");
  s += text_at(left + 200, 16, "energy per token", "start", " fill=\"#555\"");
  int y = top;
  for (const BarRow& b : rows) {
    s += text_at(left - 8, y + bar_h + 3, b.label, "end");
    for (int side = 0; side < 2; ++side) {
      const std::string& key = side == 0 ? b.cim_key : b.conv_key;
      const json& v = at(r, key);
      const double per_token = v.is_number() ? v.get<double>() / divide : 0.0;
      const double w = std::max(0.0, per_token / max_v * bar_w);
      const int by = y + side * bar_h;
      s += "<rect class=\"bar\" x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(by) + "\" width=\"" +
           fmt("%.2f", w) + "\" height=\"" + std::to_string(bar_h - 1) + "\" fill=\"" +
           (side == 0 ? kCimColour : kConvColour) + "\"" + attrs(r, key) + "><title>" +
           html_escape(b.label + (side == 0 ? " CIM " : " conventional ") +
                       (v.is_number() ? energy_text(per_token) : std::string("not computed"))) +
           "</title></rect>";
      s += text_at(left + w + 4, by + bar_h - 2, v.is_number() ? energy_text(per_token) : "not computed", "start",
                   " font-size=\"10\" fill=\"#333\"");
    }
    y += row_h;
  }
  return s + "</svg>";
}

// A series per step (x = position) as a line with a point per step, each point keyed.
// `flag_key` (optional): steps where it is false get a red ring (top-1 disagreement).
std::string step_chart(const json& r, const std::string& title, const std::string& series, const std::string& y_label,
                       const std::string& flag_key, const char* colour, bool percent) {
  const json& pos = at(r, "steps.position");
  const json& ys = at(r, series);
  const int width = 1100, height = 240, left = 70, right = 20, top = 20, bottom = 40;
  const size_t n = ys.size();
  double y_max = 0;
  for (const json& v : ys)
    if (v.is_number()) y_max = std::max(y_max, v.get<double>());
  if (y_max <= 0) y_max = 1;
  y_max *= 1.1;
  const double x_min = n ? pos.front().get<double>() : 0, x_max = n ? pos.back().get<double>() : 1;
  const double x_span = std::max(1.0, x_max - x_min);
  auto X = [&](double x) { return left + (x - x_min) / x_span * (width - left - right); };
  auto Y = [&](double y) { return top + (1.0 - y / y_max) * (height - top - bottom); };
  std::string s = svg_open(width, height, title);
  s += "<line x1=\"" + std::to_string(left) + "\" y1=\"" + fmt("%.1f", Y(0)) + "\" x2=\"" + std::to_string(width - right) +
       "\" y2=\"" + fmt("%.1f", Y(0)) + "\" stroke=\"#888\"/>";
  s += "<line x1=\"" + std::to_string(left) + "\" y1=\"" + std::to_string(top) + "\" x2=\"" + std::to_string(left) +
       "\" y2=\"" + fmt("%.1f", Y(0)) + "\" stroke=\"#888\"/>";
  auto y_text = [&](double v) { return percent ? fmt("%.3g%%", v * 100) : fmt("%.3g", v); };
  s += text_at(left - 6, Y(y_max / 1.1) + 4, y_text(y_max / 1.1), "end");
  s += text_at(left - 6, Y(0) + 4, y_text(0), "end");
  s += text_at(X(x_min), height - bottom + 16, fmt("%.0f", x_min), "middle");
  s += text_at(X(x_max), height - bottom + 16, fmt("%.0f", x_max), "middle");
  s += text_at((left + width - right) / 2.0, height - 6, "position", "middle");
  s += text_at(left + 6, top + 2, y_label, "start", " fill=\"#555\"");
  std::string points;
  for (size_t i = 0; i < n; ++i)
    if (ys[i].is_number())
      points += fmt("%.1f,", X(pos[i].get<double>())) + fmt("%.1f ", Y(ys[i].get<double>()));
  s += "<polyline fill=\"none\" stroke=\"" + std::string(colour) + "\" stroke-width=\"1.5\" points=\"" + points + "\"/>";
  for (size_t i = 0; i < n; ++i) {
    if (!ys[i].is_number()) continue;
    const std::string key = series + "." + std::to_string(i);
    const bool flagged = !flag_key.empty() && !at(r, flag_key + "." + std::to_string(i)).get<bool>();
    s += "<circle class=\"pt\" cx=\"" + fmt("%.1f", X(pos[i].get<double>())) + "\" cy=\"" +
         fmt("%.1f", Y(ys[i].get<double>())) + "\" r=\"" + (flagged ? "4.5" : "2.5") + "\" fill=\"" +
         (flagged ? "#d62728" : colour) + "\"" + attrs(r, key) + "><title>" +
         html_escape("position " + pos[i].dump() + ": " + y_text(ys[i].get<double>()) +
                     (flagged ? " (top-1 differs)" : "")) +
         "</title></circle>";
  }
  return s + "</svg>";
}

// Statistics of the evaluation under `prefix` (the sampled sequences', or the text's), each on
// its own scale: value and 95% interval.
std::string interval_chart(const json& r, const std::string& prefix) {
  static const std::pair<const char*, const char*> stats[] = {
      {"kl_mean", "KL mean (nats)"},
      {"top1_agreement", "top-1 agreement"},
      {"delta_nll", "\u0394NLL (nats/token)"},
      {"perplexity_reference", "perplexity, reference"},
      {"perplexity_cim", "perplexity, CIM"}};
  const int width = 1100, left = 190, span = 560, row_h = 34, top = 10;
  const int height = top + static_cast<int>(std::size(stats)) * row_h + 6;
  std::string s = svg_open(width, height, "evaluation statistics with 95% intervals");
  int y = top;
  for (const auto& [name, label] : stats) {
    const std::string base = prefix + "." + name;
    const double v = number(r, base + ".value"), lo = number(r, base + ".ci_low"), hi = number(r, base + ".ci_high");
    double a = std::min({lo, v, hi}), b = std::max({lo, v, hi});
    const double pad = std::max((b - a) * 0.25, std::max(std::abs(v) * 1e-3, 1e-12));
    a -= pad;
    b += pad;
    auto X = [&](double x) { return left + (x - a) / (b - a) * span; };
    const double cy = y + row_h / 2.0;
    s += text_at(left - 10, cy + 4, label, "end");
    s += "<line x1=\"" + std::to_string(left) + "\" y1=\"" + fmt("%.1f", cy) + "\" x2=\"" + std::to_string(left + span) +
         "\" y2=\"" + fmt("%.1f", cy) + "\" stroke=\"#ddd\"/>";
    s += "<line class=\"ci\" x1=\"" + fmt("%.1f", X(lo)) + "\" y1=\"" + fmt("%.1f", cy) + "\" x2=\"" + fmt("%.1f", X(hi)) +
         "\" y2=\"" + fmt("%.1f", cy) + "\" stroke=\"" + kCimColour + "\" stroke-width=\"3\"/>";
    s += "<circle cx=\"" + fmt("%.1f", X(v)) + "\" cy=\"" + fmt("%.1f", cy) + "\" r=\"5\" fill=\"#d62728\"" +
         attrs(r, base + ".value") + "/>";
    s += "<text x=\"" + std::to_string(left + span + 14) + "\" y=\"" + fmt("%.1f", cy + 4) + "\">" +
         "<tspan" + attrs(r, base + ".value") + ">" + fmt("%.5g", v) + "</tspan> [<tspan" + attrs(r, base + ".ci_low") +
         ">" + fmt("%.5g", lo) + "</tspan>, <tspan" + attrs(r, base + ".ci_high") + ">" + fmt("%.5g", hi) +
         "</tspan>]</text>";
    y += row_h;
  }
  return s + "</svg>";
}

// Every macro of the chip as a cell of a grid, coloured by what it holds, shaded by utilisation.
// Chips with more than 4096 macros: one cell per group of macros (the most common role).
std::string macro_map_svg(const json& r) {
  const json& mm = at(r, "mapping.macro_map");
  const json& role = mm.at("role");
  const json& used = mm.at("utilization");
  const size_t n = role.size();
  const size_t group = std::max<size_t>(1, (n + 4095) / 4096);
  const size_t cells = (n + group - 1) / group;
  const size_t cols = std::max<size_t>(1, static_cast<size_t>(std::ceil(std::sqrt(static_cast<double>(cells) * 2.0))));
  const size_t rows = (cells + cols - 1) / cols;
  const double cell = std::clamp(1000.0 / static_cast<double>(cols), 4.0, 24.0);
  const int width = static_cast<int>(cols * cell) + 20, height = static_cast<int>(rows * cell) + 50;
  std::string s = svg_open(std::max(width, 600), height, "macro map");
  const char* colours[] = {"#d9d9d9", kCimColour, "#2ca02c"};
  const char* names[] = {"unused", "weights", "kv"};
  for (int k = 0; k < 3; ++k) {
    s += "<rect x=\"" + std::to_string(10 + k * 110) + "\" y=\"6\" width=\"12\" height=\"12\" fill=\"" + colours[k] + "\"/>";
    s += text_at(26 + k * 110, 16, names[k]);
  }
  s += text_at(350, 16, group > 1 ? "one cell per " + std::to_string(group) + " macros" : "one cell per macro; shade: cells used",
               "start", " fill=\"#555\"");
  for (size_t c = 0; c < cells; ++c) {
    int count[3] = {0, 0, 0};
    double u = 0;
    size_t members = 0;
    for (size_t i = c * group; i < std::min(n, (c + 1) * group); ++i, ++members) {
      const std::string name = role[i].get<std::string>();
      count[name == "weights" ? 1 : name == "kv" ? 2 : 0] += 1;
      u += used[i].is_number() ? used[i].get<double>() : 0.0;
    }
    const int k = static_cast<int>(std::max_element(count, count + 3) - count);
    const double opacity = k == 0 ? 1.0 : 0.35 + 0.65 * (members ? u / static_cast<double>(members) : 0.0);
    const double x = 10 + static_cast<double>(c % cols) * cell, y = 28 + static_cast<double>(c / cols) * cell;
    s += "<rect class=\"macro " + std::string(names[k]) + "\" x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.1f", y) +
         "\" width=\"" + fmt("%.1f", cell - 1) + "\" height=\"" + fmt("%.1f", cell - 1) + "\" fill=\"" + colours[k] +
         "\" fill-opacity=\"" + fmt("%.2f", opacity) + "\"><title>" +
         html_escape("macro " + std::to_string(c * group) + ": " + names[k] +
                     fmt(", %.0f%% of cells used", 100 * u / std::max<double>(1.0, static_cast<double>(members)))) +
         "</title></rect>";
  }
  return s + "</svg>";
}

std::string row(const std::string& name, const std::string& value) {
  return "<tr><th>" + html_escape(name) + "</th><td>" + value + "</td></tr>\n";
}

std::string str(const json& r, const std::string& key) {
  const json& v = at(r, key);
  return html_escape(v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, json::error_handler_t::replace));
}

// The design points of the report's `comparison` (mapper/compare.hpp, the JSON's one vocabulary):
// each side at its best throughput, at equal throughput, iso-area where both chips hold the same
// data, each with its energy x delay, under the conditions line the terminal prints.
std::string comparison_section(const json& r) {
  const json& j = at(r, "comparison");
  const mapper::Comparison c = mapper::comparison_from_json(j);
  // one side's point: every number with its key in the report
  auto side = [&r](const std::string& point, const char* name, const std::string& key, const std::string& ratio) {
    const bool idle = number(r, key + ".idle_pj_per_token") > 0;
    return "<tr><td>" + point + "</td><td>" + name + "</td><td>" + energy_num(r, key + ".energy_pj_per_token") +
           (idle ? " (idle " + energy_num(r, key + ".idle_pj_per_token") + ")" : std::string()) + "</td><td>" +
           num(r, key + ".tokens_per_s", "%.4g") + "</td><td>" + num(r, key + ".step_ns", "%.4g", " ns") + "</td><td>" +
           num(r, key + ".edp_pj_s", "%.4g") + "</td><td>" + num(r, key + ".voltage_v", "%.2f", " V") + "</td><td>" +
           ratio + "</td></tr>\n";
  };
  std::string h = "<section id=\"comparison\"><h2>CIM against conventional: design points</h2>\n";
  h += "<p class=\"conditions\" id=\"comparison-conditions\">" + html_escape(mapper::comparison_lines(c).front()) +
       ". EDP: " + str(j, "conditions.edp") + ". Equal throughput: " + str(j, "conditions.equal_throughput") + ".</p>\n";
  h += "<table id=\"comparison-points\">\n<tr><th>design point</th><th>side</th><th>energy per token</th><th>tokens/s</th>"
       "<th>step</th><th>EDP (pJ\u00b7s)</th><th>supply</th><th>conventional / CIM</th></tr>\n";
  const std::string best = "each at its best throughput";
  h += side(best, "CIM", "comparison.best.cim",
            "energy " + num(r, "comparison.best.conventional_over_cim", "%.2f", "\u00d7") + ", EDP " +
                num(r, "comparison.best.edp_conventional_over_cim", "%.3g", "\u00d7"));
  h += side(best, "conventional", "comparison.best.conventional", "");
  const std::string equal = "at equal throughput, " + num(r, "comparison.equal_throughput.tokens_per_s", "%.4g") +
                            " tokens/s (the " + (c.equal_set_by == "cim" ? "CIM chip's" : "conventional engine's") + " best)";
  h += side(equal, "CIM", "comparison.equal_throughput.cim",
            "energy " + num(r, "comparison.equal_throughput.conventional_over_cim", "%.2f", "\u00d7"));
  h += side(equal, "conventional", "comparison.equal_throughput.conventional", "");
  h += "<tr><td></td><td colspan=\"7\">the faster side: " +
       html_escape(c.equal_set_by == "cim" ? c.equal_conventional.how : c.equal_cim.how) + "</td></tr>\n";
  h += "<tr id=\"comparison-iso-area\"><td>iso-area</td><td colspan=\"6\">" +
       (c.iso_area_conventional_pj
            ? "both chips hold the same data: the conventional chip of the CIM chip's area, " +
                  energy_num(r, "comparison.iso_area.conventional_pj_per_token") + " per token"
            : "not compared, the chips hold different data (" + html_escape(c.iso_area_why_not) + ")") +
       "</td><td>" +
       (c.iso_area_conventional_pj ? "energy " + num(r, "comparison.iso_area.conventional_over_cim", "%.2f", "\u00d7")
                                   : std::string("\u2014")) +
       "</td></tr>\n";
  return h + "</table></section>\n";
}

const char* kStyle = R"(body{font-family:sans-serif;margin:24px;color:#222;max-width:1160px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:28px}
table{border-collapse:collapse}th,td{padding:2px 10px;text-align:left;vertical-align:top}
th{font-weight:normal;color:#555}.num{font-variant-numeric:tabular-nums}
.texts{display:flex;gap:16px}.texts section{flex:1;min-width:0}
.texts pre{white-space:pre-wrap;word-wrap:break-word;background:#f6f6f6;padding:8px;border:1px solid #ddd}
.headline{font-size:16px}ul.conditions{font-family:monospace;font-size:12px}
)";

}  // namespace

std::string html_report(const json& r) {
  if (!r.is_object() || !r.contains("schema_version"))
    fail("report", "schema_version", "absent", "expected the JSON of kvcim run");
  if (r["schema_version"] != kReportSchemaVersion)
    fail("report", "schema_version", r["schema_version"].dump(),
         "expected " + std::to_string(kReportSchemaVersion));
  const double passes = std::max(1.0, number(r, "energy.forward_passes"));
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>kvcim run: " + str(r, "spec.name") + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  h += "<h1>kvcim run: " + str(r, "spec.name") + " against " + str(r, "spec.baseline_technology") + "</h1>\n";

  // headline
  h += "<section id=\"summary\"><h2>Summary</h2><table class=\"headline\">\n";
  h += row("energy per token, CIM", energy_num(r, "energy.cim.per_token_pj"));
  h += row("energy per token, conventional", energy_num(r, "energy.conventional.per_token_pj"));
  h += row("conventional / CIM", num(r, "energy.conventional_over_cim", "%.2f", "\u00d7") + " (iso-area " +
                                     num(r, "energy.conventional_over_cim_iso_area", "%.2f", "\u00d7") + ")");
  h += row("energy in all, CIM / conventional", energy_num(r, "energy.cim.total_pj") + " / " +
                                                     energy_num(r, "energy.conventional.total_pj"));
  h += row("weights written into the macros once", energy_num(r, "energy.weight_load_pj"));
  h += row("forward passes", num(r, "energy.forward_passes", "%.0f"));
  h += row("top-1 agreement (generation)", num(r, "accuracy.top1_agreement", "%.4f"));
  h += row("KL mean / max (nats)", num(r, "accuracy.kl_mean", "%.3g") + " / " + num(r, "accuracy.kl_max", "%.3g"));
  h += row("logit error max / mean", num(r, "accuracy.max_abs_logit_error", "%.4f") + " / " +
                                         num(r, "accuracy.mean_abs_logit_error", "%.4f"));
  h += row("perplexity reference / CIM", num(r, "accuracy.perplexity.reference", "%.6g") + " / " +
                                             num(r, "accuracy.perplexity.cim", "%.6g") + " (" +
                                             num(r, "accuracy.perplexity.eval_tokens", "%.0f") + " tokens)");
  h += row("latency per token, CIM (simulated / bound)",
           num(r, "energy.cim.per_token_latency_ns", "%.1f", " ns") + " / " +
               num(r, "mapping.latency_per_token_ns.cim", "%.1f", " ns"));
  h += "</table></section>\n";

  if (r.contains("comparison")) h += comparison_section(r);  // reports saved before it lack it

  // texts
  h += "<section id=\"texts\"><h2>Texts</h2><div class=\"texts\">";
  h += "<section><h3>reference (float32)</h3><pre class=\"text\" id=\"text-reference\">" + str(r, "text.reference") +
       "</pre></section>";
  h += "<section><h3>CIM</h3><pre class=\"text\" id=\"text-cim\">" + str(r, "text.cim") + "</pre></section>";
  h += "</div></section>\n";

  // energy
  h += "<section id=\"energy\"><h2>Energy per token</h2>\n<h3>by component</h3>\n";
  std::vector<BarRow> rows;
  for (auto it = at(r, "energy.cim.breakdown").begin(); it != at(r, "energy.cim.breakdown").end(); ++it)
    rows.push_back({it.key(), "energy.cim.breakdown." + it.key(), "energy.conventional.breakdown." + it.key()});
  h += bar_chart(r, "energy per token by component", rows, passes);
  h += "\n<h3>by operation</h3>\n";
  rows.clear();
  for (auto it = at(r, "energy.cim.by_op").begin(); it != at(r, "energy.cim.by_op").end(); ++it)
    if (at(r, "energy.conventional.by_op").contains(it.key()))
      rows.push_back({it.key(), "energy.cim.by_op." + it.key(), "energy.conventional.by_op." + it.key()});
  h += bar_chart(r, "energy per token by operation", rows, passes);
  h += "\n<h3>by layer</h3>\n";
  rows.clear();
  const size_t layers = std::min(at(r, "energy.cim.by_layer").size(), at(r, "energy.conventional.by_layer").size());
  for (size_t l = 0; l < layers; ++l)
    rows.push_back({"layer " + std::to_string(l), "energy.cim.by_layer." + std::to_string(l),
                    "energy.conventional.by_layer." + std::to_string(l)});
  rows.push_back({"model level", "energy.cim.model_level_pj", "energy.conventional.model_level_pj"});
  h += bar_chart(r, "energy per token by layer", rows, passes);
  h += "</section>\n";

  // accuracy
  h += "<section id=\"accuracy\"><h2>Accuracy per step</h2>\n";
  h += "<p>CIM against the float reference fed the same tokens; red: steps whose top-1 token differs.</p>\n";
  h += step_chart(r, "KL divergence per step", "steps.kl", "KL (nats)", "steps.top1_agree", kCimColour, false);
  h += step_chart(r, "largest logit error per step", "steps.max_abs_error", "max |logit error|", "", "#9467bd", false);
  h += "\n<h3>Evaluation (teacher-forced, 95% intervals)</h3>\n";
  if (at(r, "accuracy.evaluation").is_null()) {
    h += "<p id=\"no-evaluation\">No evaluation ran: perplexity not computed.</p>\n";
  } else {
    // (a report saved before the text was reported apart has no sampled_sequences and no text)
    const json& ev = at(r, "accuracy.evaluation");
    const bool apart = ev.contains("sampled_sequences");
    h += "<p>" + num(r, "accuracy.evaluation.sampled_tokens", "%.0f") + " tokens sampled from the reference in " +
         num(r, apart ? "accuracy.evaluation.sampled_sequences" : "accuracy.evaluation.sequences", "%.0f") +
         " sequences" + blocks_note(ev) + ", seed " +
         num(r, "accuracy.evaluation.seed", "%.0f") + "; bootstrap over sequences, " +
         num(r, "accuracy.evaluation.bootstrap.resamples", "%.0f") + " resamples.</p>\n";
    h += interval_chart(r, "accuracy.evaluation");
    if (apart && !ev.at("text").is_null()) {
      h += "<p>Human-written text: " + num(r, "accuracy.evaluation.text.tokens", "%.0f") + " tokens in " +
           num(r, "accuracy.evaluation.text.sequences", "%.0f") + " sequences" + blocks_note(ev.at("text")) + ".</p>\n";
      h += interval_chart(r, "accuracy.evaluation.text");
    }
  }
  h += "</section>\n";

  // mapping
  h += "<section id=\"macro-map\"><h2>Macro placement</h2>\n<p>" + num(r, "mapping.macros_used", "%.0f") + " of " +
       num(r, "mapping.macros_total", "%.0f") + " macros used: " + num(r, "mapping.weights.macros_used", "%.0f") +
       " weights, " + num(r, "mapping.kv.macros_used", "%.0f") + " KV; utilisation " +
       num(r, "mapping.utilization", "%.3f") + ", longest context that fits " +
       num(r, "mapping.max_context_tokens", "%.0f") + " tokens.</p>\n";
  if (at(r, "mapping").contains("dies"))  // reports saved before dies were reported lack it
    h += "<p>Dies: " + num(r, "mapping.dies.count", "%.0f") + " of at most " +
         num(r, "mapping.dies.limit_mm2", "%g", " mm2") + "; die-to-die links per token " +
         num(r, "mapping.dies.link_bits_per_token", "%.6g", " bits") + ", " +
         num(r, "mapping.dies.link_energy_pj_per_token", "%.4g", " pJ") + ", " +
         num(r, "mapping.dies.link_latency_ns_per_token", "%.4g", " ns") +
         (at(r, "mapping.dies").value("idle_links", 0) > 0
              ? "; idle links " + num(r, "mapping.dies.link_idle_pj_per_token", "%.4g", " pJ") + " per token (idle silicon leaking)"
              : std::string()) +
         ".</p>\n";
  h += macro_map_svg(r);
  h += "</section>\n";

  // KV occupancy
  h += "<section id=\"kv\"><h2>KV cache over the generation</h2>\n<p>Pages in use (all layers and heads, " +
       num(r, "mapping.kv.tokens_per_page", "%.0f") + " tokens a page) as a share of the " +
       num(r, "mapping.kv.slots", "%.0f") + " KV page slots on chip.</p>\n";
  h += step_chart(r, "KV occupancy per step", "steps.kv_occupancy", "KV page slots in use", "", "#2ca02c", true);
  h += "</section>\n";

  // conditions
  h += "<section id=\"conditions\"><h2>Conditions</h2>\n<ul class=\"conditions\">\n";
  for (const std::string& line : mapper::conditions_lines(mapper::energy_conditions_from_json(at(r, "energy.conditions"))))
    h += "<li>" + html_escape(line) + "</li>\n";
  h += "</ul>\n<table>\n";
  h += row("spec", str(r, "spec.name") + " (" + str(r, "spec.source") + ")");
  h += row("technology (CIM, KV, baseline)",
           str(r, "spec.technology") + ", " + str(r, "spec.kv_technology") + ", " + str(r, "spec.baseline_technology"));
  h += row("comparison node", num(r, "energy.conditions.node_nm", "%g", " nm"));
  h += row("context", num(r, "energy.conditions.context.positions", "%.0f") + " positions; " +
                           str(r, "energy.conditions.context.averaged_over"));
  h += row("prompt", str(r, "options.prompt"));
  h += row("steps", num(r, "options.steps", "%.0f"));
  h += row("backends (linear, attention)", str(r, "options.linear_backend") + ", " + str(r, "options.attention_backend"));
  h += row("sampling", "temperature " + num(r, "options.temperature", "%g") + ", top_p " + num(r, "options.top_p", "%g"));
  h += row("policy", str(r, "options.policy"));
  h += row("seeds (sampler, macro noise)", num(r, "seeds.sampler", "%.0f") + ", " + num(r, "seeds.macro_noise", "%.0f"));
  h += row("inputs", str(r, "inputs.model") + "<br>" + str(r, "inputs.tokenizer") + "<br>" + str(r, "inputs.hardware") +
                         "<br>" + str(r, "inputs.eval_text"));
  h += row("versions", "kvcim " + str(r, "versions.kvcim") + ", report schema " + num(r, "versions.report_schema", "%.0f"));
  h += "</table></section>\n</body>\n</html>\n";
  return h;
}

}  // namespace kvcim::runtime
