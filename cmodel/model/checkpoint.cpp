#include "kvcim/cmodel/checkpoint.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <vector>

#include "kvcim/data_dir.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel {

namespace {

constexpr int64_t kHeaderBytes = 7 * 4;

Config parse_header(const std::string& path, std::ifstream& in, int64_t file_bytes) {
  if (file_bytes < kHeaderBytes)
    fail(path, "header", std::to_string(file_bytes) + " bytes",
         "truncated: a checkpoint starts with 7 int32 fields (28 bytes)");
  int32_t h[7];
  in.read(reinterpret_cast<char*>(h), sizeof h);
  Config c;
  c.dim = h[0];
  c.hidden_dim = h[1];
  c.n_layers = h[2];
  c.n_heads = h[3];
  c.n_kv_heads = h[4];
  c.shared_classifier = h[5] > 0;
  c.vocab_size = h[5] == INT32_MIN ? 0 : (h[5] < 0 ? -h[5] : h[5]);
  c.seq_len = h[6];
  c.validate(path);
  const int64_t expected = kHeaderBytes + c.checkpoint_floats() * 4;
  if (expected != file_bytes)
    fail(path, "file length", std::to_string(file_bytes) + " bytes",
         "the header's sizes need " + std::to_string(expected) + " bytes" +
             (file_bytes < expected ? " (truncated file?)" : " (trailing data?)"));
  return c;
}

int64_t file_size(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "file", "unreadable", ec.message());
  return static_cast<int64_t>(size);
}

// A NaN or infinite weight is never meant: it would turn every later activation into NaN.
// (The exponent bits of every weight OR-ed first, a loop that vectorises; the scan that names
// the element runs only when one is all ones.)
bool all_finite(const float* p, int64_t count) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    uint32_t b;
    std::memcpy(&b, p + i, 4);
    bad |= (b & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
  }
  return bad == 0;
}

void check_finite(const float* p, int64_t count, const std::string& path, const std::string& what) {
  if (!all_finite(p, count))
    for (int64_t i = 0; i < count; ++i)
      if (!std::isfinite(p[i]))
        fail(path, what, std::to_string(p[i]) + " at element " + std::to_string(i), "finite float32 weights");
}

// The checkpoint's floats in file order, in one arena (the file mapped, or read once where it
// cannot be): the matrices are views of it (no copy), the norm vectors small copies.
class Reader {
 public:
  // check_matrices: every float is checked once up front; only when one is not finite does each
  // tensor check its own floats, to name it. Otherwise (Residency::on_demand) only the norm
  // vectors are checked here, each on its own: the matrices are left to the one pass that reads
  // them (Int8Backend's quantiser refuses a non-finite weight), so that their pages are mapped
  // once, not once to check and again to quantise (0.1 - 0.15 s on the 110M shape).
  Reader(const std::string& path, std::shared_ptr<const FloatArena> arena, bool check_matrices)
      : path_(path), arena_(std::move(arena)), check_matrices_(check_matrices),
        name_bad_(check_matrices && !all_finite(arena_->data(), static_cast<int64_t>(arena_->size()))) {}
  WeightMatrix matrix(int64_t rows, int64_t cols, const std::string& what) {
    return WeightMatrix::view(arena_, take(rows * cols, what, name_bad_), rows, cols);
  }
  Vector vector(int64_t size, const std::string& what) {
    return Eigen::Map<const Vector>(arena_->data() + take(size, what, name_bad_ || !check_matrices_), size);
  }
  void skip(int64_t count) { at_ += count; }

 private:
  // The offset of the next `count` floats, checked for `what` if `check`.
  size_t take(int64_t count, const std::string& what, bool check) {
    const size_t at = static_cast<size_t>(at_);
    if (check) check_finite(arena_->data() + at, count, path_, what);
    at_ += count;
    return at;
  }
  const std::string& path_;
  std::shared_ptr<const FloatArena> arena_;
  bool check_matrices_, name_bad_;
  int64_t at_ = 0;
};

}  // namespace

Config read_checkpoint_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "file", "unreadable", "cannot open the checkpoint");
  return parse_header(path, in, file_size(path));
}

