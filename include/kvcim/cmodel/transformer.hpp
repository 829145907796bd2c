// The Llama-family decoder forward pass in float32, as llama2.c's run.c computes it: RMSNorm
// (eps Config::rms_norm_eps, 1e-5 for llama2.c), RoPE on adjacent pairs (theta Config::rope_theta,
// 10000 for llama2.c, Llama-3's rope_scaling when set; Hugging Face checkpoints are permuted to
// adjacent pairs when read), grouped-query attention (over the last Config::sliding_window
// positions when set), SwiGLU, classifier shared with the embedding unless the checkpoint stores
// its own; the projections' biases (Qwen2) and per-head q/k RMSNorm (Qwen3) where the family
// has them, applied after the backend's product.
//
// Every matrix-vector product and every attention step goes through a Backend, so the same
// forward pass runs on the float reference, on the CIM C models or on the Verilated tile.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kvcim/cmodel/checkpoint.hpp"
#include "kvcim/cmodel/kv_cache.hpp"

namespace kvcim::cmodel {

// llama2.c's values (the defaults of Config).
inline constexpr float kRmsNormEps = 1e-5f;
inline constexpr float kRopeTheta = 10000.0f;

// Where each operation of the forward pass runs.
class Backend {
 public:
  virtual ~Backend() = default;
  // y = W x for matrix `kind` of `layer` (y: rows of W, x: columns of W).
  virtual void linear(int layer, MatrixKind kind, const float* x, float* y) = 0;
  // Stores position `pos`'s K and V of `layer` (all KV heads, [kv_dim] each, after RoPE).
  virtual void write_kv(int layer, int pos, const float* k, const float* v) = 0;
  // Attention of query head `head` at position `pos` over positions 0..pos (the reference: the
  // last Config::sliding_window of them when set): out [head_dim].
  virtual void attend(int layer, int head, int pos, const float* q, float* out) = 0;
  // The same product for n inputs at once, positions in order (forward_sequence): y + t * out =
  // W (x + t * in) for t < n, in and out W's columns and rows. Backends that keep their weights
  // in place override it; the result must equal n calls of linear(), token by token.
  virtual void linear_batch(int layer, MatrixKind kind, int n, const float* x, int in, float* y, int out);
};

// The float32 reference: Eigen matrix-vector products and softmax attention over a KvCache.
class ReferenceBackend : public Backend {
 public:
  ReferenceBackend(const Config& config, const Weights& weights);
  void linear(int layer, MatrixKind kind, const float* x, float* y) override;
  void write_kv(int layer, int pos, const float* k, const float* v) override;
  void attend(int layer, int head, int pos, const float* q, float* out) override;
  // Row blocks of W that fit in cache, each run over every input: the floats of linear().
  void linear_batch(int layer, MatrixKind kind, int n, const float* x, int in, float* y, int out) override;
  // Streamed: linear_batch maps each block of rows (~64 KiB) in one call before its pass and
  // gives its pages back after it (WeightMatrix::populate_pages, release_pages), so that a pass
  // over a chunk of many tokens (the evaluation's reference, beside the CIM macros) holds the
  // blocks in flight, not the checkpoint nor a whole matrix; the next chunk reads them again
  // from the page cache.
  // Only a read-only mapping's pages go (Residency::read_only, on_demand); the floats are the same.
  void set_streamed(bool on) { streamed_ = on; }

  KvCache& cache() { return cache_; }
  // Softmax weights of the last attend() call: [pos + 1].
  const std::vector<float>& last_attention() const { return attention_; }

 private:
  const Config& config_;
  const Weights& weights_;
  KvCache cache_;
  std::vector<float> attention_;
  bool streamed_ = false;
};

// Activations of one decoder step (llama2.c's RunState).
struct RunState {
  Vector x;       // residual stream [dim]
  Vector xb;      // normalised input / attention output [dim]
  Vector xb2;     // projection output [dim]
  Vector xa;      // attention output, every query head [n_heads*head_dim]
  Vector hb, hb2; // FFN [hidden]
  Vector q, k, v; // [n_heads*head_dim], [kv_dim], [kv_dim]
  Vector logits;  // [vocab]
  explicit RunState(const Config& config);
};

// Building blocks, shared with every path that needs the same arithmetic.
void rmsnorm(float* out, const float* x, const float* weight, int size, float eps = kRmsNormEps);
void rope(float* q, float* k, int pos, const Config& config);
void softmax(float* x, int size);

// One decoder step: feeds `token` at position `pos` and returns the logits.
const Vector& forward(const Config& config, const Weights& weights, RunState& state,
                      Backend& backend, int token, int pos);

// Teacher-forced passes of positions pos0 .. pos0 + n - 1 fed ids[0 .. n - 1], the backend's cache
// holding positions 0 .. pos0 - 1: each layer over all n positions at once (every matrix one
// Backend::linear_batch, its weights read once for the n positions), attention position by
// position in order. logits[t * vocab_size + v]. The same floats as forward() at each position in
// turn.
// classify false: `logits` gets the classifier's inputs instead ([t * dim + i], the final RMSNorm
// applied), for a caller that runs the classifier on fewer rows at a time (its logits are
// vocab_size floats a row).
void forward_sequence(const Config& config, const Weights& weights, Backend& backend, const int* ids, int pos0,
                      int n, std::vector<float>& logits, bool classify = true);
// One position of several sequences at once (sampling them side by side): sequence t feeds
// ids[t] at `pos` on streams[t]'s cache; every matrix one linear_batch of streams[0] (the
// backends must share their weights). logits[t * vocab_size + v]: forward() of each in turn.
void forward_streams(const Config& config, const Weights& weights, const std::vector<Backend*>& streams,
                     const int* ids, int pos, std::vector<float>& logits);
// The same with sequence t at its own position pos[t] (sequences started one after another).
void forward_streams(const Config& config, const Weights& weights, const std::vector<Backend*>& streams,
                     const int* ids, const int* pos, std::vector<float>& logits);

class Int8Backend;

// How a Model computes its matrix-vector products: the float32 reference, or int8 codes
// (Int8Backend: per-output-channel 8-bit weights, per-token 8-bit activations, int32
// accumulation; attention stays float).
enum class WeightFormat { float32, int8 };
const char* name(WeightFormat format);
// "float" (or "f32", "float32") | "int8"; anything else throws kvcim::Error naming `option`.
WeightFormat parse_weight_format(const std::string& option, const std::string& text);

// A checkpoint with its reference backend and run state: the golden model.
class Model {
 public:
  static std::shared_ptr<Model> load(const std::string& path,
                                     WeightFormat format = WeightFormat::float32);
  explicit Model(Checkpoint checkpoint, WeightFormat format = WeightFormat::float32);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  WeightFormat weight_format() const { return int8_ ? WeightFormat::int8 : WeightFormat::float32; }

  const Config& config() const { return checkpoint_.config; }
  const Weights& weights() const { return checkpoint_.weights; }
  const std::string& path() const { return checkpoint_.path; }

  // Feeds token at pos (pos must be the next position of the current sequence; 0 starts anew).
  const Vector& forward(int token, int pos);
  // Teacher-forced logits: row i = logits after feeding tokens[0..i]. Shape [n, vocab].
  Matrix logits(const std::vector<int>& tokens);
  ReferenceBackend& backend() { return backend_; }

 private:
  Checkpoint checkpoint_;
  ReferenceBackend backend_;
  std::unique_ptr<Int8Backend> int8_;  // set for WeightFormat::int8
  RunState state_;
};

}  // namespace kvcim::cmodel
