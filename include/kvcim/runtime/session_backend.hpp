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

class SessionBackend : public cmodel::Backend {
 public:
  // `tiles` builds attention tiles (C model or RTL) when attention is not reference.
  SessionBackend(const cmodel::Config& config, const cmodel::Weights& weights, BackendChoice choice,
                 const cmodel::cim::MacroSpec& macro, const BlockSource& blocks, TileFactory tiles,
                 bool k_per_channel = false, KvWindow window = {});

  void linear(int layer, cmodel::MatrixKind kind, const float* x, float* y) override;
  void write_kv(int layer, int pos, const float* k, const float* v) override;
  void attend(int layer, int head, int pos, const float* q, float* out) override;

  // Events of the operations that ran on CIM (reference operations are costed by the caller).
  cmodel::energy::Ledger& ledger() { return ledger_; }
  // Events of writing the weights into the macros, once, before the first token.
  const cmodel::energy::Ledger& load_ledger() const { return load_ledger_; }
  const BackendChoice& choice() const { return choice_; }
  void reset();  // a new sequence: KV cache emptied (weights stay)

 private:
  const cmodel::Config& config_;
  BackendChoice choice_;
  cmodel::ReferenceBackend reference_;
  std::map<std::pair<int, cmodel::MatrixKind>, std::unique_ptr<CimLinear>> linears_;
  std::unique_ptr<CimAttention> attention_;
  cmodel::energy::Ledger ledger_, load_ledger_;
};

// The decoder operation a matrix serves.
cmodel::energy::Op op_of(cmodel::MatrixKind kind);

}  // namespace kvcim::runtime
