// A CIM macro written as its paper describes it (configs/macros/*.yaml): node, supply, geometry,
// cell, input encoding, how weight bits are merged, how many products one conversion sums, the
// converter, the clock, and the published figures with their own citation.
//
// The `macro:` and `published:` sections are declared once, as spec field tables
// (kvcim/spec_fields.hpp): the parser (macro_desc.cpp, through read_fields), the JSON writer
// (macro_file_to_json, the parser's inverse), Python's MacroDesc and Published, the stub and the
// docs' field tables all walk them. Adding a field is one member and one row.
#pragma once
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <tuple>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/spec_fields.hpp"

namespace YAML {
class Node;
}

namespace kvcim::cmodel::macro_model {

// Cell technologies: each has its own switched-capacitance constant (macro_components.hpp).
//   sram: SRAM cell driving a bitline or a local capacitor (charge or current domain);
//   reram: resistive cell read by its DC current; time_delay: a cell read in the time domain
//   without DC current (a delay-chain cell, or one discharging a line into a voltage-to-time converter).
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

// "Not given": the parser derives the field from others (its row's by_default says from what).
inline constexpr double kDerived = -1.0;
// A required field's value before a spec gives it.
inline constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();

// The model computes in doubles; the fields that count things hold whole numbers (whole_number():
// read, checked and documented as integers).
struct MacroDesc {
  double node_nm = kRequired, vdd_v = kRequired, array_vdd_v = kDerived;
  double rows = kRequired, cols = kRequired;
  Cell cell = Cell::sram;
  double cell_bits = 1, cells_per_weight = kDerived, cell_area_f2 = kDerived;
  Encoding input_encoding = Encoding::bit_serial;
  double input_bits = kRequired, input_bits_per_cycle = 1, weight_bits = kRequired;
  Merge weight_merge = Merge::analog;
  double products_per_conversion = kDerived;
  Readout readout = Readout::sar;
  double adc_bits = 0, readout_count = kRequired, output_bits = kRequired, clock_mhz = kRequired;
  double input_density = 0.5, weight_density = 0.5;

