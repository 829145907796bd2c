// kvcim explain's figures: the no-cache mode computes the same logits at quadratic per-step cost,
// the cached mode at linear cost; the candidates are the reference softmax's; neighbours are
// ordered by cosine similarity; the cost figures are the ledgers'.
#include <gtest/gtest.h>

#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/runtime/explain.hpp"
#include "main_job.hpp"
#include "test_paths.hpp"
#include "kvcim/cmodel/vector_max.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
using namespace kvcim::runtime;

namespace {
using Fixture = test::EmbeddedModel;
}  // namespace

TEST(Explain, NoCacheModeGivesTheCachedLogits) {
  Fixture f;
  const Config& c = f.ck.config;
  CountingBackend cached(c, f.ck.weights);
  RunState s(c);
  const std::vector<int> tokens = {1, 403, 407, 261, 378, 432, 383};
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    const Vector& l = forward(c, f.ck.weights, s, cached, tokens[pos], static_cast<int>(pos));
    int64_t macs = 0;
    const Vector n = forward_without_cache(c, f.ck.weights, {tokens.begin(), tokens.begin() + pos + 1}, macs);
    EXPECT_LE(kvcim::cmodel::max_abs(n - l), 1e-5f * kvcim::cmodel::max_abs(l)) << "position " << pos;
  }
}

TEST(Explain, CachedCostGrowsLinearlyAndUncachedQuadratically) {
  Fixture f;
  ExplainOptions o;
  o.steps = 16;
  const nlohmann::json e = explain(f.ck, f.tok, o, {});
  const auto& steps = e["kv_cache"]["steps"];
  ASSERT_EQ(steps.size(), 16u);
  std::vector<double> cached, nocache;
  for (const auto& s : steps) {
    cached.push_back(s["macs_cached"].get<double>());
    nocache.push_back(s["macs_without_cache"].get<double>());
  }
  // cached: constant second difference 0 (a line in the position)
  for (size_t p = 2; p < cached.size(); ++p) EXPECT_EQ(cached[p] - 2 * cached[p - 1] + cached[p - 2], 0.0);
  EXPECT_GT(cached[15], cached[0]);
  // without the cache: constant, positive second difference (a parabola in the position)
  const double d2 = nocache[2] - 2 * nocache[1] + nocache[0];
  EXPECT_GT(d2, 0.0);
  for (size_t p = 2; p < nocache.size(); ++p) EXPECT_EQ(nocache[p] - 2 * nocache[p - 1] + nocache[p - 2], d2);
  EXPECT_EQ(nocache[0], cached[0]);  // position 0 has nothing to reuse
}

TEST(Explain, CandidatesAreTheReferenceSoftmax) {
  Fixture f;
  ExplainOptions o;
  o.steps = 8;
  const nlohmann::json e = explain(f.ck, f.tok, o, {});
  auto model = Model::load(test::model_path());
  ASSERT_FALSE(e["predictions"].empty());
  std::vector<int> fed;
  for (const auto& t : e["tokens"]) fed.push_back(t["id"]);
  for (const auto& p : e["predictions"]) {
    const int pos = p["position"];
    double sum = 0, prev = 1.0;
    // recompute the reference distribution at this position
    Matrix logits = model->logits(std::vector<int>(fed.begin(), fed.begin() + pos + 1));
    std::vector<float> probs(logits.row(pos).data(), logits.row(pos).data() + logits.cols());
    softmax(probs.data(), static_cast<int>(probs.size()));
    for (const auto& cand : p["candidates"]) {
      const double prob = cand["probability"];
      EXPECT_NEAR(prob, probs[cand["id"].get<int>()], 1e-6);
      EXPECT_LE(prob, prev);
      prev = prob;
      sum += prob;
    }
    EXPECT_LE(sum, 1.0 + 1e-6);
    EXPECT_EQ(p["chosen"], p["candidates"][0]["id"]);  // greedy
    fed.resize(pos + 1);
    fed.push_back(p["chosen"]);
  }
}

TEST(Explain, NeighboursOrderedByCosine) {
  Fixture f;
  const nlohmann::json e = explain(f.ck, f.tok, {}, {});
  ASSERT_FALSE(e["vectors"].empty());
  for (const auto& v : e["vectors"]) {
    const Vector a = f.ck.weights.token_embedding.row(v["id"].get<int>());
    double prev = 2.0;
    for (const auto& n : v["nearest"]) {
      const Vector b = f.ck.weights.token_embedding.row(n["id"].get<int>());
      const double cos = a.dot(b) / (a.norm() * b.norm());
      EXPECT_NEAR(n["cosine"].get<double>(), cos, 1e-5);
      EXPECT_LE(cos, prev + 1e-12);
      prev = cos;
    }
    EXPECT_NEAR(v["norm"].get<double>(), a.norm(), 1e-4);
  }
}

TEST(Explain, CostFiguresAreTheLedgers) {
  Fixture f;
  energy::BaselineConfig cfg;
  energy::Costs costs;
  for (energy::EventKind k : energy::all_event_kinds()) costs.energy_aj[static_cast<int>(k)] = 1000 + static_cast<int>(k);
  ExplainEnergy en;
  en.conventional_step_ledger = [&](int pos) { return energy::baseline_ledger(f.ck.config, pos, cfg); };
  en.conventional_costs = costs;
  ExplainOptions o;
  o.steps = 6;
  const nlohmann::json e = explain(f.ck, f.tok, o, en);
  for (const auto& row : e["costs"]["steps"]) {
    const int pos = row["position"];
    const energy::Ledger l = energy::baseline_ledger(f.ck.config, pos, cfg);
    EXPECT_NEAR(row["conventional"]["total_pj"].get<double>(), l.cost(costs).energy_aj * 1e-6, 1e-9);
    EXPECT_NEAR(row["conventional"]["moving_pj"].get<double>() + row["conventional"]["computing_pj"].get<double>(),
                row["conventional"]["total_pj"].get<double>(), 1e-9);
    EXPECT_EQ(row["kv_bytes_moved"].get<int64_t>() * 8,
              l.count(energy::Op::attn_scores, energy::EventKind::hbm_bit) +
                  l.count(energy::Op::attn_weighted_sum, energy::EventKind::hbm_bit) +
                  l.count(energy::Op::kv_write, energy::EventKind::hbm_bit));
  }
}

TEST(Explain, PiecesPrintOnOneLine) {
  Fixture f;
  EXPECT_EQ(display_piece(f.tok, 1), "\\n<s>\\n");        // BOS is "\n<s>\n" in tok512
  EXPECT_EQ(display_piece(f.tok, 0xE2 + 3), "\\xE2");     // a byte-fallback piece shows its byte
  EXPECT_EQ(display_piece(f.tok, 403), " Once");
}
