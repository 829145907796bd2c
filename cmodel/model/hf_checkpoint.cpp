#include "kvcim/cmodel/hf_checkpoint.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
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
    fail(where, key, "missing", "a config.json of this family states it");
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
      fail(dir_, "tensor '" + name + "'", "missing", "a checkpoint of this config.json holds it");
    const SafetensorsFile& f = *files_[it->second.first];
    const TensorInfo& t = *it->second.second;
    if (t.shape != shape)
      fail(f.path(), "tensor '" + name + "' shape", json(t.shape).dump(),
           "config.json implies " + json(shape).dump());
    f.read(t, out);
    used_.insert(name);
  }
  bool has(const std::string& name) const { return where_.count(name) != 0; }
  // The stored shape of `name` (empty when there is no such tensor).
  std::vector<int64_t> shape(const std::string& name) const {
    auto it = where_.find(name);
    return it == where_.end() ? std::vector<int64_t>{} : it->second.second->shape;
  }
  // 1 + the highest N of the tensors named model.layers.N.* (0 when there are none).
  int layers() const {
    int n = 0;
    const std::string prefix = "model.layers.";
    for (const auto& [name, loc] : where_) {
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      int l = 0;
      const char* first = name.data() + prefix.size();
      const auto r = std::from_chars(first, name.data() + name.size(), l);
      if (r.ec == std::errc() && r.ptr != first && *r.ptr == '.' && l < INT_MAX) n = std::max(n, l + 1);
    }
    return n;
  }
  void skip(const std::string& name) { used_.insert(name); }

  // Tensors that no part of the model took (a bias, a different architecture's weights).
  void check_all_used() const {
    for (const auto& [name, loc] : where_) {
      if (used_.count(name)) continue;
      if (name.find("rotary_emb.inv_freq") != std::string::npos) continue;
      fail(files_[loc.first]->path(), "tensor '" + name + "'", "unexpected",
           "not part of a model of this config.json (a bias or norm the family does not have, or another "
           "architecture's tensor)");
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

namespace {

const char* const kSupported = "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM";
constexpr Architecture kArchitectures[] = {Architecture::llama, Architecture::mistral, Architecture::qwen2,
                                           Architecture::qwen3};

// The family config.json names: `architectures` (one supported name, possibly repeated) and/or
// `model_type`, which must agree.
Architecture parse_architecture(const std::string& where, const json& j) {
  std::optional<Architecture> arch;
  if (j.contains("architectures")) {
    const json& a = j["architectures"];
    if (!a.is_array()) fail(where, "architectures", a.dump().substr(0, 60), "expected a list");
    for (const json& x : a) {
      std::optional<Architecture> found;
      for (Architecture k : kArchitectures)
        if (x.is_string() && x.get<std::string>() == architecture_name(k)) found = k;
      if (!found || (arch && *arch != *found))
        fail(where, "architectures", a.dump().substr(0, 80), std::string("supported: ") + kSupported);
      arch = found;
    }
  }
  if (j.contains("model_type")) {
    const json& m = j["model_type"];
    std::optional<Architecture> found;
    for (Architecture k : kArchitectures)
      if (m.is_string() && m.get<std::string>() == model_type(k)) found = k;
    if (!found)
      fail(where, "model_type", m.dump().substr(0, 60),
           std::string("supported: llama, mistral, qwen2, qwen3 (") + kSupported + ")");
    if (arch && *arch != *found)
      fail(where, "model_type", m.dump().substr(0, 60),
           std::string("disagrees with architectures ") + architecture_name(*arch) + " (expected \"" +
               model_type(*arch) + "\")");
    arch = found;
  }
  if (!arch) fail(where, "architectures", "missing", std::string("expected one of ") + kSupported + " or a model_type");
  return *arch;
}

bool get_bool(const std::string& where, const json& j, const char* key, bool fallback) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) fail(where, key, j[key].dump().substr(0, 60), "expected true or false");
  return j[key].get<bool>();
}

double get_number(const std::string& where, const json& j, const std::string& key) {
  if (!j.contains(key) || !j[key].is_number())
    fail(where, "rope_scaling." + key, j.contains(key) ? j[key].dump().substr(0, 60) : "missing",
         "rope_type llama3 states it as a number");
  return j[key].get<double>();
}

// rope_scaling: null, rope_type "default", or Llama-3's "llama3" with its four fields.
RopeScaling parse_rope_scaling(const std::string& where, const json& j) {
  if (!j.contains("rope_scaling") || j["rope_scaling"].is_null()) return {};
  const json& r = j["rope_scaling"];
  if (!r.is_object()) fail(where, "rope_scaling", r.dump().substr(0, 60), "expected an object or null");
  const char* key = r.contains("rope_type") ? "rope_type" : "type";  // transformers' older spelling
  const std::string type = r.contains(key) && r[key].is_string() ? r[key].get<std::string>() : "";
  if (type == "default") return {};
  if (type != "llama3")
    fail(where, std::string("rope_scaling.") + key, r.contains(key) ? r[key].dump().substr(0, 60) : "missing",
         "only \"llama3\" (Llama-3.1's scaling) is supported");
  RopeScaling s;
  s.factor = get_number(where, r, "factor");
  s.low_freq_factor = get_number(where, r, "low_freq_factor");
  s.high_freq_factor = get_number(where, r, "high_freq_factor");
  const double old_context = get_number(where, r, "original_max_position_embeddings");
  if (!(old_context >= 1.0 && old_context <= double(INT_MAX)) || old_context != std::floor(old_context))
    fail(where, "rope_scaling.original_max_position_embeddings", r["original_max_position_embeddings"].dump(),
         "expected a positive integer");
  s.original_max_position_embeddings = static_cast<int>(old_context);
  return s;
}

}  // namespace

