#include "kvcim/cmodel/energy/ledger.hpp"

#include <algorithm>
#include <string>

#include "kvcim/error.hpp"

namespace kvcim::cmodel::energy {

namespace {

// r = a op b, or kvcim::Error naming the operation when it overflowed.
int64_t unless_overflowed(bool overflowed, int64_t r, int64_t a, const char* op, int64_t b, const char* field) {
  if (overflowed)
    fail("ledger", field, std::to_string(a) + op + std::to_string(b),
         "exceeds the int64 range of the ledger (9.2e18 attojoules = 9.2 J)");
  return r;
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  const bool overflowed = __builtin_add_overflow(a, b, &r);
  return unless_overflowed(overflowed, r, a, " + ", b, "total");
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  const bool overflowed = __builtin_mul_overflow(a, b, &r);
  return unless_overflowed(overflowed, r, a, " x ", b, "product");
}

std::string aj_text(Aj v) {
  if (v >= INT64_MIN && v <= INT64_MAX) return std::to_string(static_cast<int64_t>(v));
  return std::to_string(static_cast<double>(v));
}

Aj checked_add(Aj a, Aj b) {
  Aj r = 0;
  if (__builtin_add_overflow(a, b, &r))
    fail("ledger", "energy", aj_text(a) + " + " + aj_text(b), "exceeds the 128-bit range of the ledger");
  return r;
}

constexpr int idx(Op op, EventKind kind) {
  return static_cast<int>(op) * kEventKinds + static_cast<int>(kind);
}

}  // namespace

Ledger::Ledger(int n_layers) {
  if (n_layers < 0) fail("ledger", "n_layers", std::to_string(n_layers), "expected >= 0");
  layers_.resize(n_layers, Cells{});
}

Ledger::Cells& Ledger::cells(int layer) {
  if (layer == kModelLevel) return model_;
  if (layer < kModelLevel)
    fail("ledger", "layer", std::to_string(layer), "expected >= 0 or kModelLevel (-1)");
  if (layer >= static_cast<int>(layers_.size())) layers_.resize(layer + 1, Cells{});
  return layers_[layer];
}

const Ledger::Cells* Ledger::cells_or_null(int layer) const {
  if (layer == kModelLevel) return &model_;
  if (layer < 0 || layer >= static_cast<int>(layers_.size())) return nullptr;
  return &layers_[layer];
}

void Ledger::add(int layer, Op op, EventKind kind, int64_t count) {
  if (count < 0)
    fail("ledger", std::string(name(op)) + "." + std::string(name(kind)), std::to_string(count),
         "event counts cannot be negative");
  if (count == 0) return;
  int64_t& c = cells(layer)[idx(op, kind)];
  c = checked_add(c, count);
}

void Ledger::add_macro(int layer, Op op, const cim::MacroEvents& e) {
  const auto counts = macro_event_counts(e);
  for (size_t i = 0; i < counts.size(); ++i) add(layer, op, static_cast<EventKind>(i), counts[i]);
}

Ledger& Ledger::operator+=(const Ledger& o) {
  if (o.layers_.size() > layers_.size()) layers_.resize(o.layers_.size(), Cells{});
  for (size_t l = 0; l < o.layers_.size(); ++l)
    for (size_t i = 0; i < o.layers_[l].size(); ++i)
      layers_[l][i] = checked_add(layers_[l][i], o.layers_[l][i]);
  for (size_t i = 0; i < model_.size(); ++i) model_[i] = checked_add(model_[i], o.model_[i]);
  return *this;
}

Ledger& Ledger::operator*=(int64_t factor) {
  if (factor < 0) fail("ledger", "factor", std::to_string(factor), "expected >= 0");
  for (auto& cells : layers_)
    for (auto& c : cells) c = checked_mul(c, factor);
  for (auto& c : model_) c = checked_mul(c, factor);
  return *this;
}

int64_t Ledger::count(int layer, Op op, EventKind kind) const {
  const Cells* c = cells_or_null(layer);
  return c ? (*c)[idx(op, kind)] : 0;
}

int64_t Ledger::count(Op op, EventKind kind) const {
  int64_t n = model_[idx(op, kind)];
  for (const auto& c : layers_) n = checked_add(n, c[idx(op, kind)]);
  return n;
}

int64_t Ledger::count(EventKind kind) const {
  int64_t n = 0;
  for (auto op : all_ops()) n = checked_add(n, count(op, kind));
  return n;
}

int64_t Ledger::count(Op op) const {
  int64_t n = 0;
  for (auto k : all_event_kinds()) n = checked_add(n, count(op, k));
  return n;
}

bool Ledger::operator==(const Ledger& o) const {
  // Trailing all-zero layers do not make two ledgers different.
  const size_t n = std::max(layers_.size(), o.layers_.size());
  for (size_t l = 0; l < n; ++l) {
    const Cells zero{};
    const Cells& a = l < layers_.size() ? layers_[l] : zero;
    const Cells& b = l < o.layers_.size() ? o.layers_[l] : zero;
    if (a != b) return false;
  }
  return model_ == o.model_;
}

Breakdown Ledger::cost(const Costs& costs) const { return cost(costs, nullptr); }

Breakdown Ledger::cost(const Costs& main, const Costs* attention) const {
  Breakdown b;
  const int L = n_layers();
  b.layer_energy_aj.assign(L + 1, 0);
  b.layer_latency_fs.assign(L + 1, 0);
  for (int l = -1; l < L; ++l) {
    const Cells& cells = l < 0 ? model_ : layers_[l];
    const int slot = l < 0 ? L : l;
    for (auto op : all_ops()) {
      const Costs& costs = attention && is_attention_op(op) ? *attention : main;
      for (auto k : all_event_kinds()) {
        const int64_t n = cells[idx(op, k)];
        if (n == 0) continue;
        const Aj e = static_cast<Aj>(n) * costs.energy(k);  // |n|, |cost| < 2^63: fits
        const int64_t t = checked_mul(n, costs.latency(k));
        const int c = static_cast<int>(component_of(k, op)), o = static_cast<int>(op);
        b.energy_aj = checked_add(b.energy_aj, e);
        b.latency_fs = checked_add(b.latency_fs, t);
        b.component_energy_aj[c] = checked_add(b.component_energy_aj[c], e);
        b.component_latency_fs[c] = checked_add(b.component_latency_fs[c], t);
        b.op_energy_aj[o] = checked_add(b.op_energy_aj[o], e);
        b.op_latency_fs[o] = checked_add(b.op_latency_fs[o], t);
        b.layer_energy_aj[slot] = checked_add(b.layer_energy_aj[slot], e);
        b.layer_latency_fs[slot] = checked_add(b.layer_latency_fs[slot], t);
        b.kind_energy_aj[static_cast<int>(k)] =
            checked_add(b.kind_energy_aj[static_cast<int>(k)], e);
      }
    }
  }
  return b;
}

Aj Ledger::energy_aj(const Costs& main, const Costs* attention) const {
  // Equal to cost().energy_aj, without the breakdowns.
  Aj sum = 0;
  auto layer_sum = [&](const Cells& cells) {
    for (int op = 0; op < kOps; ++op) {
      const Costs& c = attention && is_attention_op(static_cast<Op>(op)) ? *attention : main;
      const int64_t* n = &cells[op * kEventKinds];
      for (int k = 0; k < kEventKinds; ++k)
        if (n[k]) sum = checked_add(sum, static_cast<Aj>(n[k]) * c.energy_aj[k]);
    }
  };
  layer_sum(model_);
  for (const auto& cells : layers_) layer_sum(cells);
  return sum;
}

nlohmann::json Ledger::counts_json() const {
  nlohmann::json j;
  nlohmann::json events = nlohmann::json::object();
  for (auto k : all_event_kinds())
    if (const int64_t n = count(k)) events[std::string(name(k))] = n;
  j["events"] = events;
  nlohmann::json by_op = nlohmann::json::object();
  for (auto op : all_ops()) {
    nlohmann::json o = nlohmann::json::object();
    for (auto k : all_event_kinds())
      if (const int64_t n = count(op, k)) o[std::string(name(k))] = n;
    if (!o.empty()) by_op[std::string(name(op))] = o;
  }
  j["by_op"] = by_op;
  return j;
}

nlohmann::json Ledger::to_json(const Costs& costs, const Costs* attention) const {
  const Breakdown b = cost(costs, attention);
  auto pj = [](Aj aj) { return static_cast<double>(aj) * 1e-6; };
  nlohmann::json j = counts_json();
  j["technology"] = costs.table;
  if (attention) j["attention_technology"] = attention->table;
  j["energy_pj"] = pj(b.energy_aj);
  // exact while it fits a JSON integer (int64), else the nearest double
  if (b.energy_aj <= INT64_MAX) j["energy_aj"] = static_cast<int64_t>(b.energy_aj);
  else j["energy_aj"] = static_cast<double>(b.energy_aj);
  j["serial_latency_ns"] = pj(b.latency_fs);
  nlohmann::json comp = nlohmann::json::object(), ops = nlohmann::json::object();
  for (auto c : all_components())
    comp[std::string(name(c))] = pj(b.component_energy_aj[static_cast<int>(c)]);
  for (auto op : all_ops()) ops[std::string(name(op))] = pj(b.op_energy_aj[static_cast<int>(op)]);
  j["energy_pj_by_component"] = comp;
  j["energy_pj_by_op"] = ops;
  nlohmann::json layers = nlohmann::json::array();
  for (int l = 0; l < n_layers(); ++l) layers.push_back(pj(b.layer_energy_aj[l]));
  j["energy_pj_by_layer"] = layers;
  j["energy_pj_model_level"] = pj(b.layer_energy_aj[n_layers()]);
  return j;
}

}  // namespace kvcim::cmodel::energy
