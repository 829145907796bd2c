// Accuracy of a CIM run against the float reference fed the same tokens (the shadow), step by
// step: top-1 agreement, KL(reference || cim) of the next-token distributions, max and mean
// absolute logit error. (The teacher-forced evaluation on a corpus, with its intervals, is
// evaluation.hpp; it uses compare_logits and log_prob per token.)
#pragma once
#include <vector>

#include "kvcim/cmodel/weights.hpp"

namespace kvcim::runtime {

struct StepAccuracy {
  int pos = 0;
  bool top1_agree = false;
  double kl = 0.0;              // nats
  double max_abs_error = 0.0;   // max_v |logit_ref - logit_cim|
  double mean_abs_error = 0.0;  // mean_v |logit_ref - logit_cim|
  double reference_margin = 0.0;  // reference top-1 logit minus its runner-up: how near a tie
  // log-sum-exp of each side's logits (double): log_prob(x, t) is x[t] - this, bit for bit, so a
  // caller scoring the same rows need not sum 32,000 exps again.
  double log_z_reference = 0.0, log_z_test = 0.0;
};

StepAccuracy compare_logits(const cmodel::Vector& reference, const cmodel::Vector& test, int pos);

// log softmax(logits)[token], in double.
double log_prob(const cmodel::Vector& logits, int token);

struct AccuracySummary {
  int steps = 0;
  double top1_agreement = 0.0;  // fraction of steps whose argmax agrees
  double kl_mean = 0.0, kl_max = 0.0;
  double max_abs_error = 0.0;   // over all steps
  double mean_abs_error = 0.0;  // mean over steps of the per-step mean
};
AccuracySummary summarize(const std::vector<StepAccuracy>& steps);

}  // namespace kvcim::runtime