Config parse_hf_config(const std::string& where, std::string_view text) {
  const json j = parse_json(where, text);
  if (!j.is_object()) fail(where, "config", j.type_name(), "expected a JSON object");
  Config c;
  c.architecture = parse_architecture(where, j);
  if (j.contains("hidden_act") && j["hidden_act"] != "silu")
    fail(where, "hidden_act", j["hidden_act"].dump().substr(0, 60), "only \"silu\" (SwiGLU) is supported");
  if (get_bool(where, j, "mlp_bias", false))
    fail(where, "mlp_bias", "true", "biases of the MLP are not supported (expected false)");
  // each family's attention, as transformers' modeling_<family> builds it
  const bool attention_bias = get_bool(where, j, "attention_bias", false);
  switch (c.architecture) {
    case Architecture::llama:  // LlamaAttention: attention_bias on q, k, v and o
      c.qkv_bias = c.o_bias = attention_bias;
      break;
    case Architecture::mistral:  // MistralAttention: no biases; a sliding window
      c.sliding_window = get_int(where, j, "sliding_window", 0);
      if (c.sliding_window <= 0 && j.contains("sliding_window") && !j["sliding_window"].is_null())
        fail(where, "sliding_window", j["sliding_window"].dump(), "expected a positive number of positions, or null");
      break;
    case Architecture::qwen2:  // Qwen2Attention: biases on q, k and v always
      c.qkv_bias = true;
      break;
    case Architecture::qwen3:  // Qwen3Attention: q_norm / k_norm; attention_bias on q, k, v and o
      c.qk_norm = true;
      c.qkv_bias = c.o_bias = attention_bias;
      break;
  }
  if ((c.architecture == Architecture::qwen2 || c.architecture == Architecture::qwen3) &&
      get_bool(where, j, "use_sliding_window", false))
    fail(where, "use_sliding_window", "true",
         "Qwen's per-layer sliding windows (max_window_layers) are not supported (expected false)");
  c.rope_scaling = parse_rope_scaling(where, j);
  c.dim = get_int(where, j, "hidden_size", std::nullopt);
  c.hidden_dim = get_int(where, j, "intermediate_size", std::nullopt);
  c.n_layers = get_int(where, j, "num_hidden_layers", std::nullopt);
  c.n_heads = get_int(where, j, "num_attention_heads", std::nullopt);
  c.n_kv_heads = get_int(where, j, "num_key_value_heads", c.n_heads);
  c.vocab_size = get_int(where, j, "vocab_size", std::nullopt);
  c.seq_len = get_int(where, j, "max_position_embeddings", std::nullopt);
  c.rope_theta = get_float(where, j, "rope_theta", 10000.0f);
  c.rms_norm_eps = get_float(where, j, "rms_norm_eps", 1e-6f);
  // head_dim: stated, or Qwen3Config's default of 128; otherwise hidden_size / num_attention_heads
  c.head_size = get_int(where, j, "head_dim", c.architecture == Architecture::qwen3 ? 128 : 0);
  if (c.head_size == 0 && j.contains("head_dim") && !j["head_dim"].is_null())
    fail(where, "head_dim", "0", "expected a positive size");
  // transformers' default of every family: untied
  c.shared_classifier = get_bool(where, j, "tie_word_embeddings", false);
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
  return c;
}

