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
std::string folder_with_config(const std::string& name, const std::function<void(nlohmann::json&)>& edit,
                               const Config& c = gqa_config()) {
  const std::string dir = fresh_dir(name);
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
  auto dir = folder_with_config("gpt2", [](auto& j) { j["architectures"] = {"GPT2LMHeadModel"}; });
  expect_names(test::error_of([&] { load_checkpoint(dir); }),
               {dir + "/config.json", "architectures", "GPT2LMHeadModel",
                "supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM"});
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
  // intermediate_size changed: gate_proj's shape no longer agrees (named by the field, before
  // any tensor is read)
  auto dir = folder_with_config("shape", [](auto& j) { j["intermediate_size"] = 128; });
  expect_names(test::error_of([&] { load_checkpoint(dir); }),
               {dir + "/config.json", "intermediate_size = 128", "the tensors say 96", "model.layers.0.mlp.gate_proj.weight"});
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

// ---- the families: Mistral, Qwen2, Qwen3, Llama-3's rope_scaling, head_dim ------------------
// (their logits against transformers' forward pass in numpy: python/tests/test_hf.py)

namespace {

// gqa_config() as each family has it (Qwen3: head_dim 32 apart from 64 / 8 = 8).
Config family_config(Architecture a) {
  Config c = gqa_config();
  c.architecture = a;
  switch (a) {
    case Architecture::llama:
      c.rope_scaling = {8.0, 1.0, 4.0, 64};
      c.qkv_bias = c.o_bias = true;  // attention_bias
      break;
    case Architecture::mistral: c.sliding_window = 5; break;
    case Architecture::qwen2: c.qkv_bias = true, c.shared_classifier = true; break;
    case Architecture::qwen3: c.qk_norm = true, c.head_size = 32, c.shared_classifier = true; break;
  }
  return c;
}

constexpr Architecture kFamilies[] = {Architecture::llama, Architecture::mistral, Architecture::qwen2,
                                      Architecture::qwen3};

Matrix logits_of(const Checkpoint& ck, const std::vector<int>& ids) {
  Model m(Checkpoint{ck});
  return m.logits(ids);
}

}  // namespace

TEST(HfFamilies, EachFamilyThroughTheWriterAndReaderKeepsEveryWeightAndLogit) {
  const std::vector<int> ids = {1, 17, 254, 3, 99, 42, 42, 7, 280, 5, 11, 160};
  for (Architecture a : kFamilies) {
    SCOPED_TRACE(architecture_name(a));
    const std::string dir = fresh_dir(std::string("family_") + model_type(a));
    Checkpoint ck{family_config(a), random_weights(family_config(a), 3), ""};
    write_hf_checkpoint(dir, ck.config, ck.weights, DType::f32);
    const Checkpoint back = read_hf_checkpoint(dir);
    const Config& c = back.config;
    EXPECT_EQ(c.architecture, a);
    EXPECT_EQ(c.head_dim(), ck.config.head_dim());
    EXPECT_EQ(c.q_dim(), ck.config.q_dim());
    EXPECT_EQ(std::make_tuple(c.qkv_bias, c.o_bias, c.qk_norm, c.sliding_window, c.shared_classifier),
              std::make_tuple(ck.config.qkv_bias, ck.config.o_bias, ck.config.qk_norm, ck.config.sliding_window,
                              ck.config.shared_classifier));
    EXPECT_EQ(c.rope_scaling.factor, ck.config.rope_scaling.factor);
    for (int l = 0; l < c.n_layers; ++l) {
      const LayerWeights &x = ck.weights.layers[l], &y = back.weights.layers[l];
      EXPECT_EQ(x.wq, y.wq);
      EXPECT_EQ(x.wo, y.wo);
      EXPECT_EQ(x.bq, y.bq);  // permuted with wq's rows when written, back when read
      EXPECT_EQ(x.bk, y.bk);
      EXPECT_EQ(x.bv, y.bv);
      EXPECT_EQ(x.bo, y.bo);
      EXPECT_EQ(x.q_norm, y.q_norm);
      EXPECT_EQ(x.k_norm, y.k_norm);
    }
    EXPECT_EQ(logits_of(ck, ids), logits_of(back, ids));
  }
}

TEST(HfFamilies, EachFamilysFeatureChangesTheLogits) {
  // the forward pass uses what the config says: taking each feature away changes the logits
  const std::vector<int> ids = {1, 17, 254, 3, 99, 42, 42, 7, 280, 5, 11, 160};
  for (Architecture a : kFamilies) {
    SCOPED_TRACE(architecture_name(a));
    const Checkpoint ck{family_config(a), random_weights(family_config(a), 3), ""};
    Checkpoint plain = ck;
    plain.config.rope_scaling = {};
    plain.config.sliding_window = 0;
    for (LayerWeights& l : plain.weights.layers) {
      l.bq.setZero(), l.bk.setZero(), l.bv.setZero(), l.bo.setZero();
      l.q_norm.setOnes(), l.k_norm.setOnes();
    }
    const Matrix x = logits_of(ck, ids), y = logits_of(plain, ids);
    EXPECT_GT(max_abs(x - y), 1e-3 * max_abs(x));
    if (a == Architecture::mistral) {  // the window (5) changes nothing before it is full
      EXPECT_EQ(x.topRows(5), y.topRows(5));
      EXPECT_NE(x.row(5), y.row(5));
    }
  }
}

TEST(HfFamilies, LlamaThreeRopeScalingRewritesTheInverseFrequencies) {
  // transformers' _compute_llama3_parameters at head_dim 16, theta 1e4, factor 8, low 1, high 4,
  // original context 64: wavelength 2 pi / f below 16 kept, above 64 divided by 8, between
  // interpolated; the values by hand from its formula
  Config c = gqa_config();
  c.dim = 64, c.n_heads = 4, c.rope_theta = 10000.0f;
  c.rope_scaling = {8.0, 1.0, 4.0, 64};
  Config plain = c;
  plain.rope_scaling = {};
  EXPECT_EQ(c.rope_inv_freq(0), plain.rope_inv_freq(0));  // 2 pi: kept
  const double f2 = plain.rope_inv_freq(2), w2 = 2 * M_PI / f2, s2 = (64 / w2 - 1) / 3;
  EXPECT_FLOAT_EQ(c.rope_inv_freq(2), static_cast<float>((1 - s2) * f2 / 8 + s2 * f2));  // 19.9: smoothed
  EXPECT_FLOAT_EQ(c.rope_inv_freq(6), plain.rope_inv_freq(6) / 8);                          // 199: divided
}

TEST(HfFamilies, RefusedConfigsNameTheFieldAndWhatIsSupported) {
  auto refused = [](const std::string& name, const std::function<void(nlohmann::json&)>& edit,
                    std::initializer_list<std::string> parts, const Config& c = gqa_config()) {
    const std::string dir = folder_with_config(name, edit, c);
    expect_names(test::error_of([&] { load_checkpoint(dir); }), parts);
  };
  refused("mixtral", [](auto& j) { j["architectures"] = {"MixtralForCausalLM"}; j.erase("model_type"); },
          {"architectures", "MixtralForCausalLM", "supported: LlamaForCausalLM, MistralForCausalLM"});
  refused("type", [](auto& j) { j["model_type"] = "qwen2"; }, {"model_type", "disagrees with architectures LlamaForCausalLM"});
  refused("linear", [](auto& j) { j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}}; },
          {"rope_scaling.rope_type = \"linear\"", "only \"llama3\""});
  refused("nofactor", [](auto& j) { j["rope_scaling"] = {{"rope_type", "llama3"}, {"low_freq_factor", 1}}; },
          {"rope_scaling.factor = missing"});
  refused("mlpbias", [](auto& j) { j["mlp_bias"] = true; }, {"mlp_bias = true"});
  refused("qwenwindow", [](auto& j) { j["use_sliding_window"] = true; }, {"use_sliding_window = true"},
          family_config(Architecture::qwen2));
  refused("window0", [](auto& j) { j["sliding_window"] = 0; }, {"sliding_window = 0"}, family_config(Architecture::mistral));
  // config.json against the tensors: the field, its value and the tensors' value
  refused("hidden", [](auto& j) { j["hidden_size"] = 32; j["head_dim"] = 8; },
          {"config.json", "hidden_size = 32", "the tensors say 64", "model.embed_tokens.weight"});
  refused("vocab", [](auto& j) { j["vocab_size"] = 256; }, {"vocab_size = 256", "the tensors say 300"});
  refused("layers", [](auto& j) { j["num_hidden_layers"] = 3; }, {"num_hidden_layers = 3", "the tensors say 2"});
  refused("heads", [](auto& j) { j["num_attention_heads"] = 4; j["num_key_value_heads"] = 1; j["head_dim"] = 8; },
          {"num_attention_heads x head_dim = 4 x 8 = 32", "the tensors say 64", "q_proj.weight"});
  refused("kvheads", [](auto& j) { j["num_key_value_heads"] = 4; },
          {"num_key_value_heads x head_dim = 4 x 8 = 32", "the tensors say 16", "k_proj.weight"});
  refused("headdim", [](auto& j) { j["head_dim"] = 16; }, {"head_dim = 16", "the tensors say 32", "q_norm.weight"},
          family_config(Architecture::qwen3));
  // a Qwen2 folder says nothing of biases: its q_proj.bias is required, a Llama's refused
  refused("qwen2asllama", [](auto& j) { j["architectures"] = {"LlamaForCausalLM"}; j["model_type"] = "llama"; },
          {"_proj.bias", "unexpected"}, family_config(Architecture::qwen2));
}

