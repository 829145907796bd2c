// The reference model held to llama2.c's run.c (testdata/golden): logits, greedy ids, text and
// tokenizer. These fail if RoPE pairing, GQA head mapping, RMSNorm epsilon or the KV-cache
// position index is wrong (each was broken once on purpose to see it).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "kvcim/cmodel/sampler.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/npy.hpp"
#include "test_paths.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;

namespace {
nlohmann::json load_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}
}  // namespace

TEST(Golden, LogitsWithinToleranceOfRunC) {
  auto golden = load_json(test::golden("stories260K.once_upon_a_time.json"));
  NpyArray expected = read_npy(test::golden("stories260K.once_upon_a_time.logits.npy"));
  ASSERT_EQ(expected.shape.size(), 2u);
  const long rows = expected.shape[0], vocab = expected.shape[1];
  std::vector<int> ids = golden["ids"].get<std::vector<int>>();
  ids.resize(rows);
  auto model = Model::load(test::model_path());
  ASSERT_EQ(model->config().vocab_size, vocab);
  Matrix logits = model->logits(ids);
  for (long r = 0; r < rows; ++r) {
    float row_max = 0.0f, worst = 0.0f;
    for (long v = 0; v < vocab; ++v) {
      row_max = std::max(row_max, std::abs(expected.data[r * vocab + v]));
      worst = std::max(worst, std::abs(expected.data[r * vocab + v] - logits(r, v)));
    }
    EXPECT_LE(worst, 1e-4f * row_max) << "row " << r;
  }
}

TEST(Golden, GreedyIdsIdenticalForAll200Positions) {
  auto golden = load_json(test::golden("stories260K.once_upon_a_time.json"));
  const std::vector<int> expected = golden["ids"].get<std::vector<int>>();
  const std::vector<int> prompt = golden["prompt_ids"].get<std::vector<int>>();
  ASSERT_EQ(expected.size(), 200u);
  auto model = Model::load(test::model_path());
  Sampler greedy(0.0f, 0.9f, 1);
  std::vector<int> fed{prompt[0]};
  int token = prompt[0];
  for (int pos = 0; pos + 1 < 200; ++pos) {
    const Vector& logits = model->forward(token, pos);
    token = pos + 1 < static_cast<int>(prompt.size()) ? prompt[pos + 1] : greedy.sample(logits);
    fed.push_back(token);
  }
  EXPECT_EQ(fed, expected);
}

TEST(Golden, TextMatchesRunC) {
  auto golden = load_json(test::golden("stories260K.once_upon_a_time.json"));
  auto model = Model::load(test::model_path());
  Tokenizer tok = Tokenizer::load(test::tokenizer_path(), model->config().vocab_size);
  std::vector<int> prompt = tok.encode(golden["prompt"].get<std::string>(), true, false);
  EXPECT_EQ(prompt, golden["prompt_ids"].get<std::vector<int>>());
  Sampler greedy(0.0f, 0.9f, 1);
  std::vector<int> printed{prompt[0]};
  int token = prompt[0];
  for (int pos = 0; pos < 200; ++pos) {
    const Vector& logits = model->forward(token, pos);
    token = pos + 1 < static_cast<int>(prompt.size()) ? prompt[pos + 1] : greedy.sample(logits);
    printed.push_back(token);
  }
  EXPECT_EQ(tok.decode_all(printed), golden["text"].get<std::string>());
}

TEST(Golden, TokenizerCasesIdentical) {
  auto cases = load_json(test::golden("tokenizer_cases.json"));
  Tokenizer tok = Tokenizer::load(test::tokenizer_path());
  int checked = 0;
  for (const auto& c : cases["cases"]["tok512.bin"]) {
    EXPECT_EQ(tok.encode(c["text"].get<std::string>(), true, false), c["ids"].get<std::vector<int>>())
        << "text: '" << c["text"].get<std::string>() << "'";
    ++checked;
  }
  EXPECT_GE(checked, 5);
}
