#include "kvcim/runtime/session_backend.hpp"

#include "kvcim/cmodel/energy/cim_charges.hpp"
#include "kvcim/enum_names.hpp"
#include "kvcim/error.hpp"

namespace kvcim::runtime {

using namespace kvcim::cmodel;
using energy::EventKind;
using energy::Op;

constexpr std::array kBackendKindNames{"reference", "cim", "rtl"};
static_assert(kBackendKindNames.size() == enum_count(BackendKind::rtl));
const char* name(BackendKind kind) { return enum_name(kind, kBackendKindNames); }

BackendKind parse_backend(const std::string& option, const std::string& text) {
  if (text == "reference") return BackendKind::reference;
  if (text == "cim") return BackendKind::cim;
  if (text == "rtl") return BackendKind::rtl;
  fail(option, "backend", "'" + text + "'", "expected reference, cim or rtl");
}

BackendChoice parse_backends(const std::string& linear_option, const std::string& linear,
                             const std::string& attention_option, const std::string& attention) {
  BackendChoice c;
  c.attention = parse_backend(attention_option, attention);
  c.linear = parse_backend(linear_option, linear);
  if (c.linear == BackendKind::rtl)
    fail(linear_option, "backend", "rtl", "the RTL implements attention only: use reference or cim");
  return c;
}

Op op_of(MatrixKind kind) {
  switch (kind) {
    case MatrixKind::wq: return Op::q_proj;
    case MatrixKind::wk: return Op::k_proj;
    case MatrixKind::wv: return Op::v_proj;
    case MatrixKind::wo: return Op::o_proj;
    case MatrixKind::w1: return Op::ffn_w1;
    case MatrixKind::w2: return Op::ffn_w2;
    case MatrixKind::w3: return Op::ffn_w3;
    case MatrixKind::classifier: return Op::classifier;
  }
  return Op::other;
}

namespace {

int ledger_layer(MatrixKind kind, int layer) {
  return kind == MatrixKind::classifier ? energy::kModelLevel : layer;
}

}  // namespace

CimWeights::CimWeights(const Config& config, const Weights& weights, const cim::MacroSpec& macro,
                       const BlockSource& blocks)
    : load_ledger_(config.n_layers) {
  for (int l = 0; l < config.n_layers; ++l)
    for (MatrixKind k : kAllMatrixKinds) {
      if (k == MatrixKind::classifier && l > 0) continue;
      auto lin = std::make_unique<CimLinear>(weights.matrix(l, k), macro, blocks(l, k));
      load_ledger_.add_macro(ledger_layer(k, l), op_of(k), lin->load_events());
      linears_[{k == MatrixKind::classifier ? 0 : l, k}] = std::move(lin);
    }
}

CimLinear& CimWeights::at(int layer, MatrixKind kind) {
  return *linears_.at({kind == MatrixKind::classifier ? 0 : layer, kind});
}

SessionBackend::SessionBackend(const Config& config, const Weights& weights, BackendChoice choice,
                               const cim::MacroSpec& macro, const BlockSource& blocks,
                               TileFactory tiles, bool k_per_channel, KvWindow window)
    : SessionBackend(config, weights, choice,
                     choice.linear == BackendKind::cim ? std::make_shared<CimWeights>(config, weights, macro, blocks)
                                                       : nullptr,
                     std::move(tiles), k_per_channel, window) {}

SessionBackend::SessionBackend(const Config& config, const Weights& weights, BackendChoice choice,
                               std::shared_ptr<CimWeights> linears, TileFactory tiles, bool k_per_channel,
                               KvWindow window)
    : config_(config), choice_(choice), reference_(config, weights), linears_(std::move(linears)),
      ledger_(config.n_layers), no_load_(config.n_layers) {
  if (choice.linear == BackendKind::rtl)
    fail("run", "linear_backend", "rtl", "the RTL implements attention only: use reference or cim");
  if (choice.linear == BackendKind::cim && !linears_)
    fail("run", "linear_backend", "cim", "needs the weights in their macros (CimWeights)");
  if (choice.attention != BackendKind::reference) {
    if (!tiles) fail("run", "attention_backend", name(choice.attention), "no attention tile is available");
    attention_ = std::make_unique<CimAttention>(config, std::move(tiles), k_per_channel, window);
  } else if (window.tiles > 0 || window.tokens > 0) {
    fail("policy", "overflow", "window",
         "the window drops tiles of the CIM attention: use attention_backend = cim or rtl");
  }
}

const energy::Ledger& SessionBackend::load_ledger() const {
  return linears_ ? linears_->load_ledger() : no_load_;
}

void SessionBackend::set_noise_stream(uint64_t stream) {
  if (stream >> kStreamBits)
    fail("run", "noise stream", std::to_string(stream), "below 2^" + std::to_string(kStreamBits));
  stream_ = stream;
}

const uint64_t* SessionBackend::next_keys(int layer, MatrixKind kind, int n) {
  const size_t kinds = std::size(kAllMatrixKinds);
  if (products_.empty()) products_.assign(static_cast<size_t>(config_.n_layers) * kinds, 0);
  const size_t at = static_cast<size_t>(kind == MatrixKind::classifier ? 0 : layer) * kinds + static_cast<size_t>(kind);
  int& done = products_[at];
  if (done + n > (1 << kPositionBits))
    fail("run", "position", std::to_string(done + n), "below 2^" + std::to_string(kPositionBits) + " for keyed read noise");
  keys_.resize(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) keys_[t] = (stream_ << kPositionBits) | static_cast<uint64_t>(done + t);
  done += n;
  return keys_.data();
}

void SessionBackend::charge_linear(int layer, MatrixKind kind, const LinearEvents& e) {
  energy::charge_cim_linear(ledger_, ledger_layer(kind, layer), op_of(kind), e.macro,
                            e.partial_sum_adds, e.dequant_muls, e.quant_ops);
}

void SessionBackend::linear(int layer, MatrixKind kind, const float* x, float* y) {
  if (choice_.linear == BackendKind::reference) return reference_.linear(layer, kind, x, y);
  LinearEvents e;
  linears_->at(layer, kind).apply_keyed(x, y, e, *next_keys(layer, kind, 1));
  charge_linear(layer, kind, e);
}

void SessionBackend::linear_batch(int layer, MatrixKind kind, int n, const float* x, int in, float* y, int out) {
  if (choice_.linear == BackendKind::reference) return reference_.linear_batch(layer, kind, n, x, in, y, out);
  CimLinear& lin = linears_->at(layer, kind);
  if (in != lin.inputs() || out != lin.outputs())
    fail("run", "linear_batch", std::to_string(in) + " -> " + std::to_string(out),
         "the matrix is " + std::to_string(lin.inputs()) + " -> " + std::to_string(lin.outputs()));
  LinearEvents e;
  lin.apply_batch(x, n, y, e, next_keys(layer, kind, n));
  charge_linear(layer, kind, e);
}

void SessionBackend::write_kv(int layer, int pos, const float* k, const float* v) {
  if (!attention_) return reference_.write_kv(layer, pos, k, v);
  AttentionEvents e;
  attention_->set_time_ns(pos * token_ns_);
  attention_->append(layer, pos, k, v, e);
  energy::charge_tile_append(ledger_, layer, e.write, e.kv_quant_ops);
}

void SessionBackend::attend(int layer, int head, int pos, const float* q, float* out) {
  if (!attention_) return reference_.attend(layer, head, pos, q, out);
  AttentionEvents e;
  attention_->set_time_ns(pos * token_ns_);
  attention_->attend(layer, head, q, out, e);
  energy::charge_tile_query(ledger_, layer, e.query, e.q_quant_ops, e.combine_ops);
}

void SessionBackend::reset() {
  std::fill(products_.begin(), products_.end(), 0);
  reference_.cache().reset();
  if (attention_) attention_->reset();
}

}  // namespace kvcim::runtime
