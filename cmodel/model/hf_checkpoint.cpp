#include "kvcim/cmodel/hf_checkpoint.hpp"

#include <unistd.h>

#include <cctype>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "kvcim/enum_names.hpp"
#include "kvcim/error.hpp"
#include "kvcim/io.hpp"

namespace kvcim::cmodel {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kMaxJsonBytes = 64 << 20;

std::string read_text(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    fail(path, "file", "missing", "a Hugging Face model folder holds " + what);
  const auto bytes = fs::file_size(path, ec);
  if (ec || int64_t(bytes) > kMaxJsonBytes)
    fail(path, "file", ec ? "unreadable" : std::to_string(bytes) + " bytes", "expected a JSON file below 64 MiB");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in) fail(path, "file", "unreadable", "cannot read " + what);
  return s.str();
}

json parse_json(const std::string& where, std::string_view text) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    fail(where, "JSON", "invalid", e.what());
  }
}

int get_int(const std::string& where, const json& j, const char* key, std::optional<int> fallback) {
  if (!j.contains(key) || j[key].is_null()) {
    if (fallback) return *fallback;
    fail(where, key, "missing", "a Llama config.json states it");
  }
  const json& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() < INT_MIN || v.get<int64_t>() > INT_MAX)
    fail(where, key, v.dump().substr(0, 60), "expected an integer");
  return static_cast<int>(v.get<int64_t>());
}

float get_float(const std::string& where, const json& j, const char* key, float fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  const json& v = j[key];
  if (!v.is_number()) fail(where, key, v.dump().substr(0, 60), "expected a number");
  return static_cast<float>(v.get<double>());
}

// The shortest decimal of a float, as a double (1e-5f is written 1e-05, not 9.99999974737875e-06).
double shortest(float f) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

constexpr std::array kTorchDtypeNames{"float32", "float16", "bfloat16"};
static_assert(kTorchDtypeNames.size() == enum_count(DType::bf16));
const char* torch_dtype(DType d) { return enum_name(d, kTorchDtypeNames); }

std::string layer_name(int l, const char* rest) {
  return "model.layers." + std::to_string(l) + "." + rest;
}

// Every tensor of the folder, by name, with the file that holds it.
class TensorSet {
 public:
  explicit TensorSet(const std::string& dir) : dir_(dir) {
    const std::string single = dir + "/model.safetensors";
    const std::string index = dir + "/model.safetensors.index.json";
    std::error_code ec;
    if (fs::exists(single, ec)) {
      files_.push_back(std::make_unique<SafetensorsFile>(single));
      for (const auto& t : files_[0]->tensors()) where_[t.name] = {0, &t};
      return;
    }
    if (!fs::exists(index, ec))
      fail(dir, "model.safetensors", "missing",
           "a Hugging Face model folder holds model.safetensors or model.safetensors.index.json");
    const json j = parse_json(index, read_text(index, "model.safetensors.index.json"));
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      fail(index, "weight_map", "missing", "expected an object of tensor name -> shard file");
    std::map<std::string, size_t> shard_index;
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
      if (!it.value().is_string())
        fail(index, "weight_map." + it.key(), it.value().dump().substr(0, 60), "expected a file name");
      const std::string shard = it.value().get<std::string>();
      // Shards are files of this folder: no path may lead elsewhere.
      if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..")
        fail(index, "weight_map." + it.key(), "'" + shard + "'", "expected a file name in the same folder");
      auto [pos, added] = shard_index.emplace(shard, files_.size());
      if (added) files_.push_back(std::make_unique<SafetensorsFile>(dir + "/" + shard));
      const SafetensorsFile& f = *files_[pos->second];
      const TensorInfo* t = f.find(it.key());
      if (!t) fail(f.path(), "tensor '" + it.key() + "'", "missing", "the index names this file for it");
      where_[it.key()] = {pos->second, t};
    }
  }

  // Reads `name` of shape `shape` into `out` (float32, row-major).
  void read(const std::string& name, std::vector<int64_t> shape, float* out) {
    auto it = where_.find(name);
    if (it == where_.end())
      fail(dir_, "tensor '" + name + "'", "missing", "a Llama checkpoint of this config.json holds it");
    const SafetensorsFile& f = *files_[it->second.first];
    const TensorInfo& t = *it->second.second;
    if (t.shape != shape)
      fail(f.path(), "tensor '" + name + "' shape", json(t.shape).dump(),
           "config.json implies " + json(shape).dump());
    f.read(t, out);
    used_.insert(name);
  }
  bool has(const std::string& name) const { return where_.count(name) != 0; }
  void skip(const std::string& name) { used_.insert(name); }

  // Tensors that no part of the model took (a bias, a different architecture's weights).
  void check_all_used() const {
    for (const auto& [name, loc] : where_) {
      if (used_.count(name)) continue;
      if (name.find("rotary_emb.inv_freq") != std::string::npos) continue;
      fail(files_[loc.first]->path(), "tensor '" + name + "'", "unexpected",
           "not part of a Llama model of this config.json (biases and other architectures are not supported)");
    }
  }

 private:
  std::string dir_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, std::pair<size_t, const TensorInfo*>> where_;
  std::set<std::string> used_;
};