TEST(HfFamilies, Llama2cCannotHoldTheFamiliesFeatures) {
  const std::string bin = fresh_dir("family.bin");
  const std::pair<Architecture, std::string> cases[] = {
      {Architecture::llama, "attention biases"}, {Architecture::mistral, "sliding_window = 5"},
      {Architecture::qwen2, "attention biases"}, {Architecture::qwen3, "head_dim = 32"}};
  for (const auto& [a, what] : cases) {
    const Config c = family_config(a);
    expect_names(test::error_of([&] { write_checkpoint(bin, c, random_weights(c, 1)); }),
                 {bin, architecture_name(a), what, "a llama2.c checkpoint cannot hold it"});
    EXPECT_FALSE(fs::exists(bin));
  }
  Config c = family_config(Architecture::qwen3);
  c.head_size = 0;
  EXPECT_NE(c.llama2c_unsupported().find("q/k norms"), std::string::npos);
  c = family_config(Architecture::llama);
  c.qkv_bias = c.o_bias = false;
  EXPECT_NE(c.llama2c_unsupported().find("rope_scaling"), std::string::npos);
  // a window covering the whole context is full attention: llama2.c holds it
  c = family_config(Architecture::mistral);
  c.sliding_window = c.seq_len;
  EXPECT_EQ(c.llama2c_unsupported(), "");
}
