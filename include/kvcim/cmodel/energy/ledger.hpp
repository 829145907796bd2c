// The event ledger: counts of events by (layer, operation, event kind). Energy and latency come
// from multiplying by a technology table's integer costs, so every breakdown (by component, by
// operation, by layer) sums exactly to the total.
//
// Layers are 0..n-1; kModelLevel (-1) holds what belongs to no layer (embedding lookup, final
// norm, classifier). The ledger grows to any layer index it is given.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/cmodel/energy/events.hpp"
#include "kvcim/cmodel/energy/tech.hpp"

namespace kvcim::cmodel::energy {

inline constexpr int kModelLevel = -1;

// Energies in attojoules, exact integers in 128 bits: int64 ends at 9.2 J, below one token of a
// 70B model read from DRAM (~11 J). Counts and latencies stay int64.
__extension__ typedef __int128 Aj;

// Energy in attojoules and serial latency in femtoseconds (sum of count x latency: the time if
// nothing overlapped; the mapper derives the parallel latency bound separately).
struct Breakdown {
  Aj energy_aj = 0;
  int64_t latency_fs = 0;
  std::array<Aj, kComponents> component_energy_aj{};
  std::array<int64_t, kComponents> component_latency_fs{};
  std::array<Aj, kOps> op_energy_aj{};
  std::array<int64_t, kOps> op_latency_fs{};
  std::vector<Aj> layer_energy_aj;  // [n_layers + 1]; the last entry is kModelLevel
  std::vector<int64_t> layer_latency_fs;
  std::array<Aj, kEventKinds> kind_energy_aj{};

  double energy_pj() const { return static_cast<double>(energy_aj) * 1e-6; }
  double latency_ns() const { return static_cast<double>(latency_fs) * 1e-6; }
};

class Ledger {
 public:
  explicit Ledger(int n_layers = 0);

  int n_layers() const { return static_cast<int>(layers_.size()); }

  // Adds `count` events of `kind` caused by `op` in `layer` (or kModelLevel). Throws
  // kvcim::Error on a negative count or a layer below kModelLevel.
  void add(int layer, Op op, EventKind kind, int64_t count);
  // Adds every field of a macro's events (the seven CIM event kinds).
  void add_macro(int layer, Op op, const cim::MacroEvents& events);
  // Adds every count of another ledger.
  Ledger& operator+=(const Ledger& other);
  // Every count times `factor` (e.g. identical layers); throws on overflow.
  Ledger& operator*=(int64_t factor);

  int64_t count(int layer, Op op, EventKind kind) const;
  int64_t count(Op op, EventKind kind) const;  // over all layers
  int64_t count(EventKind kind) const;         // over everything
  int64_t count(Op op) const;                  // all kinds of one op (a coarse sanity figure)

  bool operator==(const Ledger& other) const;

  Breakdown cost(const Costs& costs) const;
  // The attention operations (is_attention_op) costed with `attention` when it is given: the KV
  // tiles may be of another technology than the weight macros.
  Breakdown cost(const Costs& costs, const Costs* attention) const;
  // Only the total energy (attojoules) of cost(): cheaper, for design-space sweeps.
  Aj energy_aj(const Costs& costs, const Costs* attention = nullptr) const;

  // {"events": {kind: count}, "by_op": {op: {kind: count}}, "by_layer": [...]} (counts only).
  nlohmann::json counts_json() const;
  // Counts plus energy (pJ) and serial latency (ns): totals, by component, op and layer.
  nlohmann::json to_json(const Costs& costs, const Costs* attention = nullptr) const;

 private:
  using Cells = std::array<int64_t, kOps * kEventKinds>;
  Cells& cells(int layer);
  const Cells* cells_or_null(int layer) const;

  std::vector<Cells> layers_;
  Cells model_{};
};

}  // namespace kvcim::cmodel::energy
