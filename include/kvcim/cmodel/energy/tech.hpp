// Technology tables: energy (pJ) and latency (ns) of every event kind, read from YAML under
// configs/tech/. Every value carries its provenance: `source:` citing a row ID of
// ../shared/research/energy-numbers.md (e.g. "[H1]"), or `assumption:` with its reasoning.
//
// File format (see docs/energy.md):
//   name: sram_digital_cim
//   description: ...
//   base: digital_45nm.yaml          # optional: inherit every event not given here
//   events:
//     adc_conversion:
//       energy_pj: {value: 1.67, source: "[A1] 8b SAR, 32 nm"}
//       latency_ns: {value: 0.83, source: "[A1] 1.2 GS/s"}
//       energy_pj_by_adc_bits:        # optional, adc_conversion only
//         4: {value: 0.79, source: "[A2]"}
//   cell:
//     endurance_writes: {value: 1e6, assumption: "..."}   # or value: unlimited
//
// Values may be numbers in the unit of the key or strings with a unit ("1.67 pJ", "830 ps").
// Costs are held as integers (attojoules, femtoseconds) so that every breakdown of a ledger sums
// exactly to its total.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "kvcim/cmodel/energy/events.hpp"

namespace YAML {
class Node;
}

namespace kvcim::cmodel::energy {

struct TechValue {
  double value = 0;         // pJ or ns (or writes for endurance)
  std::string provenance;   // the text after source:/assumption:
  bool assumption = false;  // true: `assumption:`, false: `source:`
  std::string defined_in;   // file that gave the value (base tables are traced)
};

struct EventCost {
  TechValue energy_pj;
  TechValue latency_ns;
  std::map<int, TechValue> energy_pj_by_adc_bits;  // adc_conversion only
};

// Flat integer costs per event kind for one configuration (ADC resolution resolved).
struct Costs {
  std::string table;                           // name of the technology table
  std::array<int64_t, kEventKinds> energy_aj{};  // attojoules (1e-6 pJ) per event
  std::array<int64_t, kEventKinds> latency_fs{}; // femtoseconds (1e-6 ns) per event
  int64_t energy(EventKind k) const { return energy_aj[static_cast<int>(k)]; }
  int64_t latency(EventKind k) const { return latency_fs[static_cast<int>(k)]; }
};

struct TechTable {
  std::string name;
  std::string description;
  std::string path;  // file it was read from
  std::array<EventCost, kEventKinds> events;
  // Writes a cell survives; nullopt = unlimited (SRAM).
  std::optional<TechValue> endurance_writes;

  const EventCost& event(EventKind k) const { return events[static_cast<int>(k)]; }
  // Integer costs. adc_bits > 0 selects the ADC row of energy_pj_by_adc_bits when the table has
  // one (kvcim::Error naming the table when that resolution is missing); 0 = the plain value.
  Costs costs(int adc_bits = 0) const;
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
