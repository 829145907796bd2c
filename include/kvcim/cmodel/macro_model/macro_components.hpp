// The component model of one CIM macro operation (docs/calibration.md): each term is a physical
// quantity counted from the macro as its paper describes it (macro_desc.hpp) times one named
// constant, in the manner of CiMLoop/Accelergy component classes.
//
//   array     cells switched x c_cell(cell) x (node / 28 nm) x Va^2          (switched capacitance)
//   input     rows driven x cols x c_wl (c_in_time) x (node / 28 nm) x Va^2  (wordline swing)
//             + rows x cycles x k_dac x Va^2                                  (voltage DAC, C-2C)
//             + rows x cycles x bits per cycle x e_fa(node, V)               (pulse-width counter)
//   readout   conversions x max(k(kind) x 2^adc_bits x V^2, survey floor)      (SAR, clamped SAR, TDC)
//             or adder-tree full-adder bits x e_fa(node, V)                  (digital CIM)
//   digital   (readouts x output_bits + output register updates x output_bits x r_dff) x 0.5 x e_fa
//             (partial sums added combinationally; one accumulator register per output and cycle)
//   leakage   cells x p_leak(cell) x latency                                 (reported apart)
//
// Every energy is linear in its one constant, so the fit (scripts/fit_macro_model.py) is a linear
// least-squares problem on the features `kvcim macro --json` writes (energy / constant).
// Switched capacitances scale with the node linearly (cell pitch; wire capacitance per um is
// node-independent) and with the supply as V^2; converters are node-independent (the converter
// survey's front does not move with the node) and bounded below by it; logic (full-adder bits)
// follows Stillmaker & Baas from the 28 nm / 0.9 V reference, only within +-0.25 V of the node's
// nominal supply (refused outside it); below 7 nm it is held at 7 nm (no extrapolated gain).
#pragma once
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/cmodel/macro_model/macro_desc.hpp"

