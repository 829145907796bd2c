// Random attention problems and result / event comparison, shared by `kvcim cosim`, the
// co-simulation suites and the RTL benchmark.
#include <algorithm>
#include <sstream>

#include "kvcim/error.hpp"
#include "kvcim/rtl/rtl_tile.hpp"

namespace kvcim::rtl {

using cmodel::cim::TileEvents;
using cmodel::cim::TileParams;
using cmodel::cim::TileResult;

namespace {

enum class Values { uniform, small, extremes, constant, zeros };

int8_t draw_value(std::mt19937_64& rng, Values style, int kv_bits, int8_t constant) {
  const int lo = -(1 << (kv_bits - 1)), hi = (1 << (kv_bits - 1)) - 1;
  switch (style) {
    case Values::uniform: return static_cast<int8_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
    case Values::small:  // within +-4 (the whole range below 4 bits)
      return static_cast<int8_t>(std::uniform_int_distribution<int>(std::max(lo, -4), std::min(hi, 4))(rng));
    case Values::extremes: return static_cast<int8_t>(std::bernoulli_distribution(0.5)(rng) ? lo : hi);
    case Values::constant: return constant;
    default: return 0;
  }
}

Values draw_style(std::mt19937_64& rng) {
  // Mostly realistic full-range data; the rest exercises the corners.
  const int u = std::uniform_int_distribution<int>(0, 19)(rng);
  if (u < 12) return Values::uniform;
  if (u < 15) return Values::small;
  if (u < 18) return Values::extremes;
  if (u < 19) return Values::constant;
  return Values::zeros;
}

std::vector<int> draw_exponents(std::mt19937_64& rng, int n) {
  std::vector<int> e(n);
  const int u = std::uniform_int_distribution<int>(0, 9)(rng);
  if (u < 6) {  // the usual spread of per-token scales
    for (int& x : e) x = std::uniform_int_distribution<int>(-12, -4)(rng);
  } else if (u < 8) {  // one shared exponent
    std::fill(e.begin(), e.end(), std::uniform_int_distribution<int>(-10, 0)(rng));
  } else {  // anything an int8 holds: clamped shifts in the rescale and the fold
    for (int& x : e) x = std::uniform_int_distribution<int>(-128, 127)(rng);
  }
  return e;
}

}  // namespace

TileProblem random_problem(std::mt19937_64& rng, const TileParams& p, int tokens) {
  if (tokens < 1 || tokens > p.tokens)
    fail("random_problem", "tokens", std::to_string(tokens),
         "expected 1.." + std::to_string(p.tokens));
  TileProblem pr;
  const Values ks = draw_style(rng), vs = draw_style(rng), qs = draw_style(rng);
  const int8_t kc = draw_value(rng, Values::uniform, p.kv_bits, 0);
  const int8_t vc = draw_value(rng, Values::uniform, p.kv_bits, 0);
  const int8_t qc = draw_value(rng, Values::uniform, p.kv_bits, 0);
  pr.k.assign(tokens, std::vector<int8_t>(p.head_dim));
  pr.v.assign(tokens, std::vector<int8_t>(p.head_dim));
  for (int t = 0; t < tokens; ++t)
    for (int i = 0; i < p.head_dim; ++i) {
      pr.k[t][i] = draw_value(rng, ks, p.kv_bits, kc);
      pr.v[t][i] = draw_value(rng, vs, p.kv_bits, vc);
    }
  pr.q.resize(p.head_dim);
  for (int8_t& x : pr.q) x = draw_value(rng, qs, p.kv_bits, qc);
  pr.ek = draw_exponents(rng, tokens);
  pr.ev = draw_exponents(rng, tokens);
  pr.scale.qmul = static_cast<uint16_t>(std::uniform_int_distribution<int>(1 << 15, (1 << 16) - 1)(rng));
  // Logit spread: typical |s| ~ 2^14, so qexp ~ u - 30 - ek gives Y differences of ~2^(F+u):
  // u from -4 (nearly uniform softmax) to 10 (one-hot). Sometimes any exponent at all.
  if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) {
    pr.scale.qexp = std::uniform_int_distribution<int>(-128, 127)(rng);
  } else {
    const int u = std::uniform_int_distribution<int>(-4, 10)(rng);
    pr.scale.qexp = std::clamp(u - 30 - pr.ek[0], -128, 127);
  }
  return pr;
}

TileResult run_problem(cmodel::cim::AttentionTile& tile, const TileProblem& problem) {
  tile.reset();
  for (size_t t = 0; t < problem.k.size(); ++t)
    tile.append(problem.k[t], problem.v[t], problem.ek[t], problem.ev[t]);
  return tile.query(problem.q, problem.scale);
}

namespace {
void field(std::ostringstream& os, const char* name, int64_t expected, int64_t got) {
  if (expected != got) os << " " << name << " " << expected << "!=" << got;
}
}  // namespace

std::string diff_events(const TileEvents& e, const TileEvents& g) {
  std::ostringstream os;
  std::vector<int64_t> got;
  for_each_counter(g, [&](const std::string&, int64_t v) { got.push_back(v); });
  size_t i = 0;
  for_each_counter(e, [&](const std::string& path, int64_t v) { field(os, path.c_str(), v, got[i++]); });
  return os.str();
}

std::string diff_results(const TileResult& e, const TileResult& g) {
  std::ostringstream os;
  if (e.o.size() != g.o.size()) {
    os << " o.size " << e.o.size() << "!=" << g.o.size();
  } else {
    for (size_t i = 0; i < e.o.size(); ++i)
      field(os, ("o[" + std::to_string(i) + "]").c_str(), e.o[i], g.o[i]);
  }
  field(os, "evmax", e.evmax, g.evmax);
  field(os, "ymax", e.ymax, g.ymax);
  field(os, "sum", e.sum, g.sum);
  return os.str();
}

}  // namespace kvcim::rtl
