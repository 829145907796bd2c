// The bootstrap intervals are checked by simulation: on synthetic per-token values with a known
// mean, the 95% interval must cover it in 93-97% of 1,000 trials, for skewed iid tokens and for
// tokens correlated within clusters of unequal size (the case of the evaluation corpus, where
// the cluster bootstrap resamples sequences). The token bootstrap on clustered data must
// undercover, which is why the evaluation resamples sequences.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "error_of.hpp"
#include "kvcim/runtime/bootstrap.hpp"

using namespace kvcim;
using namespace kvcim::runtime;
using kvcim::test::error_of;

namespace {

// The test's own generator (not <random>'s distributions, whose output differs between standard
// libraries), so the measured coverage is the same everywhere.
struct Rng {
  uint64_t state;
  double uniform() {  // (0, 1]
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (static_cast<double>((z ^ (z >> 31)) >> 11) + 1.0) * 0x1p-53;
  }
  double exponential() { return -std::log(uniform()); }  // mean 1, skewness 2
  double normal() { return std::sqrt(-2.0 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); }
  int between(int lo, int hi) { return lo + static_cast<int>(uniform() * (hi - lo + 1) - 1e-12); }
};

struct Sample {
  std::vector<double> values;
  std::vector<int> starts;
};

// iid exponential tokens (true mean 1), each token its own cluster.
Sample iid_sample(Rng& rng, int n) {
  Sample s;
  for (int i = 0; i < n; ++i) {
    s.values.push_back(rng.exponential());
    s.starts.push_back(i);
  }
  return s;
}

// Clusters of 10..60 tokens; a token is its cluster's shared effect (exponential, mean 1) plus its
// own exponential noise (mean 1), so the true per-token mean is 2 and tokens of a cluster are
// strongly correlated (intra-cluster correlation 0.5).
Sample clustered_sample(Rng& rng, int clusters) {
  Sample s;
  for (int c = 0; c < clusters; ++c) {
    s.starts.push_back(static_cast<int>(s.values.size()));
    const double effect = rng.exponential();
    const int size = rng.between(10, 60);
    for (int i = 0; i < size; ++i) s.values.push_back(effect + rng.exponential());
  }
  return s;
}

std::vector<int> every_token(size_t n) {
  std::vector<int> starts(n);
  std::iota(starts.begin(), starts.end(), 0);
  return starts;
}

template <class Make>
double coverage(Make make, double true_mean, bool ignore_clusters, int trials = 1000) {
  Rng rng{12345};
  BootstrapOptions o;
  o.resamples = 1000;
  int covered = 0;
  for (int t = 0; t < trials; ++t) {
    const Sample s = make(rng);
    o.seed = 1000 + static_cast<uint64_t>(t);
    const std::vector<int> starts = ignore_clusters ? every_token(s.values.size()) : s.starts;
    const Interval ci = cluster_bootstrap_mean(s.values, starts, o);
    covered += ci.low <= true_mean && true_mean <= ci.high;
  }
  return double(covered) / trials;
}

}  // namespace

TEST(Bootstrap, IidSkewedTokensCoverTheMeanIn93To97PercentOfTrials) {
  const double c = coverage([](Rng& r) { return iid_sample(r, 200); }, 1.0, false);
  std::cerr << "iid exponential, n = 200: coverage " << c << "\n";
  EXPECT_GE(c, 0.93);
  EXPECT_LE(c, 0.97);
}

TEST(Bootstrap, ClusteredTokensCoverTheMeanIn93To97PercentOfTrials) {
  const double c = coverage([](Rng& r) { return clustered_sample(r, 60); }, 2.0, false);
  std::cerr << "60 correlated clusters: coverage " << c << "\n";
  EXPECT_GE(c, 0.93);
  EXPECT_LE(c, 0.97);
}

TEST(Bootstrap, TokenBootstrapOfClusteredTokensUndercovers) {
  // what the evaluation would report if it resampled tokens: far too narrow
  const double c = coverage([](Rng& r) { return clustered_sample(r, 60); }, 2.0, true, 100);
  std::cerr << "60 correlated clusters, token bootstrap: coverage " << c << "\n";
  EXPECT_LT(c, 0.8);
}

