// The runtime's backend of the forward pass: each operation class goes to the float reference,
// to the CIM C models (CimLinear per matrix as placed, CimAttention over attention tiles) or, for
// attention, to the Verilated RTL tile (through the same AttentionTile interface). Every
// operation's events are charged to a ledger by (layer, operation, event kind).
#pragma once
#include <functional>
#include <map>
#include <memory>

#include "kvcim/cmodel/energy/ledger.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/runtime/cim_attention.hpp"
#include "kvcim/runtime/cim_linear.hpp"

namespace kvcim::runtime {

enum class BackendKind { reference, cim, rtl };
const char* name(BackendKind kind);
// "reference" | "cim" | "rtl"; throws kvcim::Error naming `option`.
BackendKind parse_backend(const std::string& option, const std::string& text);

// Which blocks (macros) hold matrix `kind` of `layer`: from the mapper's placement.
using BlockSource = std::function<std::vector<Block>(int layer, cmodel::MatrixKind kind)>;

struct BackendChoice {
  BackendKind linear = BackendKind::cim;     // reference | cim
  BackendKind attention = BackendKind::cim;  // reference | cim | rtl
};

// Both choices from text, errors naming the caller's options; rtl for the linear layers is
// refused here, before anything is loaded.
BackendChoice parse_backends(const std::string& linear_option, const std::string& linear,
                             const std::string& attention_option, const std::string& attention);

// Every weight matrix in its macros (CimLinear per matrix as placed), written once. The weights
// are stationary: the sequences of a batch stream their inputs through the same macros, one
// after another, so they share one CimWeights (not across threads: a CimLinear has scratch).
class CimWeights {
 public:
  CimWeights(const cmodel::Config& config, const cmodel::Weights& weights, const cmodel::cim::MacroSpec& macro,
             const BlockSource& blocks);
  CimLinear& at(int layer, cmodel::MatrixKind kind);
  // Events of writing the weights into the macros, once, before the first token.
  const cmodel::energy::Ledger& load_ledger() const { return load_ledger_; }

 private:
  std::map<std::pair<int, cmodel::MatrixKind>, std::unique_ptr<CimLinear>> linears_;
  cmodel::energy::Ledger load_ledger_;
};

class SessionBackend : public cmodel::Backend {
 public:
  // `tiles` builds attention tiles (C model or RTL) when attention is not reference. This
  // backend writes its own CimWeights when the linear layers are on CIM.
  SessionBackend(const cmodel::Config& config, const cmodel::Weights& weights, BackendChoice choice,
                 const cmodel::cim::MacroSpec& macro, const BlockSource& blocks, TileFactory tiles,
                 bool k_per_channel = false, KvWindow window = {});
  // One sequence of a batch: the batch's CimWeights (null when the linear layers are reference),
  // its own attention tiles and caches.
  SessionBackend(const cmodel::Config& config, const cmodel::Weights& weights, BackendChoice choice,
                 std::shared_ptr<CimWeights> linears, TileFactory tiles, bool k_per_channel = false,
                 KvWindow window = {});

  void linear(int layer, cmodel::MatrixKind kind, const float* x, float* y) override;
  void write_kv(int layer, int pos, const float* k, const float* v) override;
  void attend(int layer, int head, int pos, const float* q, float* out) override;
  // n positions through each matrix's macros at once: linear() of each in turn, bit for bit.
  void linear_batch(int layer, cmodel::MatrixKind kind, int n, const float* x, int in, float* y, int out) override;
  // The macros' read noise of a product is keyed by (stream, position): the position is the
  // count of that matrix's products since reset(), the stream this backend's (set by the session:
  // a generation's sampler seed, an evaluation's sequence). So a token's noise does not depend on
  // which tokens, sequences or batches ran before it on the same macros (cim::Macro::compute_batch).
  void set_noise_stream(uint64_t stream);
  static constexpr int kStreamBits = 20, kPositionBits = 17;  // a key of Macro::kKeyBits

  // Events of the operations that ran on CIM (reference operations are costed by the caller).
  cmodel::energy::Ledger& ledger() { return ledger_; }
  // Events of writing the weights into the macros, once, before the first token.
  const cmodel::energy::Ledger& load_ledger() const;
  const BackendChoice& choice() const { return choice_; }
  void reset();  // a new sequence: KV cache emptied (weights stay)
  // The time between two positions of a sequence (ns): position p is written and attended at
  // p x interval, which the attention tiles' retention sees. 0 (the default): no time passes.
  void set_token_interval_ns(double ns) { token_ns_ = ns; }

 private:
  const cmodel::Config& config_;
  BackendChoice choice_;
  cmodel::ReferenceBackend reference_;
  std::shared_ptr<CimWeights> linears_;
  std::unique_ptr<CimAttention> attention_;
  double token_ns_ = 0;
  cmodel::energy::Ledger ledger_, no_load_;
  uint64_t stream_ = 0;
  std::vector<int> products_;  // per (layer, matrix kind): products since reset()
  std::vector<uint64_t> keys_;
  // keys_ of the next n products of (layer, kind), counted
  const uint64_t* next_keys(int layer, cmodel::MatrixKind kind, int n);
  void charge_linear(int layer, cmodel::MatrixKind kind, const LinearEvents& e);
};

// The decoder operation a matrix serves.
cmodel::energy::Op op_of(cmodel::MatrixKind kind);

}  // namespace kvcim::runtime
