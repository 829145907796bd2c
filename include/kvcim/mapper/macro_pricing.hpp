// `kvcim macro`: one published CIM macro (configs/macros/*.yaml, cmodel/macro_model/macro_desc.hpp)
// priced by the component model (macro_components.hpp) at its published operating point or at
// others (supply, input bits), each figure beside the paper's and its error, with the model's
// stated uncertainty (the held-out median |error| of docs/calibration.md).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/cmodel/energy/ledger.hpp"
#include "kvcim/cmodel/macro_model/macro_components.hpp"
#include "kvcim/mapper/hardware.hpp"

namespace kvcim::mapper {

using cmodel::macro_model::MacroFile;
using cmodel::macro_model::load_macro_file;
using cmodel::macro_model::macro_file_from_text;

struct MacroPrice {
  cmodel::macro_model::MacroDesc desc;     // the spec at this operating point
  cmodel::macro_model::MacroResult result;
  bool published_point = true;             // supply and input bits as published: errors apply
  double tops_per_w_error = 0;             // predicted / published - 1 (published point only)
  std::optional<double> tops_per_mm2_error, gops_error, area_error;
};

// `point` zero fields keep the published value.
MacroPrice price_macro(const MacroFile& m, const cmodel::macro_model::Constants& k,
                       const cmodel::macro_model::OperatingPoint& point = {});

// Parses "0.6:1.0:0.1" (inclusive) or "0.8" or "0.7,0.9"; Error naming `flag` otherwise.
std::vector<double> parse_sweep(const std::string& text, const std::string& flag);

std::string macro_summary(const MacroFile& m, const std::vector<MacroPrice>& points,
                          const cmodel::macro_model::Constants& k);
nlohmann::json macro_to_json(const MacroFile& m, const std::vector<MacroPrice>& points,
                             const cmodel::macro_model::Constants& k);

// The component macro model's stated uncertainty carried into a chip's CIM energy (`kvcim run`,
// `kvcim map`): the held-out median |TOPS/W error| (configs/macro_model.yaml) applied to the part
// of the CIM energy the macros and tiles spend in their own events (array, ADC, DAC). The rest
// (digital periphery, wires, SRAM, leakage) is outside the macro model and carries no band here.
struct EnergyBand {
  double median_error = 0;  // held-out median |error| of the component macro model
  double macro_pj = 0;      // the macros' part of total_pj
  double total_pj = 0;      // the CIM energy figure the band belongs to
  // The published macro the chip's macros are (macro.describes) and the model's TOPS/W error on
  // it at its published point: the band is the model's typical error, this its known one here.
  std::string described;
  std::optional<double> described_error;
  double half_width_pj() const { return median_error * macro_pj; }
};
// `cim`: the CIM ledger costed (any scale: only its component shares are used); `total_pj`: the
// figure printed; `median_error`: the stated uncertainty (default: the shipped constants').
EnergyBand macro_energy_band(const cmodel::energy::Breakdown& cim, double total_pj);
EnergyBand macro_energy_band(const cmodel::energy::Breakdown& cim, double total_pj, double median_error);
// ... and the described macro of `hw` (macro.describes), if any, with the model's error on it.
EnergyBand macro_energy_band(const cmodel::energy::Breakdown& cim, double total_pj, const HardwareSpec& hw);
nlohmann::json to_json(const EnergyBand& b);
// "+- 12.3% (the macros' 41.2% of it +- 29.9%, the macro model's held-out median error)"
std::string band_text(const EnergyBand& b);

}  // namespace kvcim::mapper
