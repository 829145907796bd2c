// Hugging Face checkpoints: the embedded model through the Hugging Face layout and back gives the
// same tokens and logits; HF -> llama2.c -> HF is byte-identical; the RoPE permutation turns
// llama2.c's adjacent-pair rotation into Hugging Face's rotate-half; bad folders are refused with
// one line naming the file and the field.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "error_of.hpp"
#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/hf_checkpoint.hpp"
#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/io.hpp"
#include "test_paths.hpp"
#include "kvcim/cmodel/vector_max.hpp"

using namespace kvcim;
using namespace kvcim::cmodel;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/kvcim_hf_" + name;
  fs::remove_all(dir);
  return dir;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Config gqa_config() {
  Config c;
  c.dim = 64, c.hidden_dim = 96, c.n_layers = 2, c.n_heads = 8, c.n_kv_heads = 2;
  c.vocab_size = 300, c.seq_len = 32, c.shared_classifier = false;
  c.rope_theta = 500000.0f, c.rms_norm_eps = 1e-6f;
  return c;
}

const std::vector<std::string> kPrompts = {
    "Once upon a time", "Lily and Tom went to the park.", "", " leading space", "two  spaces",
    "new\nline", "caf\xC3\xA9 \xE2\x82\xAC and \xF0\x9F\x98\x80", "\"Hello!\" she said, 123."};

}  // namespace

TEST(HfCheckpoint, EmbeddedModelThroughHfLayoutGivesSameTokensAndLogits) {
  const std::string dir = fresh_dir("embedded");
  const Checkpoint bin = read_checkpoint(test::model_path());
  const Tokenizer tok = Tokenizer::load(test::tokenizer_path(), bin.config.vocab_size);
  write_hf_checkpoint(dir, bin.config, bin.weights, DType::f32, tok.hf_json());
  ASSERT_TRUE(is_hf_checkpoint(dir));

  const Checkpoint hf = load_checkpoint(dir);
  EXPECT_EQ(hf.config.dim, bin.config.dim);
  EXPECT_EQ(hf.config.n_kv_heads, bin.config.n_kv_heads);
  EXPECT_EQ(hf.config.shared_classifier, bin.config.shared_classifier);
  EXPECT_EQ(hf.config.rope_theta, 10000.0f);
  EXPECT_EQ(hf.config.rms_norm_eps, 1e-5f);

  const Tokenizer hf_tok = Tokenizer::load(tokenizer_path_for(dir), hf.config.vocab_size);
  ASSERT_TRUE(hf_tok.is_hf());
  for (const std::string& p : kPrompts) {
    EXPECT_EQ(hf_tok.encode(p, true, false), tok.encode(p, true, false)) << "prompt '" << p << "'";
    EXPECT_EQ(hf_tok.decode_text(hf_tok.encode(p, true, false)), tok.decode_text(tok.encode(p, true, false)));
  }
  // and a longer text: the evaluation corpus' first lines
  std::istringstream eval(slurp(test::source_dir() + "/testdata/eval/tinystories_eval.txt"));
  std::string line;
  for (int i = 0; i < 200 && std::getline(eval, line); ++i)
    ASSERT_EQ(hf_tok.encode(line, true, false), tok.encode(line, true, false)) << "line " << i << ": " << line;

  Model a(bin), b(hf);
  const std::vector<int> ids = tok.encode("Once upon a time, there was a little girl named Lily.", true, false);
  const Matrix la = a.logits(ids), lb = b.logits(ids);
  for (Eigen::Index r = 0; r < la.rows(); ++r) {
    const float scale = kvcim::cmodel::max_abs(la.row(r));
    EXPECT_LE(kvcim::cmodel::max_abs(la.row(r) - lb.row(r)), 1e-6f * scale) << "row " << r;
  }
}