Checkpoint read_checkpoint(const std::string& path, Residency residency) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "file", "unreadable", "cannot open the checkpoint");
  Checkpoint ck;
  ck.path = path;
  const Config c = ck.config = parse_header(path, in, file_size(path));
  const size_t floats = static_cast<size_t>(c.checkpoint_floats());
  std::shared_ptr<FloatArena> arena =
      FloatArena::map_file(path, kHeaderBytes, floats, residency != Residency::resident);
  bool on_demand = residency == Residency::on_demand;
  if (!arena) {  // not mappable (no mmap here, or a special file): one read into fresh memory
    arena = std::make_shared<FloatArena>(floats);
    in.read(reinterpret_cast<char*>(arena->data()), static_cast<std::streamsize>(floats * 4));
    if (!in) fail(path, "weights", "short read", "the file ended early");
    on_demand = false;  // resident whatever was asked: check it all now
  }
  Reader r(path, arena, !on_demand);
  Weights& w = ck.weights;
  const int d = c.dim, hd = c.head_dim(), kv = c.kv_dim(), h = c.hidden_dim;
  const int L = c.n_layers;
  w.token_embedding = r.matrix(c.vocab_size, d, "token_embedding");
  w.layers.resize(L);
  const auto of = [](const char* what, int i) { return std::string(what) + " of layer " + std::to_string(i); };
  for (int i = 0; i < L; ++i) w.layers[i].rms_att = r.vector(d, of("rms_att_weight", i));
  for (int i = 0; i < L; ++i) w.layers[i].wq = r.matrix(int64_t(c.n_heads) * hd, d, of("wq", i));
  for (int i = 0; i < L; ++i) w.layers[i].wk = r.matrix(kv, d, of("wk", i));
  for (int i = 0; i < L; ++i) w.layers[i].wv = r.matrix(kv, d, of("wv", i));
  for (int i = 0; i < L; ++i) w.layers[i].wo = r.matrix(d, int64_t(c.n_heads) * hd, of("wo", i));
  for (int i = 0; i < L; ++i) w.layers[i].rms_ffn = r.vector(d, of("rms_ffn_weight", i));
  for (int i = 0; i < L; ++i) w.layers[i].w1 = r.matrix(h, d, of("w1", i));
  for (int i = 0; i < L; ++i) w.layers[i].w2 = r.matrix(d, h, of("w2", i));
  for (int i = 0; i < L; ++i) w.layers[i].w3 = r.matrix(h, d, of("w3", i));
  w.rms_final = r.vector(d, "rms_final_weight");
  r.skip(int64_t(c.seq_len) * hd);  // legacy freq_cis_real, freq_cis_imag
  if (!c.shared_classifier) w.wcls = r.matrix(c.vocab_size, d, "wcls");
  return ck;
}

Weights random_weights(const Config& c, uint64_t seed) {
  c.validate("random_weights");
  std::mt19937_64 rng(seed);
  auto fill = [&](WeightMatrix& m, int rows, int cols) {
    m.resize(rows, cols);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
    for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = u(rng) * scale;
  };
  auto norm = [&](Vector& v, int size) {
    v.resize(size);
    std::uniform_real_distribution<float> u(0.8f, 1.2f);
    for (int i = 0; i < size; ++i) v[i] = u(rng);
  };
  Weights w;
  const int d = c.dim, hd = c.head_dim(), kv = c.kv_dim(), h = c.hidden_dim;
  fill(w.token_embedding, c.vocab_size, d);
  w.token_embedding *= std::sqrt(static_cast<float>(d));  // embeddings of unit-ish RMS
  w.layers.resize(c.n_layers);
  for (auto& l : w.layers) {
    norm(l.rms_att, d);
    fill(l.wq, c.q_dim(), d);
    fill(l.wk, kv, d);
    fill(l.wv, kv, d);
    fill(l.wo, d, c.q_dim());
    norm(l.rms_ffn, d);
    fill(l.w1, h, d);
    fill(l.w2, d, h);
    fill(l.w3, h, d);
    auto bias = [&](Vector& v, int size) {
      v.resize(size);
      std::uniform_real_distribution<float> u(-0.5f, 0.5f);
      for (int i = 0; i < size; ++i) v[i] = u(rng);
    };
    if (c.qkv_bias) {
      bias(l.bq, c.q_dim());
      bias(l.bk, kv);
      bias(l.bv, kv);
    }
    if (c.o_bias) bias(l.bo, d);
    if (c.qk_norm) {
      norm(l.q_norm, hd);
      norm(l.k_norm, hd);
    }
  }
  norm(w.rms_final, d);
  if (!c.shared_classifier) fill(w.wcls, c.vocab_size, d);
  return w;
}

void write_checkpoint(const std::string& path, const Config& c, const Weights& w) {
  c.validate("write_checkpoint");
  if (const std::string what = c.llama2c_unsupported(); !what.empty())
    fail(path, "model", std::string(architecture_name(c.architecture)) + " with " + what,
         "a llama2.c checkpoint cannot hold it");
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, "file", "unwritable", "cannot create the checkpoint");
    const int32_t header[7] = {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads,
                               c.shared_classifier ? c.vocab_size : -c.vocab_size, c.seq_len};
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    auto put = [&](const float* p, int64_t n) {
      out.write(reinterpret_cast<const char*>(p), n * 4);
    };
    put(w.token_embedding.data(), w.token_embedding.size());
    for (auto& l : w.layers) put(l.rms_att.data(), l.rms_att.size());
    for (auto& l : w.layers) put(l.wq.data(), l.wq.size());
    for (auto& l : w.layers) put(l.wk.data(), l.wk.size());
    for (auto& l : w.layers) put(l.wv.data(), l.wv.size());
    for (auto& l : w.layers) put(l.wo.data(), l.wo.size());
    for (auto& l : w.layers) put(l.rms_ffn.data(), l.rms_ffn.size());
    for (auto& l : w.layers) put(l.w1.data(), l.w1.size());
    for (auto& l : w.layers) put(l.w2.data(), l.w2.size());
    for (auto& l : w.layers) put(l.w3.data(), l.w3.size());
    put(w.rms_final.data(), w.rms_final.size());
    std::vector<float> freq(size_t(c.seq_len) * c.head_dim(), 0.0f);  // legacy, unused
    put(freq.data(), int64_t(freq.size()));
    if (!c.shared_classifier) put(w.wcls.data(), w.wcls.size());
    if (!out) fail(path, "file", "write error", "could not write the checkpoint");
  }
  std::filesystem::rename(tmp, path);
}

std::string default_model_path() { return data_dir() + "/models/stories260K.bin"; }
std::string default_tokenizer_path() { return data_dir() + "/models/tok512.bin"; }

}  // namespace kvcim::cmodel
