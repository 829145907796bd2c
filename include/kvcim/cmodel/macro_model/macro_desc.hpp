// A CIM macro written as its paper describes it (configs/macros/*.yaml): node, supply, geometry,
// cell, input encoding, how weight bits are merged, how many products one conversion sums, the
// converter, the clock, and the published figures with their own citation.
//
// The fields are declared once, in KVCIM_MACRO_DESC_FIELDS: (kind, member, unit, lo, hi, default,
// doc). The struct's members, the parser (macro_desc.cpp), the JSON writer and the documentation
// table all walk that one list. kind: N = number (double), C = choice (the index into the
// choice list named by the member: kCellChoices for `cell`, ...). A default of kRequired means the
// spec must give the field.
#pragma once
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace YAML {
class Node;
}

namespace kvcim::cmodel::macro_model {

inline constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();
// "Not given": the parser derives the field from others (stated in its doc).
inline constexpr double kDerived = -1.0;

// Cell technologies: each has its own switched-capacitance constant (macro_components.hpp).
//   sram: SRAM cell driving a bitline or a local capacitor (charge or current domain);
//   reram: resistive cell read by current; time_delay: a cell that sets a delay in a chain.
inline constexpr std::array<std::string_view, 3> kCellChoices = {"sram", "reram", "time_delay"};
enum class Cell { sram, reram, time_delay };
// How an input reaches the rows: 1-bit rows per cycle, a pulse width, a voltage DAC, a C-2C
// ladder, or digital (a digital CIM's gates read the input bits).
inline constexpr std::array<std::string_view, 5> kEncodingChoices = {"bit_serial", "pulse_width", "voltage_dac",
                                                                     "c2c", "digital"};
enum class Encoding { bit_serial, pulse_width, voltage_dac, c2c, digital };
// How the bits of one weight are recombined: in analog before the conversion (binary-weighted
// caps, C-2C, multi-level cells, differential pairs: one conversion per output), or one
// conversion per bit slice, shift-added digitally.
inline constexpr std::array<std::string_view, 2> kMergeChoices = {"analog", "digital"};
enum class Merge { analog, digital };
// The readout: a SAR ADC fed by charge or voltage, a SAR ADC behind a current clamp (resistive
// arrays read by current), a time-to-digital converter, or a digital adder tree per column.
inline constexpr std::array<std::string_view, 4> kReadoutChoices = {"sar", "sar_clamped", "tdc", "adder_tree"};
enum class Readout { sar, sar_clamped, tdc, adder_tree };

// kind, member, unit, lo, hi, default, doc
#define KVCIM_MACRO_DESC_FIELDS(X)                                                                             \
  X(N, node_nm, "nm", 3, 180, kRequired, "technology node of the silicon")                                     \
  X(N, vdd_v, "V", 0.3, 1.8, kRequired, "supply of the measurement (logic, converters)")                       \
  X(N, array_vdd_v, "V", 0.1, 1.8, kDerived, "supply of the array and input drivers (default vdd_v)")          \
  X(N, rows, "", 1, 65536, kRequired, "rows of cells that hold one column's weights")                          \
  X(N, cols, "", 1, 65536, kRequired, "physical cell columns")                                                 \
  X(C, cell, "", 0, 0, kRequired, "cell technology: sram | reram | time_delay")                               \
  X(N, cell_bits, "b", 1, 4, 1, "bits stored per cell (multi-level cells > 1)")                                \
  X(N, cells_per_weight, "", 1, 64, kDerived,                                                                  \
    "cells one weight occupies (default ceil(weight_bits / cell_bits); x2 for a differential pair)")           \
  X(N, cell_area_f2, "F^2", 4, 5000, kDerived, "cell area in F^2 as published (default by cell: macro_components)") \
  X(C, input_encoding, "", 0, 0, kRequired, "bit_serial | pulse_width | voltage_dac | c2c | digital")          \
  X(N, input_bits, "b", 1, 16, kRequired, "input precision of the operation")                                  \
  X(N, input_bits_per_cycle, "b", 1, 16, 1, "input bits applied per cycle")                                     \
  X(N, weight_bits, "b", 1, 16, kRequired, "weight precision of the operation")                                \
  X(C, weight_merge, "", 0, 0, kRequired, "analog (bits merged before conversion) | digital (shift-add)")     \
  X(N, products_per_conversion, "", 1, 1e6, kDerived,                                                          \
    "cell products summed into one conversion or adder-tree result (default rows x cells_per_weight when "     \
    "merged in analog, rows otherwise)")                                                                       \
  X(C, readout, "", 0, 0, kRequired, "sar | sar_clamped | tdc | adder_tree")                                   \
  X(N, adc_bits, "b", 1, 16, 0, "converter resolution (0 for adder_tree)")                                      \
  X(N, readout_count, "", 1, 1e6, kRequired, "converters (or adder trees) working in parallel")               \
  X(N, output_bits, "b", 1, 48, kRequired, "accumulated output width")                                          \
  X(N, clock_mhz, "MHz", 0.01, 1e5, kRequired, "rate of conversion slots (one input cycle per readout)")        \
  X(N, input_density, "", 0, 1, 0.5, "fraction of input bits that are 1 in the measurement")                   \
  X(N, weight_density, "", 0, 1, 0.5, "fraction of weight bits that are 1 in the measurement")

enum class FieldKind { N, C };
struct FieldRow {
  FieldKind kind;
  std::string_view key, unit;
  double lo, hi, fallback;
  std::string_view doc;
};

struct MacroDesc {
#define KVCIM_MD_MEMBER(kind, name, unit, lo, hi, def, doc) double name = def;
  KVCIM_MACRO_DESC_FIELDS(KVCIM_MD_MEMBER)
#undef KVCIM_MD_MEMBER
  Cell cell_kind() const { return static_cast<Cell>(cell); }
  Encoding encoding() const { return static_cast<Encoding>(input_encoding); }
  Merge merge() const { return static_cast<Merge>(weight_merge); }
  Readout readout_kind() const { return static_cast<Readout>(readout); }
};

inline constexpr FieldRow kMacroDescFields[] = {
#define KVCIM_MD_ROW(kind, name, unit, lo, hi, def, doc) {FieldKind::kind, #name, unit, lo, hi, def, doc},
    KVCIM_MACRO_DESC_FIELDS(KVCIM_MD_ROW)
#undef KVCIM_MD_ROW
};

// Published figures of the paper: TOPS/W is required, the rest where the paper gives them. A
// breakdown is the paper's shares of the macro energy by category (array, input, readout,
// digital), each a fraction; a key joins the categories a paper reports as one with '+'
// ("array+input": 0.84). `excludes` names the categories the published TOPS/W leaves out.
enum class Role { fit, held_out };
inline constexpr std::array<std::string_view, 2> kRoleChoices = {"fit", "held_out"};
inline constexpr std::array<std::string_view, 4> kCategories = {"array", "input", "readout", "digital"};
struct Published {
  std::string source;               // citation (paper, and where the number was read)
  double tops_per_w = 0;
  std::optional<double> tops_per_mm2, gops, area_mm2;
  struct Share {
    unsigned mask;  // bit i: kCategories[i]
    double share;
  };
  std::vector<Share> breakdown;                                       // shares of the energy
  std::array<bool, kCategories.size()> excluded{};                    // left out of tops_per_w
  Role role = Role::held_out;
  std::string precision_note;  // what the paper states about the measurement conditions
};

struct MacroFile {
  std::string name, source_file, description;
  MacroDesc desc;
  Published published;
};

// Reads a macro spec; kvcim::Error "<file>:<line>: <field> = <value>: <expected>" on bad input.
MacroFile load_macro_file(const std::string& path);
MacroFile macro_file_from_text(const std::string& text, const std::string& where);
// Checks the desc (ranges, kinds that fit together) and fills derived fields; `where` names it.
void finish_desc(MacroDesc& d, const std::string& where);
// Logic is carried by Stillmaker & Baas only within +-0.25 V of the node's nominal supply: Error
// naming `where` and vdd_v outside it (macro_components.cpp).
void check_logic_supply(double node_nm, double vdd_v, const std::string& where);

nlohmann::json desc_to_json(const MacroDesc& d);
// A number for messages and laws: printf %.*g.
std::string show_number(double v, int digits = 6);
// The field table as Markdown (docs/calibration.md's spec reference).
std::string desc_fields_markdown();

}  // namespace kvcim::cmodel::macro_model
