// Pricing one published CIM macro (configs/macros/*.yaml) for calibration: `kvcim macro`.
//
// A macro file is a hardware spec (configs/hw schema, so `kvcim map --hw` reads it too) plus a
// `published:` block, read here and nowhere else:
//
//   published:
//     id: C7                       # a row ID of section 3 of energy-numbers.md
//     source: "[C7] ..."           # citation (must cite the row)
//     node_nm: 28                  # where the paper measured; the macro is priced there
//     voltage_v: 0.9               # optional: default the node's nominal supply
//     precision:                   # the operation the published figure is for
//       weight_bits: 8             # 2..16
//       input_bits: 8              # 1..16
//       input_signed: true         # optional, default true
//       stated: true               # false: not given by the paper/row; `assumption:` says what is taken
//       assumption: "..."          # required when stated: false
//     tops_per_w: 41               # the published energy efficiency
//     tops_per_mm2: 24             # optional
//     mb_per_mm2: 3.78             # optional (memory density, reported only)
//     role: calibrated             # calibrated (a table constant was fitted on it) | held_out
//
// One full macro operation: every row x every column group for one input vector at the published
// precision, i.e. compute_events(spec, rows, weights_per_row) priced with the spec's technology
// table carried to published.node_nm. MACs = rows x outputs; TOPS/W = 2 MACs / energy;
// GOPS = 2 MACs / (cycles x cycle time); TOPS/mm^2 = GOPS / 1000 / macro area, the macro area
// being rows x cols x cell_bits bit cells plus (analog) one ADC per adc_share columns, from the
// table's area section carried to the node (as mapper/chip.hpp forms a chip's macros).
// Leakage, the digital periphery beyond the macro and writes are not included (as in the papers'
// macro-level figures).
#pragma once
#include <array>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kvcim/mapper/hardware.hpp"

namespace YAML {
class Node;
}

namespace kvcim::mapper {

enum class MacroRole { calibrated, held_out };

struct PublishedMacro {
  std::string id, source;
  cmodel::energy::NodePoint node;
  int weight_bits = 8, input_bits = 8;
  bool input_signed = true;
  bool precision_stated = true;
  std::string precision_assumption;  // when not stated
  double tops_per_w = 0;
  std::optional<double> tops_per_mm2, mb_per_mm2;
  MacroRole role = MacroRole::held_out;
};

struct MacroFile {
  HardwareSpec hw;             // the hardware part (its own precision is what `run` would use)
  PublishedMacro published;
  cmodel::cim::MacroSpec op;   // hw.macro at the published precision
};

// Reads a macro file; kvcim::Error naming the file, the field and what was expected.
MacroFile load_macro_file(const std::string& path);
// The same from YAML text; technology paths relative to base_dir.
MacroFile macro_file_from_text(const std::string& text, const std::string& base_dir,
                               const std::string& where);

struct MacroPrice {
  cmodel::cim::MacroEvents events;
  cmodel::energy::Costs costs;                 // at published.node
  cmodel::energy::Breakdown breakdown;         // by event kind and component
  int64_t macs = 0, rows = 0, outputs = 0;
  double energy_pj = 0, latency_ns = 0, area_mm2 = 0, cells_mm2 = 0, adcs_mm2 = 0;
  double fj_per_mac = 0, tops_per_w = 0, gops = 0, tops_per_mm2 = 0;
  double tops_per_w_error = 0;                  // predicted / published - 1
  std::optional<double> tops_per_mm2_error;
};

MacroPrice price_macro(const MacroFile& m);

// The figures with their conditions and the breakdown, for a terminal.
std::string macro_summary(const MacroFile& m, const MacroPrice& p);
nlohmann::json macro_to_json(const MacroFile& m, const MacroPrice& p);

}  // namespace kvcim::mapper
