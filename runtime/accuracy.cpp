#include "kvcim/runtime/accuracy.hpp"

#include <cmath>

#include "kvcim/cmodel/sampler.hpp"
#include "kvcim/cmodel/vector_max.hpp"

namespace kvcim::runtime {

namespace {
// log-sum-exp of the logits, in double
double log_partition(const cmodel::Vector& x) {
  const double m = cmodel::max_of(x);
  double z = 0.0;
  for (int i = 0; i < x.size(); ++i) z += std::exp(double(x[i]) - m);
  return m + std::log(z);
}
}  // namespace

double log_prob(const cmodel::Vector& logits, int token) {
  return double(logits[token]) - log_partition(logits);
}

StepAccuracy compare_logits(const cmodel::Vector& ref, const cmodel::Vector& test, int pos) {
  StepAccuracy s;
  s.pos = pos;
  const int n = static_cast<int>(ref.size());
  const int top = cmodel::argmax(ref.data(), n);
  s.top1_agree = top == cmodel::argmax(test.data(), n);
  double runner_up = -INFINITY;
  for (int i = 0; i < n; ++i)
    if (i != top) runner_up = std::max(runner_up, double(ref[i]));
  s.reference_margin = n > 1 ? double(ref[top]) - runner_up : INFINITY;
  const double lz_ref = log_partition(ref), lz_test = log_partition(test);
  s.log_z_reference = lz_ref;
  s.log_z_test = lz_test;
  double kl = 0.0, sum_abs = 0.0;
  for (int i = 0; i < n; ++i) {
    const double lp = ref[i] - lz_ref, lq = test[i] - lz_test;
    kl += std::exp(lp) * (lp - lq);
    const double e = std::abs(double(ref[i]) - test[i]);
    sum_abs += e;
    s.max_abs_error = std::max(s.max_abs_error, e);
  }
  s.kl = std::max(0.0, kl);  // rounding can leave -1e-17 where the distributions agree
  s.mean_abs_error = sum_abs / n;
  return s;
}

AccuracySummary summarize(const std::vector<StepAccuracy>& steps) {
  AccuracySummary a;
  a.steps = static_cast<int>(steps.size());
  if (steps.empty()) return a;
  int agree = 0;
  for (const StepAccuracy& s : steps) {
    agree += s.top1_agree;
    a.kl_mean += s.kl;
    a.kl_max = std::max(a.kl_max, s.kl);
    a.max_abs_error = std::max(a.max_abs_error, s.max_abs_error);
    a.mean_abs_error += s.mean_abs_error;
  }
  a.top1_agreement = double(agree) / a.steps;
  a.kl_mean /= a.steps;
  a.mean_abs_error /= a.steps;
  return a;
}

}  // namespace kvcim::runtime