std::string hf_config_json(const Config& c, DType dtype) {
  // what the family's config.json cannot say (a Config built by hand)
  const Architecture a = c.architecture;
  const bool attention_bias_family = a == Architecture::llama || a == Architecture::qwen3;
  std::string unsaid;
  if (c.qk_norm != (a == Architecture::qwen3)) unsaid = "qk_norm";
  else if (attention_bias_family && c.qkv_bias != c.o_bias) unsaid = "o_bias";
  else if (a == Architecture::qwen2 && (!c.qkv_bias || c.o_bias)) unsaid = "qkv_bias";
  else if (a == Architecture::mistral && (c.qkv_bias || c.o_bias)) unsaid = "qkv_bias";
  else if (a != Architecture::mistral && c.sliding_window > 0) unsaid = "sliding_window";
  if (!unsaid.empty())
    fail("hf_config_json", unsaid, "set", std::string("a ") + architecture_name(a) + " config.json cannot state it");
  nlohmann::ordered_json j;
  j["architectures"] = {architecture_name(a)};
  j["model_type"] = model_type(a);
  j["hidden_size"] = c.dim;
  j["intermediate_size"] = c.hidden_dim;
  j["num_hidden_layers"] = c.n_layers;
  j["num_attention_heads"] = c.n_heads;
  j["num_key_value_heads"] = c.n_kv_heads;
  j["head_dim"] = c.head_dim();
  j["vocab_size"] = c.vocab_size;
  j["max_position_embeddings"] = c.seq_len;
  j["rope_theta"] = shortest(c.rope_theta);
  j["rms_norm_eps"] = shortest(c.rms_norm_eps);
  j["tie_word_embeddings"] = c.shared_classifier;
  j["hidden_act"] = "silu";
  if (attention_bias_family) j["attention_bias"] = c.qkv_bias;
  if (a == Architecture::mistral) j["sliding_window"] = c.sliding_window > 0 ? json(c.sliding_window) : json(nullptr);
  if (a == Architecture::qwen2 || a == Architecture::qwen3) j["use_sliding_window"] = false;
  if (c.rope_scaling.enabled()) {
    const RopeScaling& r = c.rope_scaling;
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", r.factor},
                         {"low_freq_factor", r.low_freq_factor},
                         {"high_freq_factor", r.high_freq_factor},
                         {"original_max_position_embeddings", r.original_max_position_embeddings}};
  } else {
    j["rope_scaling"] = nullptr;
  }
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

