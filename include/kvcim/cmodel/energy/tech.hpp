// Technology tables: energy (pJ) and latency (ns) of every event kind, read from YAML under
// configs/tech/. Every value carries its provenance: `source:` citing a row ID of
// ../shared/research/energy-numbers.md (e.g. "[H1]"), or `assumption:` with its reasoning.
//
// File format (see docs/energy.md):
//   name: sram_digital_cim
//   description: ...
//   node_nm: 5                       # required: where the values of this file were measured
//   voltage_v: 0.7                   # required: at which supply
//   base: digital_45nm.yaml          # optional: inherit every event not given here
//   events:
//     adc_conversion:
//       energy_pj: {value: 1.67, source: "[A1] 8b SAR, 32 nm"}
//       latency_ns: {value: 0.83, source: "[A1] 1.2 GS/s"}
//       energy_pj_by_adc_bits:        # optional, adc_conversion only
//         4: {value: 0.79, source: "[A2]"}
//     sram_bit:                        # optional: energy as a function of the bank's capacity
//       energy_pj_by_bank_bytes: {8 KiB: {value: 0.156, source: "[H5]"}, 1 MiB: {...}}
//       scaling: sram_read             # optional: an SRAM access (sram_read | sram_write), carried
//                                      # between nodes by configs/memory/sram_nodes.yaml
//   cell:
//     endurance_writes: {value: 1e6, assumption: "..."}   # or value: unlimited
//   area:                            # um^2 at this file's node (every key required after base:)
//     bit_cell_um2: {...}            # one memory bit (macro or SRAM bank) with its periphery share
//     lane_um2: {...}                # one digital lane (a MAC unit or periphery lane)
//     adc_um2: {...}                 # one ADC of an analog macro
//     nand2_um2: {...}               # one NAND2 gate: synthesised logic in NAND2 equivalents
//
// Values may be numbers in the unit of the key or strings with a unit ("1.67 pJ", "830 ps").
// Costs are held as integers (attojoules, femtoseconds) so that every breakdown of a ledger sums
// exactly to its total. Every value is carried from the node of the file that defines it (a base
// table's values keep the base's node) to one comparison node (scaling.hpp) when costs are made:
// a ledger is never priced with values of two nodes.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvcim/cmodel/energy/events.hpp"
#include "kvcim/cmodel/energy/scaling.hpp"

namespace YAML {
class Node;
}

namespace kvcim::cmodel::energy {

struct TechValue {
  double value = 0;         // pJ or ns (or writes for endurance)
  std::string provenance;   // the text after source:/assumption:
  bool assumption = false;  // true: `assumption:`, false: `source:`
  std::string defined_in;   // file that gave the value (base tables are traced)
  NodePoint node;           // node and supply of that file
};

struct EventCost {
  TechValue energy_pj;
  TechValue latency_ns;
  std::map<int, TechValue> energy_pj_by_adc_bits;  // adc_conversion only
  std::map<int64_t, TechValue> energy_pj_by_bank_bytes;  // sram_bit only: bank capacity -> pJ/bit
  // `scaling: sram_read | sram_write` in the table: this value is an SRAM access, carried between
  // nodes by the SRAM table's published access energies (sram_nodes.hpp), not by logic scaling.
  std::optional<ScalingRule> rule;
};

// How an event's cost moves between nodes: off-chip memory is another chip (none), on-chip wires
// keep their capacitance per mm (wire), everything else is logic or converters (device), unless
// the table marks the event an SRAM access (EventCost::rule).
ScalingRule scaling_rule(EventKind k);
ScalingRule scaling_rule(EventKind k, const EventCost& e);

// SRAM energy per bit as a function of bank capacity: E = a * bytes^b, the least-squares line in
// log-log through the table's points (CACTI-like: a bank's bitlines and wordlines grow with the
// square root of its capacity; Horowitz's 8 KB / 32 KB / 1 MB points give b close to 0.5).
struct BankCurve {
  double a = 0, b = 0;
  double at(double bytes) const;
};
BankCurve fit_bank_curve(const std::map<int64_t, TechValue>& points);

// Areas carried to a comparison node (area_factor), in um^2.
struct Areas {
  double bit_cell_um2 = 0, lane_um2 = 0, adc_um2 = 0, nand2_um2 = 0;
};

// What a set of integer costs is made for.
struct CostContext {
  NodePoint target;             // the comparison node every value is scaled to
  int adc_bits = 0;             // > 0: the ADC row of energy_pj_by_adc_bits (analog macros)
  int64_t sram_bank_bytes = 0;  // > 0: price sram_bit on the table's bank curve at this size
};

// Flat integer costs per event kind for one configuration (ADC resolution resolved).
struct Costs {
  std::string table;                           // name of the technology table
  NodePoint target;                            // the node every value was scaled to
  std::array<double, kEventKinds> energy_factor{};   // applied to each kind's energy
  std::array<double, kEventKinds> latency_factor{};  // and to its latency
  std::array<int64_t, kEventKinds> energy_aj{};  // attojoules (1e-6 pJ) per event
  std::array<int64_t, kEventKinds> latency_fs{}; // femtoseconds (1e-6 ns) per event
  int64_t energy(EventKind k) const { return energy_aj[static_cast<int>(k)]; }
  int64_t latency(EventKind k) const { return latency_fs[static_cast<int>(k)]; }
};

struct TechTable {
  std::string name;
  std::string description;
  std::string path;  // file it was read from
  NodePoint node;    // node and supply of this file (its base tables may have others)
  std::array<EventCost, kEventKinds> events;
  // Writes a cell survives; nullopt = unlimited (SRAM).
  std::optional<TechValue> endurance_writes;
  // Areas (um^2) at the node of the file that gave each.
  TechValue bit_cell_um2, lane_um2, adc_um2, nand2_um2;

  const EventCost& event(EventKind k) const { return events[static_cast<int>(k)]; }
  // Integer costs at ctx.target. adc_bits > 0 selects the ADC row of energy_pj_by_adc_bits when
  // the table has one (kvcim::Error naming the table when that resolution is missing); 0 = the
  // plain value. sram_bank_bytes > 0 prices sram_bit on the bank curve when the table has one.
  Costs costs(const CostContext& ctx) const;
  // At this table's own node (its base tables' values carried there): for one table alone.
  Costs costs(int adc_bits = 0) const { return costs(CostContext{node, adc_bits, 0}); }
  // Areas at `target` (each from its own file's node).
  Areas areas(const NodePoint& target) const;
  // The distinct (file, node) pairs the values come from, this file first.
  std::vector<std::pair<std::string, NodePoint>> sources() const;
};

// Reads and validates a table (and its base chain). Throws kvcim::Error naming file, line,
// field and value.
TechTable load_tech_table(const std::string& path);

// Row IDs of energy-numbers.md that a `source:` may cite.
bool is_known_source_id(const std::string& id);

// pJ -> aJ and ns -> fs, rounded to nearest; kvcim::Error if out of the int64 range.
int64_t to_attojoules(double pj, const std::string& where);
int64_t to_femtoseconds(double ns, const std::string& where);

}  // namespace kvcim::cmodel::energy