// Replaces every whole-word occurrence of `from` (not inside a longer identifier) by `to`.
std::string replace_word(const std::string& text, const std::string& from, const std::string& to) {
  auto is_word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t at = text.find(from, i);
    if (at == std::string::npos) break;
    const bool starts = at == 0 || !is_word(text[at - 1]);
    const bool ends = at + from.size() == text.size() || !is_word(text[at + from.size()]);
    out.append(text, i, at - i);
    out += starts && ends ? to : from;
    i = at + from.size();
  }
  out.append(text, i, std::string::npos);
  return out;
}

}  // namespace

Config parse_hf_config(const std::string& where, std::string_view text) {
  const json j = parse_json(where, text);
  if (!j.is_object()) fail(where, "config", j.type_name(), "expected a JSON object");
  bool llama = false;
  if (j.contains("architectures")) {
    const json& a = j["architectures"];
    if (!a.is_array()) fail(where, "architectures", a.dump().substr(0, 60), "expected a list");
    for (const json& x : a)
      if (!x.is_string() || x.get<std::string>() != "LlamaForCausalLM")
        fail(where, "architectures", a.dump().substr(0, 60), "only LlamaForCausalLM is supported");
    llama = !a.empty();
  }
  if (j.contains("model_type")) {
    const json& m = j["model_type"];
    if (!m.is_string() || m.get<std::string>() != "llama")
      fail(where, "model_type", m.dump().substr(0, 60), "only \"llama\" is supported");
    llama = true;
  }
  if (!llama) fail(where, "architectures", "missing", "expected [\"LlamaForCausalLM\"] or model_type \"llama\"");
  if (j.contains("hidden_act") && j["hidden_act"] != "silu")
    fail(where, "hidden_act", j["hidden_act"].dump().substr(0, 60), "only \"silu\" (SwiGLU) is supported");
  for (const char* key : {"attention_bias", "mlp_bias"})
    if (j.contains(key) && j[key] != false)
      fail(where, key, j[key].dump().substr(0, 60), "biases are not supported (expected false)");
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null())
    fail(where, "rope_scaling", j["rope_scaling"].dump().substr(0, 60), "RoPE scaling is not supported (expected null)");
  Config c;
  c.dim = get_int(where, j, "hidden_size", std::nullopt);
  c.hidden_dim = get_int(where, j, "intermediate_size", std::nullopt);
  c.n_layers = get_int(where, j, "num_hidden_layers", std::nullopt);
  c.n_heads = get_int(where, j, "num_attention_heads", std::nullopt);
  c.n_kv_heads = get_int(where, j, "num_key_value_heads", c.n_heads);
  c.vocab_size = get_int(where, j, "vocab_size", std::nullopt);
  c.seq_len = get_int(where, j, "max_position_embeddings", std::nullopt);
  c.rope_theta = get_float(where, j, "rope_theta", 10000.0f);
  c.rms_norm_eps = get_float(where, j, "rms_norm_eps", 1e-6f);
  if (j.contains("tie_word_embeddings")) {
    if (!j["tie_word_embeddings"].is_boolean())
      fail(where, "tie_word_embeddings", j["tie_word_embeddings"].dump().substr(0, 60), "expected true or false");
    c.shared_classifier = j["tie_word_embeddings"].get<bool>();
  } else {
    c.shared_classifier = false;  // transformers' LlamaConfig default
  }
  try {
    c.validate(where);
  } catch (const Error& e) {
    // Config's names, as config.json spells them
    std::string msg = std::string(e.what()).substr(where.size());
    static const std::pair<const char*, const char*> names[] = {
        {"hidden_dim", "intermediate_size"}, {"n_layers", "num_hidden_layers"},
        {"n_kv_heads", "num_key_value_heads"}, {"n_heads", "num_attention_heads"},
        {"seq_len", "max_position_embeddings"}, {"dim", "hidden_size"}};
    for (const auto& [from, to] : names)
      msg = replace_word(msg, from, to);
    throw Error(where + msg);
  }
  if (j.contains("head_dim") && !j["head_dim"].is_null() &&
      get_int(where, j, "head_dim", std::nullopt) != c.head_dim())
    fail(where, "head_dim", j["head_dim"].dump(),
         "expected hidden_size / num_attention_heads = " + std::to_string(c.head_dim()));
  return c;
}