namespace {

// A bias or norm vector of `heads` heads is permuted as the rows of its matrix are: its element r
// belongs to row r.
Vector rope_vector(const Vector& v, int heads, bool to_hf) {
  const Eigen::Map<const Matrix> column(v.data(), v.size(), 1);
  const Matrix m = to_hf ? rope_rows_to_hf(column, heads) : rope_rows_from_hf(column, heads);
  return Eigen::Map<const Vector>(m.data(), m.size());
}

std::string dims(int64_t a, int64_t b) { return std::to_string(a) + " x " + std::to_string(b); }

// config.json's sizes against the tensors' shapes, before any tensor is read: a disagreement is
// named by the config.json field, with the value it states and the one the tensors hold.
void check_config_against_tensors(const std::string& where, const Config& c, const TensorSet& ts) {
  auto disagree = [&](const std::string& field, const std::string& stated, const std::string& tensor,
                      int64_t held, const std::string& what) {
    fail(where, field, stated, "the tensors say " + std::to_string(held) + " (" + what + " of '" + tensor + "')");
  };
  const std::string embed = "model.embed_tokens.weight";
  if (const auto s = ts.shape(embed); s.size() == 2) {
    if (s[0] != c.vocab_size) disagree("vocab_size", std::to_string(c.vocab_size), embed, s[0], "rows");
    if (s[1] != c.dim) disagree("hidden_size", std::to_string(c.dim), embed, s[1], "columns");
  }
  if (const int layers = ts.layers(); layers != c.n_layers)
    fail(where, "num_hidden_layers", std::to_string(c.n_layers),
         "the tensors say " + std::to_string(layers) + " (model.layers.0 to " + std::to_string(layers - 1) + ")");
  const std::string gate = layer_name(0, "mlp.gate_proj.weight");
  if (const auto s = ts.shape(gate); s.size() == 2 && s[0] != c.hidden_dim)
    disagree("intermediate_size", std::to_string(c.hidden_dim), gate, s[0], "rows");
  const std::string qn = layer_name(0, "self_attn.q_norm.weight");
  if (const auto s = ts.shape(qn); c.qk_norm && s.size() == 1 && s[0] != c.head_dim())
    disagree("head_dim", std::to_string(c.head_dim()), qn, s[0], "size");
  const std::string q = layer_name(0, "self_attn.q_proj.weight"), k = layer_name(0, "self_attn.k_proj.weight");
  if (const auto s = ts.shape(q); s.size() == 2 && s[0] != c.q_dim())
    disagree("num_attention_heads x head_dim", dims(c.n_heads, c.head_dim()) + " = " + std::to_string(c.q_dim()),
             q, s[0], "rows");
  if (const auto s = ts.shape(k); s.size() == 2 && s[0] != c.kv_dim())
    disagree("num_key_value_heads x head_dim", dims(c.n_kv_heads, c.head_dim()) + " = " + std::to_string(c.kv_dim()),
             k, s[0], "rows");
}

}  // namespace