TEST(HfCheckpoint, HfToLlama2cToHfIsByteIdentical) {
  for (DType dtype : {DType::f32, DType::f16, DType::bf16}) {
    const std::string tag = safetensors_name(dtype);
    const Config c = gqa_config();
    const std::string first = fresh_dir("rt1_" + tag), second = fresh_dir("rt2_" + tag);
    const std::string bin = ::testing::TempDir() + "/kvcim_hf_rt_" + tag + ".bin";
    write_hf_checkpoint(first, c, random_weights(c, 7), dtype);
    const Checkpoint hf = read_hf_checkpoint(first);
    write_checkpoint(bin, hf.config, hf.weights);
    Checkpoint back = read_checkpoint(bin);
    back.config.rope_theta = hf.config.rope_theta;  // not stored by llama2.c
    back.config.rms_norm_eps = hf.config.rms_norm_eps;
    write_hf_checkpoint(second, back.config, back.weights, dtype);
    EXPECT_EQ(slurp(first + "/model.safetensors"), slurp(second + "/model.safetensors")) << tag;
    EXPECT_EQ(slurp(first + "/config.json"), slurp(second + "/config.json")) << tag;
  }
}

TEST(HfCheckpoint, ConfigCarriesRopeThetaEpsGqaAndSeparateClassifier) {
  const std::string dir = fresh_dir("gqa");
  const Config c = gqa_config();
  const Weights w = random_weights(c, 3);
  write_hf_checkpoint(dir, c, w, DType::f32);
  const Checkpoint ck = load_checkpoint(dir);
  EXPECT_EQ(ck.config.rope_theta, 500000.0f);
  EXPECT_EQ(ck.config.rms_norm_eps, 1e-6f);
  EXPECT_EQ(ck.config.n_kv_heads, 2);
  EXPECT_FALSE(ck.config.shared_classifier);
  EXPECT_EQ(ck.weights.wcls, w.wcls);
  EXPECT_EQ(ck.weights.layers[1].wq, w.layers[1].wq);
  EXPECT_EQ(ck.weights.layers[1].wk, w.layers[1].wk);
  const auto j = nlohmann::json::parse(slurp(dir + "/config.json"));
  EXPECT_EQ(j["rope_theta"], 500000.0);
  EXPECT_EQ(j["rms_norm_eps"], 1e-6);
  EXPECT_EQ(j["num_key_value_heads"], 2);
  EXPECT_EQ(j["tie_word_embeddings"], false);
  // theta matters to the forward pass: the same weights at theta 10000 give other logits
  Checkpoint other = ck;
  other.config.rope_theta = 10000.0f;
  Model m1(ck), m2(other);
  EXPECT_GT(kvcim::cmodel::max_abs(m1.logits({1, 5, 9, 11}) - m2.logits({1, 5, 9, 11})), 1e-3f);
}

// Independent of the permutation's own code: Hugging Face's rotate-half RoPE on the rows written
// to the file equals the permuted result of llama2.c's adjacent-pair RoPE (the forward pass's).
TEST(HfCheckpoint, PermutationTurnsAdjacentPairRopeIntoRotateHalf) {
  Config c = gqa_config();
  const int hd = c.head_dim(), pos = 7;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  Matrix wq(c.dim, c.dim), wk(c.kv_dim(), c.dim);
  for (int64_t i = 0; i < wq.size(); ++i) wq.data()[i] = u(rng);
  for (int64_t i = 0; i < wk.size(); ++i) wk.data()[i] = u(rng);
  Vector x(c.dim);
  for (int i = 0; i < c.dim; ++i) x[i] = u(rng);
  Vector q = wq * x, k = wk * x;  // llama2.c layout
  rope(q.data(), k.data(), pos, c);
  auto rotate_half = [&](Vector v) {  // transformers' modeling_llama apply_rotary_pos_emb
    Vector out = v;
    for (int h = 0; h < v.size() / hd; ++h)
      for (int i = 0; i < hd / 2; ++i) {
        const double inv_freq = 1.0 / std::pow(double(c.rope_theta), 2.0 * i / hd);
        const double cs = std::cos(pos * inv_freq), sn = std::sin(pos * inv_freq);
        const double a = v[h * hd + i], b = v[h * hd + i + hd / 2];
        out[h * hd + i] = float(a * cs - b * sn);
        out[h * hd + i + hd / 2] = float(b * cs + a * sn);
      }
    return out;
  };
  const Vector q_hf = rotate_half(rope_rows_to_hf(wq, c.n_heads) * x);
  const Vector k_hf = rotate_half(rope_rows_to_hf(wk, c.n_kv_heads) * x);
  // the file's rows, permuted back, are llama2.c's
  const Matrix q_back = rope_rows_from_hf(Matrix(q_hf), c.n_heads);
  const Matrix k_back = rope_rows_from_hf(Matrix(k_hf), c.n_kv_heads);
  EXPECT_LE(kvcim::cmodel::max_abs(q_back.col(0) - q), 1e-4f);
  EXPECT_LE(kvcim::cmodel::max_abs(k_back.col(0) - k), 1e-4f);
  EXPECT_EQ(rope_rows_from_hf(rope_rows_to_hf(wq, c.n_heads), c.n_heads), wq);
}

