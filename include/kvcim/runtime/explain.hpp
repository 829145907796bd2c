// `kvcim explain`: one prompt through the model, measured, told as a chain of reasons:
// next-token prediction, tokens, vectors, the K/V "notes" later tokens look back at, what the KV
// cache saves (the same generation with and without it), and what moving the data costs against
// computing it, conventionally and on CIM.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "kvcim/cmodel/tokenizer.hpp"
#include "kvcim/cmodel/transformer.hpp"
#include "kvcim/cmodel/energy/ledger.hpp"

namespace kvcim::runtime {

// Counts the multiply-accumulates a forward pass does and keeps each head's attention weights.
class CountingBackend : public cmodel::Backend {
 public:
  CountingBackend(const cmodel::Config& config, const cmodel::Weights& weights);
  void linear(int layer, cmodel::MatrixKind kind, const float* x, float* y) override;
  void write_kv(int layer, int pos, const float* k, const float* v) override;
  void attend(int layer, int head, int pos, const float* q, float* out) override;

  int64_t macs() const { return linear_macs_ + attention_macs_; }
  int64_t linear_macs() const { return linear_macs_; }
  int64_t attention_macs() const { return attention_macs_; }
  // Softmax weights of head `head` in `layer` at the last position attended: [pos + 1].
  const std::vector<float>& attention(int layer, int head) const;
  cmodel::ReferenceBackend& reference() { return reference_; }

 private:
  const cmodel::Config& config_;
  cmodel::ReferenceBackend reference_;
  int64_t linear_macs_ = 0, attention_macs_ = 0;
  std::vector<std::vector<float>> attention_;  // [layer * n_heads + head]
};

// The no-cache mode of the reference model (used only for explain's comparison): the logits at
// position `tokens.size() - 1` computed from scratch, recomputing K and V for every earlier
// position. Adds its multiply-accumulates to `macs`.
cmodel::Vector forward_without_cache(const cmodel::Config& config, const cmodel::Weights& weights,
                                     const std::vector<int>& tokens, int64_t& macs);

struct ExplainOptions {
  std::string prompt = "Once upon a time";
  int steps = 24;         // forward passes, prompt included
  int top_k = 5;          // candidates shown per position
  int neighbours = 5;     // nearest tokens shown per vector
  int vectors = 3;        // prompt tokens whose embeddings are shown
};

// Everything explain shows, as JSON (the CLI prints it as text, --json writes it).
// `cim_step_ledger` gives the CIM chip's events of the step at a position (from the mapper), and
// `conventional_step_ledger` the conventional engine's; `costs_*` turn them into energy.
struct ExplainEnergy {
  std::function<cmodel::energy::Ledger(int pos)> conventional_step_ledger;
  std::function<cmodel::energy::Ledger(int pos)> cim_step_ledger;
  cmodel::energy::Costs conventional_costs, cim_costs;
  nlohmann::json hardware;  // a summary of the spec used
};
nlohmann::json explain(const cmodel::Checkpoint& checkpoint, const cmodel::Tokenizer& tokenizer,
                       const ExplainOptions& options, const ExplainEnergy& energy);

// A byte-fallback piece shown as its byte ("<0xE2>" -> "\\xE2"); other pieces as they are.
std::string display_piece(const cmodel::Tokenizer& tokenizer, int id);

}  // namespace kvcim::runtime