TEST(Bootstrap, ValueIsTheTokenWeightedMeanAndIntervalsAreDeterministic) {
  Rng rng{7};
  const Sample s = clustered_sample(rng, 20);
  const std::vector<double> doubled = [&] {
    std::vector<double> d(s.values);
    for (double& v : d) v *= 2;
    return d;
  }();
  const double mean = std::accumulate(s.values.begin(), s.values.end(), 0.0) / s.values.size();
  const std::vector<Interval> a = cluster_bootstrap_means({s.values, doubled}, s.starts, {});
  EXPECT_NEAR(a[0].value, mean, 1e-12);
  EXPECT_LT(a[0].low, a[0].value);
  EXPECT_GT(a[0].high, a[0].value);
  // one joint resampling: a series twice the other has an interval twice as wide, exactly
  EXPECT_NEAR(a[1].low, 2 * a[0].low, 1e-12);
  EXPECT_NEAR(a[1].high, 2 * a[0].high, 1e-12);
  const Interval again = cluster_bootstrap_mean(s.values, s.starts, {});
  EXPECT_EQ(again.low, a[0].low);
  EXPECT_EQ(again.high, a[0].high);
  BootstrapOptions other;
  other.seed = 2;
  EXPECT_NE(cluster_bootstrap_mean(s.values, s.starts, other).low, a[0].low);
  // a constant series has a zero-width interval
  const std::vector<double> ones(s.values.size(), 1.0);
  const Interval flat = cluster_bootstrap_mean(ones, s.starts, {});
  EXPECT_EQ(flat.low, 1.0);
  EXPECT_EQ(flat.high, 1.0);
}

TEST(Bootstrap, ExpandedTailWidensForFewClusters) {
  EXPECT_NEAR(expanded_tail(0.95, 60), 0.0218, 0.0003);
  EXPECT_NEAR(expanded_tail(0.95, 10), 0.00856, 0.0001);  // t_9 = 2.262, sqrt(10/9) -> Phi(-2.384)
  EXPECT_NEAR(expanded_tail(0.95, 1000000), 0.025, 1e-4);
  EXPECT_NEAR(expanded_tail(0.90, 1000000), 0.05, 1e-4);
  EXPECT_NEAR(expanded_tail(0.95, 3), 0.025, 1e-12);  // too few clusters: the plain percentile
}

TEST(Bootstrap, PercentileIsTheNearestRank) {
  std::vector<double> v(2000);
  std::iota(v.begin(), v.end(), 1.0);  // 1..2000
  EXPECT_EQ(percentile_of_sorted(v, 0.025), 50.0);    // 50 of 2000 at or below
  EXPECT_EQ(percentile_of_sorted(v, 0.975), 1950.0);  // 50 above
  EXPECT_EQ(percentile_of_sorted(v, 0.0), 1.0);
  EXPECT_EQ(percentile_of_sorted(v, 1.0), 2000.0);
}

TEST(Bootstrap, BadArgumentsAreNamed) {
  const std::vector<double> v{1, 2, 3};
  const std::vector<int> starts{0, 2};
  EXPECT_NE(error_of([&] { cluster_bootstrap_mean(std::span<const double>{}, std::vector<int>{0}, {}); }).find("0 tokens"), std::string::npos);
  EXPECT_NE(error_of([&] { cluster_bootstrap_mean(v, std::vector<int>{1}, {}); }).find("cluster_starts"), std::string::npos);
  EXPECT_NE(error_of([&] { cluster_bootstrap_mean(v, std::vector<int>{0, 3}, {}); }).find("cluster_starts[1]"), std::string::npos);
  BootstrapOptions o;
  o.resamples = 0;
  EXPECT_NE(error_of([&] { cluster_bootstrap_mean(v, starts, o); }).find("resamples = 0"), std::string::npos);
  o = {};
  o.confidence = 1.0;
  EXPECT_NE(error_of([&] { cluster_bootstrap_mean(v, starts, o); }).find("confidence"), std::string::npos);
}