std::string hf_config_json(const Config& c, DType dtype) {
  nlohmann::ordered_json j;
  j["architectures"] = {"LlamaForCausalLM"};
  j["model_type"] = "llama";
  j["hidden_size"] = c.dim;
  j["intermediate_size"] = c.hidden_dim;
  j["num_hidden_layers"] = c.n_layers;
  j["num_attention_heads"] = c.n_heads;
  j["num_key_value_heads"] = c.n_kv_heads;
  j["vocab_size"] = c.vocab_size;
  j["max_position_embeddings"] = c.seq_len;
  j["rope_theta"] = shortest(c.rope_theta);
  j["rms_norm_eps"] = shortest(c.rms_norm_eps);
  j["tie_word_embeddings"] = c.shared_classifier;
  j["hidden_act"] = "silu";
  j["attention_bias"] = false;
  j["rope_scaling"] = nullptr;
  j["bos_token_id"] = 1;
  j["eos_token_id"] = 2;
  j["torch_dtype"] = torch_dtype(dtype);
  return j.dump(2) + "\n";
}

Config read_hf_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  return parse_hf_config(path, read_text(path, "config.json"));
}

Matrix rope_rows_to_hf(MatrixRef w, int heads) {
  const int hd = static_cast<int>(w.rows()) / heads, half = hd / 2;
  Matrix out(w.rows(), w.cols());
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < half; ++i)
      for (int j = 0; j < 2; ++j) out.row(h * hd + j * half + i) = w.row(h * hd + 2 * i + j);
  return out;
}

Matrix rope_rows_from_hf(MatrixRef w, int heads) {
  const int hd = static_cast<int>(w.rows()) / heads, half = hd / 2;
  Matrix out(w.rows(), w.cols());
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < half; ++i)
      for (int j = 0; j < 2; ++j) out.row(h * hd + 2 * i + j) = w.row(h * hd + j * half + i);
  return out;
}

