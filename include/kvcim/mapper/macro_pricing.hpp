// `kvcim macro`: one published CIM macro (configs/macros/*.yaml, cmodel/macro_model/macro_desc.hpp)
// priced by the component model (macro_components.hpp) at its published operating point or at
// others (supply, input bits), each figure beside the paper's and its error, with the model's
// stated uncertainty (the held-out median |error| of docs/calibration.md).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/cmodel/macro_model/macro_components.hpp"

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

}  // namespace kvcim::mapper
