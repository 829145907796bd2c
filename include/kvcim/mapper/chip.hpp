// What a whole chip pays beyond its operations: area, wires, leakage, clock and control.
//
// Area: macros (rows x cols cells of cell_bits, at the CIM table's bit-cell area), one ADC per
// adc_share columns of an analog macro, the buffer and the SRAM banks (at the base table's
// bit-cell area), digital lanes, and the logic of every KV attention tile the placement lays out
// (its softmax unit and control, in NAND2 equivalents from the RTL's synthesis, at the KV table's
// nand2_um2); each carried to the comparison node (area_factor).
//
// Floorplan (a documented simplification, docs/energy.md): the macros sit on a square grid at a
// pitch of sqrt(macro area); the buffer and the digital periphery sit at its centre and the
// placement fills the macros around it, so data between the centre and a macro travel half the
// side of the occupied macros' square (`edge_um`) on average. A matrix's blocks are neighbours in
// a row (column tiles) and a column (row tiles). The conventional engine's MAC array sits at the
// centre of its SRAM, filled around it: its data travel half the side of the occupied SRAM.
// Unused macros and SRAM still leak (nothing is power-gated).
//
// Per token, both sides charge wire_bit_um (bits x micrometres), and for the time the token takes
// (its latency bound): leak_kib_ns for every KiB of cells (macros, buffer, SRAM), leak_lane_ns for
// every digital lane, and lane_cycle for every digital operation (clock and sequencing; an exp is
// four cycles). These are charged to Op::chip (static, control) or to the op that moved the bits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvcim/cmodel/energy/ledger.hpp"
#include "kvcim/mapper/placement.hpp"