Checkpoint read_hf_checkpoint(const std::string& dir) {
  Checkpoint ck;
  ck.path = dir;
  const Config c = ck.config = read_hf_config(dir);
  TensorSet ts(dir);
  Weights& w = ck.weights;
  const int64_t d = c.dim, hd = c.head_dim(), kv = c.kv_dim(), h = c.hidden_dim, V = c.vocab_size;
  auto matrix = [&](auto& m, const std::string& name, int64_t rows, int64_t cols) {
    m.resize(rows, cols);
    ts.read(name, {rows, cols}, m.data());
  };
  auto vector = [&](Vector& v, const std::string& name, int64_t size) {
    v.resize(size);
    ts.read(name, {size}, v.data());
  };
  matrix(w.token_embedding, "model.embed_tokens.weight", V, d);
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& lw = w.layers[l];
    vector(lw.rms_att, layer_name(l, "input_layernorm.weight"), d);
    Matrix q, k;
    matrix(q, layer_name(l, "self_attn.q_proj.weight"), c.n_heads * hd, d);
    matrix(k, layer_name(l, "self_attn.k_proj.weight"), kv, d);
    lw.wq = rope_rows_from_hf(q, c.n_heads);
    lw.wk = rope_rows_from_hf(k, c.n_kv_heads);
    matrix(lw.wv, layer_name(l, "self_attn.v_proj.weight"), kv, d);
    matrix(lw.wo, layer_name(l, "self_attn.o_proj.weight"), d, c.n_heads * hd);
    vector(lw.rms_ffn, layer_name(l, "post_attention_layernorm.weight"), d);
    matrix(lw.w1, layer_name(l, "mlp.gate_proj.weight"), h, d);
    matrix(lw.w2, layer_name(l, "mlp.down_proj.weight"), d, h);
    matrix(lw.w3, layer_name(l, "mlp.up_proj.weight"), h, d);
  }
  vector(w.rms_final, "model.norm.weight", d);
  if (c.shared_classifier) {
    ts.skip("lm_head.weight");  // a tied checkpoint may still store the copy
  } else {
    matrix(w.wcls, "lm_head.weight", V, d);
  }
  ts.check_all_used();
  return ck;
}

void write_hf_checkpoint(const std::string& dir, const Config& c, const Weights& w, DType dtype,
                         const std::string& tokenizer_json) {
  c.validate("write_hf_checkpoint");
  std::error_code ec;
  if (fs::exists(dir, ec))
    fail(dir, "output", "exists", "refusing to overwrite: name a folder that does not exist");
  const int64_t d = c.dim, hd = c.head_dim(), kv = c.kv_dim(), h = c.hidden_dim, V = c.vocab_size;
  std::vector<Matrix> permuted;  // wq and wk of every layer, in Hugging Face's layout
  permuted.reserve(2 * w.layers.size());
  std::vector<TensorOut> t;
  t.push_back({"model.embed_tokens.weight", {V, d}, w.token_embedding.data()});
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    t.push_back({layer_name(l, "input_layernorm.weight"), {d}, lw.rms_att.data()});
    permuted.push_back(rope_rows_to_hf(lw.wq, c.n_heads));
    t.push_back({layer_name(l, "self_attn.q_proj.weight"), {c.n_heads * hd, d}, permuted.back().data()});
    permuted.push_back(rope_rows_to_hf(lw.wk, c.n_kv_heads));
    t.push_back({layer_name(l, "self_attn.k_proj.weight"), {kv, d}, permuted.back().data()});
    t.push_back({layer_name(l, "self_attn.v_proj.weight"), {kv, d}, lw.wv.data()});
    t.push_back({layer_name(l, "self_attn.o_proj.weight"), {d, c.n_heads * hd}, lw.wo.data()});
    t.push_back({layer_name(l, "post_attention_layernorm.weight"), {d}, lw.rms_ffn.data()});
    t.push_back({layer_name(l, "mlp.gate_proj.weight"), {h, d}, lw.w1.data()});
    t.push_back({layer_name(l, "mlp.down_proj.weight"), {d, h}, lw.w2.data()});
    t.push_back({layer_name(l, "mlp.up_proj.weight"), {h, d}, lw.w3.data()});
  }
  t.push_back({"model.norm.weight", {d}, w.rms_final.data()});
  if (!c.shared_classifier) t.push_back({"lm_head.weight", {V, d}, w.wcls.data()});

  const std::string tmp = dir + ".partial-" + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) fail(dir, "output", "cannot create the folder", ec.message());
  try {
    write_file_atomic(tmp + "/config.json", hf_config_json(c, dtype));
    write_file_atomic(tmp + "/model.safetensors", safetensors_bytes(t, dtype, {{"format", "pt"}}));
    if (!tokenizer_json.empty()) write_file_atomic(tmp + "/tokenizer.json", tokenizer_json);
    fs::rename(tmp, dir, ec);
    if (ec) fail(dir, "output", "cannot rename the finished folder into place", ec.message());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace kvcim::cmodel
