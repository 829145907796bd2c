#include "kvcim/runtime/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "kvcim/error.hpp"
#include "kvcim/random.hpp"

namespace kvcim::runtime {

namespace {

// Uniform index in [0, n): rejection of the top partial block, then the remainder, so every index
// is exactly equally likely and the draw is the same on every platform.
size_t draw_index(uint64_t& state, size_t n) {
  const uint64_t bound = n;
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;  // a multiple of bound
  for (;;) {
    const uint64_t x = splitmix64(state);
    if (x < limit) return static_cast<size_t>(x % bound);
  }
}

void check(const std::vector<std::span<const double>>& series, std::span<const int> starts,
           const BootstrapOptions& o) {
  const std::string where = "bootstrap";
  if (series.empty()) fail(where, "series", "none", "expected at least one");
  const size_t n = series[0].size();
  if (n == 0) fail(where, "values", "0 tokens", "expected at least 1");
  for (const auto& s : series)
    if (s.size() != n)
      fail(where, "values", std::to_string(s.size()) + " tokens", "expected " + std::to_string(n) + " as the first series");
  if (starts.empty() || starts[0] != 0) fail(where, "cluster_starts", "not starting at 0", "expected 0 first");
  for (size_t i = 1; i < starts.size(); ++i)
    if (starts[i] <= starts[i - 1] || static_cast<size_t>(starts[i]) >= n)
      fail(where, "cluster_starts[" + std::to_string(i) + "]", std::to_string(starts[i]),
           "expected ascending starts below " + std::to_string(n) + " (no empty cluster)");
  if (o.resamples < 1) fail(where, "resamples", std::to_string(o.resamples), "expected at least 1");
  if (!(o.confidence > 0.0 && o.confidence < 1.0))
    fail(where, "confidence", std::to_string(o.confidence), "expected a value in (0, 1)");
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The standard normal quantile, by bisection on the CDF (called once per interval).
double normal_quantile(double p) {
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Student's t quantile with nu degrees of freedom: the Cornish-Fisher expansion about the normal
// quantile (Abramowitz & Stegun 26.7.5), accurate to 1e-4 for nu >= 3.
double t_quantile(double p, double nu) {
  const double z = normal_quantile(p), z2 = z * z;
  return z + z * (z2 + 1) / (4 * nu) + z * ((5 * z2 + 16) * z2 + 3) / (96 * nu * nu) +
         z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * nu * nu * nu) +
         z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / (92160 * nu * nu * nu * nu);
}

}  // namespace

double expanded_tail(double confidence, int clusters) {
  const double alpha = 1.0 - confidence;
  if (clusters < 4) return alpha / 2;  // too few for the t expansion; the plain percentile
  const double k = clusters;
  return normal_cdf(-std::sqrt(k / (k - 1)) * t_quantile(1.0 - alpha / 2, k - 1));
}

double percentile_of_sorted(const std::vector<double>& sorted, double p) {
  const double rank = std::ceil(p * static_cast<double>(sorted.size()));
  const long i = std::clamp(static_cast<long>(rank) - 1, 0L, static_cast<long>(sorted.size()) - 1);
  return sorted[static_cast<size_t>(i)];
}

std::vector<Interval> cluster_bootstrap_means(const std::vector<std::span<const double>>& series,
                                              std::span<const int> starts, const BootstrapOptions& o) {
  check(series, starts, o);
  const size_t n = series[0].size(), k = starts.size(), m = series.size();
  // per-cluster token counts and sums: a replicate needs only these
  std::vector<double> count(k);
  std::vector<std::vector<double>> sum(m, std::vector<double>(k, 0.0));
  for (size_t c = 0; c < k; ++c) {
    const size_t end = c + 1 < k ? static_cast<size_t>(starts[c + 1]) : n;
    count[c] = static_cast<double>(end - static_cast<size_t>(starts[c]));
    for (size_t s = 0; s < m; ++s)
      for (size_t i = static_cast<size_t>(starts[c]); i < end; ++i) sum[s][c] += series[s][i];
  }
  std::vector<std::vector<double>> replicates(m, std::vector<double>(static_cast<size_t>(o.resamples)));
  std::vector<double> acc(m);
  uint64_t state = o.seed;
  for (int b = 0; b < o.resamples; ++b) {
    double tokens = 0.0;
    std::fill(acc.begin(), acc.end(), 0.0);
    for (size_t draw = 0; draw < k; ++draw) {
      const size_t c = draw_index(state, k);
      tokens += count[c];
      for (size_t s = 0; s < m; ++s) acc[s] += sum[s][c];
    }
    for (size_t s = 0; s < m; ++s) replicates[s][static_cast<size_t>(b)] = acc[s] / tokens;
  }
  const double tail = expanded_tail(o.confidence, static_cast<int>(k));
  std::vector<Interval> out(m);
  for (size_t s = 0; s < m; ++s) {
    double total = 0.0;
    for (double v : sum[s]) total += v;
    std::sort(replicates[s].begin(), replicates[s].end());
    out[s] = {total / static_cast<double>(n), percentile_of_sorted(replicates[s], tail),
              percentile_of_sorted(replicates[s], 1.0 - tail)};
  }
  return out;
}

Interval cluster_bootstrap_mean(std::span<const double> values, std::span<const int> starts,
                                const BootstrapOptions& o) {
  return cluster_bootstrap_means({values}, starts, o)[0];
}

}  // namespace kvcim::runtime
