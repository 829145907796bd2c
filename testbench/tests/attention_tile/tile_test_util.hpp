// Shared helpers of the attention-tile C-model tests: random problems for any TileParams, and an
// independent integer re-implementation of the contract's steps 1 and 6 (plain loops instead of
// macros) to hold the macro-built tile to.
#pragma once
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kvcim/cmodel/cim/attention_tile.hpp"

namespace tile_test {

using namespace kvcim::cmodel::cim;

struct Problem {
  std::vector<std::vector<int8_t>> k, v;
  std::vector<int> ek, ev;
  std::vector<int8_t> q;
  QueryScale scale;
};

inline Problem random_problem(std::mt19937_64& rng, const TileParams& p, int n,
                              bool wide_exponents = false) {
  const int lo = -(1 << (p.kv_bits - 1)), hi = (1 << (p.kv_bits - 1)) - 1;
  std::uniform_int_distribution<int> val(lo, hi);
  Problem pr;
  pr.k.assign(n, std::vector<int8_t>(p.head_dim));
  pr.v.assign(n, std::vector<int8_t>(p.head_dim));
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < p.head_dim; ++i) {
      pr.k[t][i] = static_cast<int8_t>(val(rng));
      pr.v[t][i] = static_cast<int8_t>(val(rng));
    }
  pr.q.resize(p.head_dim);
  for (int8_t& x : pr.q) x = static_cast<int8_t>(val(rng));
  std::uniform_int_distribution<int> ex(wide_exponents ? -128 : -9, wide_exponents ? 127 : -5);
  pr.ek.resize(n);
  pr.ev.resize(n);
  for (int t = 0; t < n; ++t) {
    pr.ek[t] = ex(rng);
    pr.ev[t] = ex(rng);
  }
  pr.scale.qmul = static_cast<uint16_t>(std::uniform_int_distribution<int>(1 << 15, 65535)(rng));
  // typical |s| ~ 2^(2 kv_bits - 2) sqrt(D): spread the base-2 logits over 2^-3 .. 2^8 octaves
  const int s_bits = 2 * p.kv_bits - 2 + static_cast<int>(std::log2(p.head_dim) / 2);
  const int u = std::uniform_int_distribution<int>(-3, 8)(rng);
  pr.scale.qexp = std::clamp(u - s_bits - 16 - pr.ek[0], -128, 127);
  return pr;
}

inline TileResult run(AttentionTile& tile, const Problem& pr) {
  tile.reset();
  for (size_t t = 0; t < pr.k.size(); ++t) tile.append(pr.k[t], pr.v[t], pr.ek[t], pr.ev[t]);
  return tile.query(pr.q, pr.scale);
}

// Base-2 logits of the problem in real numbers: x_t = s_t qmul 2^(qexp + ek_t).
inline std::vector<double> logits2(const Problem& pr) {
  std::vector<double> x(pr.k.size());
  for (size_t t = 0; t < x.size(); ++t) {
    int64_t s = 0;
    for (size_t i = 0; i < pr.q.size(); ++i) s += int64_t{pr.q[i]} * pr.k[t][i];
    x[t] = std::ldexp(static_cast<double>(s) * pr.scale.qmul, pr.scale.qexp + pr.ek[t]);
  }
  return x;
}

// Float softmax (base 2) of the logits.
inline std::vector<double> softmax2(const std::vector<double>& x) {
  const double m = *std::max_element(x.begin(), x.end());
  std::vector<double> p(x.size());
  double sum = 0;
  for (size_t t = 0; t < x.size(); ++t) sum += p[t] = std::exp2(x[t] - m);
  for (double& v : p) v /= sum;
  return p;
}

}  // namespace tile_test