namespace kvcim::cmodel::macro_model {

// name, unit, plausible lo, hi, fitted, meaning
#define KVCIM_MACRO_CONSTANTS(X)                                                                          \
  X(c_cell_sram_ff, "fF", 0.3, 30, true,                                                                  \
    "capacitance switched per active SRAM cell per input cycle at 28 nm (cell, bitline share, local cap)") \
  X(c_cell_reram_ff, "fF", 1, 200, true,                                                                  \
    "ReRAM cell read energy / Va^2 per active cell per cycle at 28 nm (cell current x read time, bitline)")\
  X(c_cell_time_ff, "fF", 0.01, 30, true, "capacitance switched per time-delay cell per cycle at 28 nm")  \
  X(c_in_time_ff, "fF", 0.1, 20, true, "input load per time-delay cell crossed at 28 nm (its delay stage)")   \
  X(k_dac_ff, "fF", 10, 5000, true, "voltage/C-2C DAC: capacitance charged per row per cycle (any level width)")       \
  X(k_sar_ff, "fF", 0.5, 100, true, "SAR converter capacitance switched per conversion step (E / 2^N V^2)")\
  X(k_sar_clamped_ff, "fF", 0.5, 200, true,                                                              \
    "SAR converter with its bitline current clamp: capacitance per conversion step")                      \
  X(k_tdc_ff, "fF", 0.05, 100, true, "time-to-digital converter: capacitance per conversion step")        \
  X(e_fa_fj, "fJ", 0.5, 40, true, "one full-adder bit toggle at 28 nm, 0.9 V (logic)")                    \
  X(c_wl_ff, "fF", 0.05, 1, false, "wordline (input line) capacitance per SRAM/ReRAM cell crossed at 28 nm") \
  X(r_dff, "", 0.5, 3, false, "register bit clocked, relative to a full-adder bit")                       \
  X(r_and, "", 0.05, 1, false, "1-bit multiply (AND/NOR) gate, relative to a full-adder bit")             \
  X(fa_area_um2, "um^2", 1, 20, false, "full-adder bit with its share of wiring at 28 nm")                \
  X(p_leak_sram_pw, "pW", 1, 500, false, "SRAM cell leakage at 28 nm, nominal supply")                    \
  X(sram_cell_f2, "F^2", 100, 2000, false, "SRAM CIM cell area when the paper gives none")                \
  X(reram_cell_f2, "F^2", 10, 500, false, "ReRAM (1T1R/2T2R share) cell area when the paper gives none")  \
  X(time_cell_f2, "F^2", 50, 3000, false, "time-delay cell area when the paper gives none")

// The component constants, the `constants:` section of configs/macro_model.yaml, declared once
// as a spec field table from the list above (kvcim/spec_fields.hpp): each is written
// `name: {value: V, source: "..."}` with V inside its plausible range (the model's claim about
// physics: a fit that leaves it is refused) and the source of the value (the fit, or the
// assumption and its reasoning), which lands in name_source. The reader (load_constants, through
// read_fields), the JSON writer (constants_to_json), `kvcim macro --json`'s table of constants,
// Python's MacroConstants and the docs' field table walk it.
struct MacroConstants {
#define KVCIM_MC_MEMBER(name, unit, lo, hi, fitted, meaning) \
  double name = 0;                                          \
  std::string name##_source;
  KVCIM_MACRO_CONSTANTS(KVCIM_MC_MEMBER)
#undef KVCIM_MC_MEMBER
  // The constant of that key (0 for none).
  double get(std::string_view name) const;
  void set(std::string_view name, double value);
};

constexpr auto spec_fields(const MacroConstants*) {
  using Self = MacroConstants;
  return std::tuple{
#define KVCIM_MC_ROW(name, unit, lo, hi, fitted, meaning) \
  ::kvcim::range_field(#name, &Self::name, lo, hi, unit, meaning).needed().sourced(&Self::name##_source),
      KVCIM_MACRO_CONSTANTS(KVCIM_MC_ROW)
#undef KVCIM_MC_ROW
  };
}

// Whether scripts/fit_macro_model.py fits the constant (else it is a fixed assumption).
constexpr bool fitted_constant(std::string_view name) {
#define KVCIM_MC_FITTED(n, unit, lo, hi, fitted, meaning) \
  if (name == #n) return fitted;
  KVCIM_MACRO_CONSTANTS(KVCIM_MC_FITTED)
#undef KVCIM_MC_FITTED
  return false;
}

// The whole file: the constants and the model's stated uncertainty (the top-level rows).
struct Constants : MacroConstants {
  double held_out_median_error = 0;  // the model's stated uncertainty (|TOPS/W error|, held out)
  double held_out_worst_error = 0;
  std::string file;  // the file it was read from ("<dict>" for a dict)
};

constexpr auto spec_fields(const Constants*) {
  using Self = Constants;
  return std::tuple{
      ::kvcim::range_field("held_out_median_error", &Self::held_out_median_error, 0, 100, "",
                           "median |TOPS/W error| over the held-out macros (0.1: 10%): the model's stated uncertainty")
          .needed(),
      ::kvcim::range_field("held_out_worst_error", &Self::held_out_worst_error, 0, 100, "",
                           "largest |TOPS/W error| over the held-out macros")
          .needed(),
  };
}

// Reads the constants (configs/macro_model.yaml): every constant with `value` inside its
// plausible range and a `source`, and the held-out errors; kvcim::Error
// "<file>:<line>: constants.<name>.value = <value>: <expected>" otherwise.
Constants load_constants(const std::string& path);
Constants constants_from_text(const std::string& text, const std::string& where);
// The same from the file's tree as JSON (a Python dict); `where` names it in errors.
Constants constants_from_json(const nlohmann::json& j, const std::string& where = "<dict>");
// The file as its tree (the held-out errors, constants: {name: {value, source}}): the reader's inverse.
nlohmann::json constants_to_json(const Constants& k);
// The shipped constants, from data_dir()/configs/macro_model.yaml (read once).
const Constants& shipped_constants();

// The supply and input precision an operation is priced at (default: the spec's).
struct OperatingPoint {
  double vdd_v = 0, array_vdd_v = 0;
  int input_bits = 0;
};
OperatingPoint published_point(const MacroDesc& d);
// The spec at another operating point; Error naming `where` when the point is outside the model's
// range (logic supply beyond +-0.25 V of the node's nominal, input bits beyond 16).
MacroDesc at_point(const MacroDesc& d, const OperatingPoint& p, const std::string& where);

struct Component {
  std::string name;
  int category = 0;       // index into kCategories
  std::string constant;   // the constant it is linear in ("" when a floor or nothing fitted sets it)
  double energy_pj = 0;
  double feature = 0;     // energy_pj / constant (pJ per unit of the constant), for the fit
  double area_mm2 = 0;
  std::string law;        // how it is counted, in words, with the counts
};

struct MacroResult {
  std::vector<Component> parts;
  double macs = 0, outputs = 0, input_cycles = 0, conversions = 0, cycles = 0;
  double latency_ns = 0, energy_pj = 0, compared_energy_pj = 0, leakage_pj = 0, area_mm2 = 0;
  double fj_per_mac = 0, tops_per_w = 0, gops = 0, tops_per_mm2 = 0;
  double conversion_rate_mhz = 0;  // per converter
  double category_pj(int c) const;
};

// The parts every pricing shares (evaluate here, event_prices.hpp):
// the converter survey's front (pJ per conversion of `bits` at `fs_hz`: Schreier's, bounded below
// by the best Walden figure of merit);
double converter_floor_pj(double bits, double fs_hz);
// the full-adder bits of a tree summing `inputs` values of `bits` bits;
double adder_tree_fa_bits(double inputs, double bits);
// one conversion of `bits` by d's converter kind at d.vdd_v, never below the front (pJ);
double converter_pj(const MacroDesc& d, double bits, double fs_hz, const Constants& k);
// e_fa's factor at node_nm / vdd_v from 28 nm / 0.9 V (Stillmaker & Baas; held at 7 nm below it).
double logic_factor(double node_nm, double vdd_v);
// the linear size of d's cells (their capacitance, and a wordline's across them) relative to 28 nm:
// an SRAM cell by the published per-node SRAM density (configs/memory/sram_nodes.yaml, the square
// root of its macro area per bit), since SRAM stopped following the node's name below 16 nm; a
// ReRAM or time-delay cell, for which no per-node table exists, as node / 28 nm.
double cell_scale(const MacroDesc& d);

// Prices one operation: every row x every output for one input vector. `excluded` (bit i:
// kCategories[i]) names categories left out of compared_energy_pj and TOPS/W (what the paper's
// figure leaves out); energy_pj has them all. Leakage is never in energy_pj.
MacroResult evaluate(const MacroDesc& d, const Constants& k, unsigned excluded = 0);

}  // namespace kvcim::cmodel::macro_model