namespace kvcim::mapper {

struct ChipArea {
  double macros_mm2 = 0, adcs_mm2 = 0, buffer_mm2 = 0, sram_mm2 = 0, lanes_mm2 = 0;
  double tile_logic_mm2 = 0;  // the KV attention tiles' softmax units and control
  double total_mm2() const {
    return macros_mm2 + adcs_mm2 + buffer_mm2 + sram_mm2 + lanes_mm2 + tile_logic_mm2;
  }
};

// The logic of one attention tile beside its K and V arrays (cim_attention_tile's softmax_unit
// and its control, the "tile glue"), in NAND2 equivalents: kTileLogicFixedNand2 +
// kTileLogicPerTokenBitNand2 x tokens x prob_bits. A least-squares fit to the Yosys synthesis of
// every RTL configuration the build makes (testbench/synth; head_dim and kv_bits move it by under
// 1%: the arrays hold those); CTest rtl.synth.area_model fits again from the synthesis reports
// and fails when these constants leave the fit by more than 2% or the fit misses a configuration
// by more than 8%. The K and V arrays are the macros' cells (bit_cell_um2), not synthesised gates.
inline constexpr double kTileLogicFixedNand2 = 26005;
inline constexpr double kTileLogicPerTokenBitNand2 = 75.1;
double tile_logic_nand2(const KvSpec& kv);

// The CIM chip: every macro of organization.macros, the buffer, digital.units lanes and the logic
// of kv_tiles attention tiles (the placement's KvLayout::tiles; 0 leaves it out: the chip's
// hardware alone, as organization.area_mm2 budgets it).
ChipArea cim_area(const HardwareSpec& hw, int64_t kv_tiles = 0);
// The conventional engine: its SRAM, the buffer, baseline.mac_units lanes.
ChipArea baseline_area(const HardwareSpec& hw);

// Floorplan distances in micrometres.
struct Floorplan {
  double macro_pitch_um = 0;  // sqrt(one macro's area, its ADCs included)
  double edge_um = 0;         // centre to a macro, on average: half the side of the macro grid
  double sram_edge_um = 0;    // conventional: MAC array to an SRAM bank, half the SRAM side
};
// occupied_macros: macros holding weights or reserved for the KV cache; occupied_sram_bytes: the
// conventional SRAM holding data (at most baseline.sram).
Floorplan floorplan(const HardwareSpec& hw, int64_t occupied_macros, int64_t occupied_sram_bytes);

// Wire traffic of one matrix-vector product on chip (per token):
//   inputs  n_in x activation_bits, over edge + (col_tiles - 1) x pitch (to the matrix, then
//           along its row of column tiles);
//   partial sums  n_out x row_tiles x 32 bits, over edge + (row_tiles - 1) x pitch / 2 (down the
//           column of row tiles, back to the adder at the centre);
// scaled by the fraction of the matrix's blocks on chip. Rounded to whole bit-micrometres.
int64_t matvec_wire_bit_um(const MatrixPlacement& m, const HardwareSpec& hw, const Floorplan& f);
// KV attention on chip (per layer and token): the new K and V (2 x kv_dim x kv_bits) and every
// query head's q (head_dim x activation_bits) to the tiles, every query head's output
// (head_dim x 32 per tile answering) back, each over edge.
int64_t attention_wire_bit_um(const cmodel::Config& c, const HardwareSpec& hw, const Floorplan& f,
                              int64_t tiles_per_query);

// Digital operations of a ledger in lane cycles (an exp_op is four).
int64_t digital_lane_cycles(const cmodel::energy::Ledger& l);
// Adds `lane_cycles` lane_cycle events and leakage over `latency_ns` of `kib` KiB of cells,
// `lanes` lanes and `links` idle die-to-die links to (kModelLevel, Op::chip).
void charge_static_and_control(cmodel::energy::Ledger& l, int64_t lane_cycles, double kib,
                               int64_t lanes, double latency_ns, int64_t links = 0);
// The die-to-die links of a chip of `dies` dies (a chain) that draw idle power: all of them under
// --idle leaking, none when gated (they sleep between crossings).
int64_t leaking_links(const HardwareSpec& hw, size_t dies);

// KiB of cells the CIM chip keeps powered: every macro holding data and the buffer (every built
// macro when idle silicon leaks, hw.idle_leaks).
double cim_kib(const HardwareSpec& hw);
// The conventional engine's SRAM that leaks: all of it when idle silicon leaks
// (hw.idle_leaks), else what holds data (`data_bytes`: baseline_data_bytes), and the buffer.
double baseline_kib(const HardwareSpec& hw, int64_t data_bytes);
// What the conventional SRAM would hold: every weight and the KV of `context` tokens of every
// sequence, at the engine's width.
int64_t baseline_data_bytes(const cmodel::Config& c, const HardwareSpec& hw, int64_t context, int64_t sequences);

// The conventional engine's whole token: cmodel::energy::baseline_ledger plus the wires from its
// SRAM banks (every SRAM bit read travels sram_edge) and its static and control energy over its
// latency bound. What `kvcim run`, `kvcim map` and Python compare CIM against.
cmodel::energy::Ledger conventional_ledger(const ModelShape& shape, const HardwareSpec& hw,
                                           int64_t position);
// The same without the leakage (which depends on how long the token takes): the baseline's events
// for one of `sequences` sequences decoding together (their KV caches share the SRAM), its wires,
// and its clock and control. mapper/batch.hpp builds a step of a batch from it.
cmodel::energy::Ledger conventional_dynamic_ledger(const ModelShape& shape, const HardwareSpec& hw,
                                                   int64_t position, int64_t sequences);

// The same spec with the conventional engine's SRAM sized so that its chip has the CIM chip's
// area with kv_tiles attention tiles (iso-area comparison; at least no SRAM when the lanes and
// buffer alone are larger).
HardwareSpec iso_area_baseline(const HardwareSpec& hw, int64_t kv_tiles = 0);

// The conditions under which the energy comparison holds, for reports: the comparison node, the
// node and supply of every table the values come from with the factor that carried them, the
// baseline's SRAM and bank size, the terms included, and both chips' areas. Typed, so that a
// report's JSON and its terminal lines are both written from it; the context (positions or
// tokens averaged over) is the report's to add.
struct TableScaling {  // one source file of a technology table, carried to the comparison node
  std::string file;
  cmodel::energy::NodePoint node;
  double energy_factor = 1, delay_factor = 1, area_factor = 1;
};
struct TableConditions {
  std::string role;  // cim, kv (when the KV tiles have their own table), baseline
  std::string name;
  std::vector<TableScaling> sources;
};
struct EnergyConditions {
  cmodel::energy::NodePoint at;  // both sides compared here
  bool extrapolated = false;     // below 7 nm: the scaling is an extrapolation
  std::string scaling;           // what the scaling model is and leaves alone
  std::vector<TableConditions> tables;
  cmodel::energy::BaselineConfig baseline;
  int64_t iso_area_sram_bytes = 0;  // the conventional chip's SRAM at the CIM chip's area
  std::vector<std::string> included;  // the energy terms both sides count
  double area_cim_mm2 = 0, area_baseline_mm2 = 0;
  int64_t kv_tiles = 0;                // attention tiles whose logic area_cim_mm2 holds
  double tile_logic_nand2 = 0;         // per tile (tile_logic_nand2)
  double area_tile_logic_mm2 = 0;      // all of them, part of area_cim_mm2
  std::string idle_rule;               // the conditions line of the idle-silicon rule
  std::string sram_access;             // the conditions line of the SRAM access energy at `at`
};
// kv_tiles: the placement's attention tiles (KvLayout::tiles); 0 for the hardware alone.
EnergyConditions energy_conditions(const HardwareSpec& hw, int64_t kv_tiles = 0);
nlohmann::json to_json(const EnergyConditions& c);
// Back from a report's JSON (the HTML page of a saved report); throws kvcim::Error naming a
// missing or mistyped key.
EnergyConditions energy_conditions_from_json(const nlohmann::json& j);
// A few lines of text for terminals (no trailing newlines).
std::vector<std::string> conditions_lines(const EnergyConditions& c);

}  // namespace kvcim::mapper
