// Directed corner problems (kvcim/rtl/corner_problems.hpp).
#include "kvcim/rtl/corner_problems.hpp"

#include <algorithm>

namespace kvcim::rtl {

using cmodel::cim::QueryScale;
using cmodel::cim::TileParams;

TileProblem uniform_problem(const TileParams& p, int n, int8_t k, int8_t v, int8_t q, int ek, int ev,
                            QueryScale s) {
  TileProblem pr;
  pr.k.assign(n, std::vector<int8_t>(p.head_dim, k));
  pr.v.assign(n, std::vector<int8_t>(p.head_dim, v));
  pr.ek.assign(n, ek);
  pr.ev.assign(n, ev);
  pr.q.assign(p.head_dim, q);
  pr.scale = s;
  return pr;
}

namespace {

// A V pattern that makes every output element depend on every token's probability.
void vary_v(const TileParams& p, TileProblem& pr) {
  const int lo = -(1 << (p.kv_bits - 1)), span = 1 << p.kv_bits;
  for (size_t t = 0; t < pr.v.size(); ++t)
    for (int i = 0; i < p.head_dim; ++i) pr.v[t][i] = static_cast<int8_t>(lo + (3 * static_cast<int>(t) + 5 * i) % span);
}

}  // namespace

std::vector<CornerProblem> corner_problems(const TileParams& p) {
  std::vector<CornerProblem> out;
  const int T = p.tokens;
  const int8_t lo = static_cast<int8_t>(-(1 << (p.kv_bits - 1)));
  const int8_t hi = static_cast<int8_t>((1 << (p.kv_bits - 1)) - 1);
  const int n_ties = std::min(T, 16);

  // Rescale ties: q = (1, 0, ...), so s_t = k_t[0]; qmul 2^15 and qexp + ek + F = -16 shift
  // s 2^15 right by 16 bits: Y = round_half_up(s / 2), a tie for every odd s, of either sign.
  {
    const int ek = -8;
    TileProblem pr = uniform_problem(p, n_ties, 0, 0, 0, ek, 0, QueryScale{32768, -16 - ek - p.exp_frac});
    pr.q[0] = 1;
    for (int t = 0; t < n_ties; ++t) {
      const int odd = 2 * (t / 2) + 1;  // 1, 1, 3, 3, ...: both signs of each odd value
      pr.k[t][0] = static_cast<int8_t>(std::clamp(t % 2 ? -odd : odd, static_cast<int>(lo), static_cast<int>(hi)));
    }
    vary_v(p, pr);
    out.push_back({"rescale ties", pr});
    // the same with qmul = 3 2^14 and a shift of 15: Y = round_half_up(3 s / 2), a tie for odd s
    pr.scale = QueryScale{3 << 14, -15 - ek - p.exp_frac};
    out.push_back({"rescale ties, qmul 3 2^14", pr});
  }
  // Fold ties: equal logits (so equal quotients, the same for every token), ev_t = -(t mod 4):
  // the fold shifts by 0..3, and p = floor((2^P - 1) / n) rounded at each shift; n chosen per
  // shift so that the quotient is odd (a tie at shift 1) or 2 mod 4 (a tie at shift 2).
  for (int n = 2; n <= std::min(T, 12); ++n) {
    TileProblem pr = uniform_problem(p, n, 1, 0, 1, -8, 0, QueryScale{32768, -20});
    for (int t = 0; t < n; ++t) pr.ev[t] = -(t % 4);
    vary_v(p, pr);
    out.push_back({"fold ties, " + std::to_string(n) + " tokens", pr});
  }
  // Exact divisions: n equal tokens, n | 2^P - 1.
  const int64_t full = (int64_t{1} << p.prob_bits) - 1;
  for (int n = 1; n <= T; ++n) {
    if (full % n != 0) continue;
    TileProblem pr = uniform_problem(p, n, hi, 0, hi, -8, -3, QueryScale{40000, -20});
    vary_v(p, pr);
    out.push_back({"exact division, " + std::to_string(n) + " tokens", pr});
  }
  // Sizes: full, one short, and counts that are not powers of two (3, 5, 7, T/2 + 1, 3T/4 + 1).
  std::vector<int> sizes = {T, T - 1, 3, 5, 7, T / 2 + 1, 3 * T / 4 + 1};
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::mt19937_64 rng(0xc0ffee);
  for (int n : sizes) {
    if (n < 1 || n > T) continue;
    for (int trial = 0; trial < 2; ++trial)
      out.push_back({std::to_string(n) + " tokens, random " + std::to_string(trial), random_problem(rng, p, n)});
  }
  // Extremes: every value at an end of the range, the largest score (q = k = lo), at full size.
  for (int8_t k : {lo, hi})
    for (int8_t v : {lo, hi})
      out.push_back({"extremes k " + std::to_string(k) + " v " + std::to_string(v),
                     uniform_problem(p, T, k, v, lo, -8, -8, QueryScale{65535, -30})});
  return out;
}

}  // namespace kvcim::rtl