Checkpoint read_hf_checkpoint(const std::string& dir) {
  Checkpoint ck;
  ck.path = dir;
  const Config c = ck.config = read_hf_config(dir);
  TensorSet ts(dir);
  check_config_against_tensors(dir + "/config.json", c, ts);
  Weights& w = ck.weights;
  const int64_t d = c.dim, hd = c.head_dim(), kv = c.kv_dim(), qd = c.q_dim(), h = c.hidden_dim, V = c.vocab_size;
  auto matrix = [&](auto& m, const std::string& name, int64_t rows, int64_t cols) {
    m.resize(rows, cols);
    ts.read(name, {rows, cols}, m.data());
  };
  auto vector = [&](Vector& v, const std::string& name, int64_t size) {
    v.resize(size);
    ts.read(name, {size}, v.data());
  };
  // q and k, their biases and norms, in llama2.c's adjacent-pair RoPE layout
  auto rope_vector_from_hf = [&](Vector& v, const std::string& name, int64_t size, int heads) {
    vector(v, name, size);
    v = rope_vector(v, heads, false);
  };
  matrix(w.token_embedding, "model.embed_tokens.weight", V, d);
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& lw = w.layers[l];
    vector(lw.rms_att, layer_name(l, "input_layernorm.weight"), d);
    Matrix q, k;
    matrix(q, layer_name(l, "self_attn.q_proj.weight"), qd, d);
    matrix(k, layer_name(l, "self_attn.k_proj.weight"), kv, d);
    lw.wq = rope_rows_from_hf(q, c.n_heads);
    lw.wk = rope_rows_from_hf(k, c.n_kv_heads);
    matrix(lw.wv, layer_name(l, "self_attn.v_proj.weight"), kv, d);
    matrix(lw.wo, layer_name(l, "self_attn.o_proj.weight"), d, qd);
    if (c.qkv_bias) {
      rope_vector_from_hf(lw.bq, layer_name(l, "self_attn.q_proj.bias"), qd, c.n_heads);
      rope_vector_from_hf(lw.bk, layer_name(l, "self_attn.k_proj.bias"), kv, c.n_kv_heads);
      vector(lw.bv, layer_name(l, "self_attn.v_proj.bias"), kv);
    }
    if (c.o_bias) vector(lw.bo, layer_name(l, "self_attn.o_proj.bias"), d);
    if (c.qk_norm) {
      rope_vector_from_hf(lw.q_norm, layer_name(l, "self_attn.q_norm.weight"), hd, 1);
      rope_vector_from_hf(lw.k_norm, layer_name(l, "self_attn.k_norm.weight"), hd, 1);
    }
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
  const std::string config_json = hf_config_json(c, dtype);  // refuses what the family cannot say
  std::error_code ec;
  if (fs::exists(dir, ec))
    fail(dir, "output", "exists", "refusing to overwrite: name a folder that does not exist");
  const int64_t d = c.dim, kv = c.kv_dim(), qd = c.q_dim(), h = c.hidden_dim, V = c.vocab_size;
  // wq, wk and their biases and norms of every layer, in Hugging Face's layout (reserved: the
  // tensors point into them)
  std::vector<Matrix> permuted;
  std::vector<Vector> permuted_vectors;
  permuted.reserve(2 * w.layers.size());
  permuted_vectors.reserve(4 * w.layers.size());
  std::vector<TensorOut> t;
  auto rope_vector_to_hf = [&](const std::string& name, const Vector& v, int heads) {
    const int64_t size = name.find("norm") != std::string::npos ? c.head_dim() : (heads == c.n_heads ? qd : kv);
    if (v.size() != size)
      fail("write_hf_checkpoint", name, std::to_string(v.size()) + " values", "expected " + std::to_string(size));
    permuted_vectors.push_back(rope_vector(v, heads, true));
    t.push_back({name, {int64_t(v.size())}, permuted_vectors.back().data()});
  };
  t.push_back({"model.embed_tokens.weight", {V, d}, w.token_embedding.data()});
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    t.push_back({layer_name(l, "input_layernorm.weight"), {d}, lw.rms_att.data()});
    permuted.push_back(rope_rows_to_hf(lw.wq, c.n_heads));
    t.push_back({layer_name(l, "self_attn.q_proj.weight"), {qd, d}, permuted.back().data()});
    permuted.push_back(rope_rows_to_hf(lw.wk, c.n_kv_heads));
    t.push_back({layer_name(l, "self_attn.k_proj.weight"), {kv, d}, permuted.back().data()});
    t.push_back({layer_name(l, "self_attn.v_proj.weight"), {kv, d}, lw.wv.data()});
    t.push_back({layer_name(l, "self_attn.o_proj.weight"), {d, qd}, lw.wo.data()});
    if (c.qkv_bias) {
      rope_vector_to_hf(layer_name(l, "self_attn.q_proj.bias"), lw.bq, c.n_heads);
      rope_vector_to_hf(layer_name(l, "self_attn.k_proj.bias"), lw.bk, c.n_kv_heads);
      t.push_back({layer_name(l, "self_attn.v_proj.bias"), {kv}, lw.bv.data()});
    }
    if (c.o_bias) t.push_back({layer_name(l, "self_attn.o_proj.bias"), {d}, lw.bo.data()});
    if (c.qk_norm) {
      rope_vector_to_hf(layer_name(l, "self_attn.q_norm.weight"), lw.q_norm, 1);
      rope_vector_to_hf(layer_name(l, "self_attn.k_norm.weight"), lw.k_norm, 1);
    }
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
    write_file_atomic(tmp + "/config.json", config_json);
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