TEST(HfCheckpoint, ShardedIndexAndTiedEmbeddings) {
  const std::string dir = fresh_dir("tied");
  Config c = gqa_config();
  c.shared_classifier = true;
  const Weights w = random_weights(c, 11);
  write_hf_checkpoint(dir, c, w, DType::f32);
  const Checkpoint one = load_checkpoint(dir);
  EXPECT_TRUE(one.config.shared_classifier);
  EXPECT_EQ(one.weights.wcls.size(), 0);
  // the same tensors split over two shards named by an index
  const std::string sharded = fresh_dir("sharded");
  fs::create_directories(sharded);
  fs::copy_file(dir + "/config.json", sharded + "/config.json");
  std::vector<TensorOut> a, b;
  nlohmann::json map;
  auto add = [&](std::vector<TensorOut>& shard, const std::string& file, const std::string& name,
                 std::vector<int64_t> shape, const float* data) {
    shard.push_back({name, shape, data});
    map[name] = file;
  };
  const SafetensorsFile f(dir + "/model.safetensors");
  std::vector<std::vector<float>> keep;
  for (const auto& t : f.tensors()) {
    keep.emplace_back(t.elements());
    f.read(t, keep.back().data());
    const bool first = t.name.find("layers.1.") == std::string::npos;
    add(first ? a : b, first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors",
        t.name, t.shape, keep.back().data());
  }
  write_file_atomic(sharded + "/model-00001-of-00002.safetensors", safetensors_bytes(a, DType::f32));
  write_file_atomic(sharded + "/model-00002-of-00002.safetensors", safetensors_bytes(b, DType::f32));
  write_file_atomic(sharded + "/model.safetensors.index.json", nlohmann::json{{"metadata", nlohmann::json::object()}, {"weight_map", map}}.dump());
  const Checkpoint two = load_checkpoint(sharded);
  EXPECT_EQ(two.weights.layers[1].w2, one.weights.layers[1].w2);
  EXPECT_EQ(two.weights.token_embedding, one.weights.token_embedding);
  // a shard name leading out of the folder is refused
  map["model.norm.weight"] = "../x.safetensors";
  fs::remove(sharded + "/model.safetensors.index.json");
  write_file_atomic(sharded + "/model.safetensors.index.json", nlohmann::json{{"weight_map", map}}.dump());
  const std::string msg = test::error_of([&] { load_checkpoint(sharded); });
  EXPECT_NE(msg.find("model.safetensors.index.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("weight_map.model.norm.weight"), std::string::npos) << msg;
}

// ---- bad folders: one line naming the file and the field --------------------------------------

namespace {

// A valid small folder, then `edit` applied to its config.json text (as JSON).
std::string folder_with_config(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  const std::string dir = fresh_dir(name);
  const Config c = gqa_config();
  write_hf_checkpoint(dir, c, random_weights(c, 1), DType::bf16);
  auto j = nlohmann::json::parse(slurp(dir + "/config.json"));
  edit(j);
  std::ofstream(dir + "/config.json", std::ios::trunc) << j.dump(2);
  return dir;
}

void expect_names(const std::string& msg, std::initializer_list<std::string> parts) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

}  // namespace

TEST(HfCheckpoint, BadConfigJson) {
  auto dir = folder_with_config("mistral", [](auto& j) { j["architectures"] = {"MistralForCausalLM"}; });
  expect_names(test::error_of([&] { load_checkpoint(dir); }), {dir + "/config.json", "architectures", "MistralForCausalLM"});
  dir = folder_with_config("nohidden", [](auto& j) { j.erase("hidden_size"); });
  expect_names(test::error_of([&] { load_checkpoint(dir); }), {dir + "/config.json", "hidden_size", "missing"});
  dir = folder_with_config("badkv", [](auto& j) { j["num_key_value_heads"] = 3; });
  expect_names(test::error_of([&] { load_checkpoint(dir); }), {dir + "/config.json", "num_key_value_heads = 3", "must divide num_attention_heads = 8"});
  dir = folder_with_config("scaling", [](auto& j) { j["rope_scaling"] = {{"type", "llama3"}}; });
  expect_names(test::error_of([&] { load_checkpoint(dir); }), {"config.json", "rope_scaling"});
  dir = folder_with_config("notjson", [](auto&) {});
  std::ofstream(dir + "/config.json", std::ios::trunc) << "{\"hidden_size\": 64,";
  expect_names(test::error_of([&] { load_checkpoint(dir); }), {dir + "/config.json", "JSON"});
}

TEST(HfCheckpoint, TensorsThatDisagreeWithConfigOrAreMissing) {
  // intermediate_size changed: gate_proj's shape no longer agrees
  auto dir = folder_with_config("shape", [](auto& j) { j["intermediate_size"] = 128; });
  expect_names(test::error_of([&] { load_checkpoint(dir); }),
               {dir + "/model.safetensors", "model.layers.0.mlp.gate_proj.weight", "shape", "[96,64]", "[128,64]"});
  // untied in config.json but written tied: lm_head.weight missing
  dir = fresh_dir("nolmhead");
  Config c = gqa_config();
  c.shared_classifier = true;
  write_hf_checkpoint(dir, c, random_weights(c, 1), DType::f16);
  auto j = nlohmann::json::parse(slurp(dir + "/config.json"));
  j["tie_word_embeddings"] = false;
  std::ofstream(dir + "/config.json", std::ios::trunc) << j.dump();
  expect_names(test::error_of([&] { load_checkpoint(dir); }), {dir, "lm_head.weight", "missing"});
  // an extra tensor (a bias) is not silently ignored
  dir = fresh_dir("bias");
  c = gqa_config();
  write_hf_checkpoint(dir, c, random_weights(c, 1), DType::f32);
  {
    const SafetensorsFile f(dir + "/model.safetensors");
    std::vector<std::vector<float>> keep;
    std::vector<TensorOut> out;
    for (const auto& t : f.tensors()) {
      keep.emplace_back(t.elements());
      f.read(t, keep.back().data());
      out.push_back({t.name, t.shape, keep.back().data()});
    }
    std::vector<float> bias(c.dim, 0.0f);
    out.push_back({"model.layers.0.self_attn.q_proj.bias", {c.dim}, bias.data()});
    write_file_atomic(dir + "/model.safetensors", safetensors_bytes(out, DType::f32));
  }
  expect_names(test::error_of([&] { load_checkpoint(dir); }), {dir + "/model.safetensors", "q_proj.bias", "unexpected"});
  // no weights at all
  dir = fresh_dir("noweights");
  write_hf_checkpoint(dir, c, random_weights(c, 1), DType::f32);
  fs::remove(dir + "/model.safetensors");
  expect_names(test::error_of([&] { load_checkpoint(dir); }), {dir, "model.safetensors", "missing"});
}

TEST(HfCheckpoint, WriterRefusesAnExistingFolderAndLeavesNothingHalfWritten) {
  const std::string dir = fresh_dir("exists");
  fs::create_directories(dir);
  const Config c = gqa_config();
  expect_names(test::error_of([&] { write_hf_checkpoint(dir, c, random_weights(c, 1), DType::f32); }), {dir, "exists"});
  EXPECT_TRUE(fs::is_empty(dir));
  for (const auto& e : fs::directory_iterator(::testing::TempDir()))  // this test's own only (ctest -j)
    EXPECT_NE(e.path().filename().string().rfind("kvcim_hf_exists.partial", 0), 0u) << e.path();
}