  Cell cell_kind() const { return cell; }
  Encoding encoding() const { return input_encoding; }
  Merge merge() const { return weight_merge; }
  Readout readout_kind() const { return readout; }
};

// The `macro:` section of a macro file, declared once (kvcim/spec_fields.hpp): the parser
// (macro_desc.cpp), the JSON writer, Python's MacroDesc, its stub and the docs' field tables
// (docs/calibration.md, docs/hardware_fields.md) walk it. finish_desc holds what depends on
// other fields (derived defaults, kinds that fit together, the node's logic supply).
constexpr auto spec_fields(const MacroDesc*) {
  using Self = MacroDesc;
  using ::kvcim::choice_field, ::kvcim::range_field;
  using Names = std::span<const std::string_view>;
  return std::tuple{
      range_field("node_nm", &Self::node_nm, 3, 180, "nm", "technology node of the silicon").needed(),
      range_field("vdd_v", &Self::vdd_v, 0.3, 1.8, "V", "supply of the measurement (logic, converters)").needed(),
      range_field("array_vdd_v", &Self::array_vdd_v, 0.1, 1.8, "V", "supply of the array and input drivers")
          .by_default("vdd_v"),
      range_field("rows", &Self::rows, 1, 65536, "", "rows of cells that hold one column's weights").whole_number().needed(),
      range_field("cols", &Self::cols, 1, 65536, "", "physical cell columns").whole_number().needed(),
      choice_field("cell", &Self::cell, Names(kCellChoices), "cell technology").needed(),
      range_field("cell_bits", &Self::cell_bits, 1, 4, "b", "bits stored per cell (multi-level cells > 1)").whole_number(),
      range_field("cells_per_weight", &Self::cells_per_weight, 1, 64, "",
                  "cells one weight occupies (x2 for a differential pair)")
          .by_default("ceil(weight_bits / cell_bits)"),
      // kDerived until priced: the file (and so a dict) holds it only when the paper gives it
      range_field("cell_area_f2", &Self::cell_area_f2, 4, 5000, "F^2", "cell area in F^2 as published")
          .by_default("by cell (macro_components)").sparse().always_reported(),
      choice_field("input_encoding", &Self::input_encoding, Names(kEncodingChoices), "how an input reaches the rows").needed(),
      range_field("input_bits", &Self::input_bits, 1, 16, "b", "input precision of the operation").whole_number().needed(),
      range_field("input_bits_per_cycle", &Self::input_bits_per_cycle, 1, 16, "b", "input bits applied per cycle").whole_number(),
      range_field("weight_bits", &Self::weight_bits, 1, 16, "b", "weight precision of the operation").whole_number().needed(),
      choice_field("weight_merge", &Self::weight_merge, Names(kMergeChoices),
                   "analog: bits merged before the conversion; digital: one conversion per bit slice, shift-added").needed(),
      // at most rows x cells_per_weight: what the derived default can reach
      range_field("products_per_conversion", &Self::products_per_conversion, 1, 65536.0 * 64, "",
                  "cell products summed into one conversion or adder-tree result")
          .by_default("rows x cells_per_weight when merged in analog, rows otherwise"),
      choice_field("readout", &Self::readout, Names(kReadoutChoices), "the converter (or adder tree) of a column").needed(),
      range_field("adc_bits", &Self::adc_bits, 0, 16, "b", "converter resolution (0 for adder_tree)").whole_number(),
      range_field("readout_count", &Self::readout_count, 1, 1e6, "", "converters (or adder trees) working in parallel")
          .whole_number().needed(),
      range_field("output_bits", &Self::output_bits, 1, 48, "b", "accumulated output width").whole_number().needed(),
      range_field("clock_mhz", &Self::clock_mhz, 0.01, 1e5, "MHz", "rate of conversion slots (one input cycle per readout)").needed(),
      range_field("input_density", &Self::input_density, 0, 1, "", "fraction of input bits that are 1 in the measurement"),
      range_field("weight_density", &Self::weight_density, 0, 1, "", "fraction of weight bits that are 1 in the measurement"),
  };
}

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

// The published figures' scalar fields; `breakdown` and `excludes` (a mapping and a list of
// categories) are read by hand beside them.
constexpr auto spec_fields(const Published*) {
  using Self = Published;
  using ::kvcim::choice_field, ::kvcim::optional_field, ::kvcim::range_field, ::kvcim::text_field;
  return std::tuple{
      text_field("source", &Self::source, "citation: authors or venue, year, and where the figure is read").needed(),
      range_field("tops_per_w", &Self::tops_per_w, 1e-6, 1e7, "TOPS/W", "published energy efficiency of the operation")
          .needed(),
      optional_field("tops_per_mm2", &Self::tops_per_mm2, 1e-9, 1e7, "TOPS/mm^2", "published area efficiency"),
      optional_field("gops", &Self::gops, 1e-9, 1e9, "GOPS", "published throughput"),
      optional_field("area_mm2", &Self::area_mm2, 1e-9, 1e6, "mm^2", "published macro area"),
      choice_field("role", &Self::role, std::span<const std::string_view>(kRoleChoices),
                   "fit: the constants are fitted on it; held_out: it scores the fit")
          .needed(),
      text_field("conditions", &Self::precision_note, "what the paper states about the measurement conditions").sparse(),
  };
}

struct MacroFile {
  std::string name, source_file, description;
  MacroDesc desc;
  Published published;
};

// Reads a macro spec; kvcim::Error "<file>:<line>: <field> = <value>: <expected>" on bad input.
MacroFile load_macro_file(const std::string& path);
MacroFile macro_file_from_text(const std::string& text, const std::string& where);
// The same from the file's tree as JSON (a Python dict); `where` names it in errors.
MacroFile macro_file_from_json(const nlohmann::json& j, const std::string& where = "<dict>");
// The file as its tree (name, description, macro, published): the parser's inverse, derived
// fields written at their values.
nlohmann::json macro_file_to_json(const MacroFile& m);
// The published section as the file writes it (breakdown as its mapping of categories).
nlohmann::json published_to_json(const Published& p);
// Checks the desc (ranges, kinds that fit together) and fills derived fields; `where` names it.
void finish_desc(MacroDesc& d, const std::string& where);
// Logic is carried by Stillmaker & Baas only within +-0.25 V of the node's nominal supply: Error
// naming `where` and vdd_v outside it (macro_components.cpp).
void check_logic_supply(double node_nm, double vdd_v, const std::string& where);

// The macro section as `kvcim macro --json` records it: the file's fields, and cell_area_f2 also
// when the cell's default area is used (-1).
nlohmann::json desc_to_json(const MacroDesc& d);
// A number for messages and laws: printf %.*g.
std::string show_number(double v, int digits = 6);

}  // namespace kvcim::cmodel::macro_model
