// The hardware spec: one YAML file (configs/hw/*.yaml) parsed once into a validated value.
//
//   name / description
//   technology: ../tech/sram_digital_cim.yaml   # relative to the spec file
//   macro:        the CIM macro circuit and geometry -> cmodel::cim::MacroSpec
//   organization: macros (total), macros_per_tile, tiles_per_bank
//   kv:           tokens_per_tile, prob_bits, exp_frac, technology (optional, default: the chip's),
//                 kind (digital|analog), k_bits, v_bits, k_scale (token|channel), softmax
//                 (fixed|hardsigmoid|relu); analog: cell_bits, adc_bits, adc_range, adc_clip,
//                 out_adc_clip, cell_noise_sigma, read_noise_sigma, seed
//   precision:    weight_bits, activation_bits, kv_bits
//   buffer:       bytes
//   offchip:      kind (hbm|dram), capacity
//   digital:      units (parallel lanes of the digital periphery)
//   baseline:     mac (int8|fp16), offchip (hbm|dram), sram, sram_bank, mac_units, technology
//   comparison:   node_nm, voltage_v (optional; default: the macro table's node and supply):
//                 the one node both sides are priced at (cmodel/energy/scaling.hpp)
//
// Every field is checked (type, unit, range); an unknown key is an error suggesting the closest
// known key. The same parser reads an in-memory YAML/JSON tree (a Python dict as JSON text).
// docs/mapper.md lists every field.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/cmodel/energy/tech.hpp"

namespace YAML {
class Node;
}

namespace kvcim::mapper {

// Where a design point keeps weights and the KV cache: in CIM macros, or off-chip (computed by
// the digital engine). Attention-only CIM (AttAcc, GainCellAttention) keeps weights off-chip;
// weights-only CIM keeps the KV cache off-chip.
enum class Home : uint8_t { cim, offchip };

struct Organization {
  int64_t macros = 1024;      // CIM macros on the chip (weights and KV cache)
  // macros: auto - sized by the mapper for the model, the context and the sequences (whole
  // tiles; mapper/sizing.hpp); `macros` then holds the placeholder until place() sizes it.
  bool macros_auto = false;
  // Area budget of the CIM chip in mm^2 at the comparison node (chip.hpp's area model); caps an
  // auto-sized chip. 0 = no budget.
  double area_mm2 = 0;
  Home weights = Home::cim;
  Home kv = Home::cim;
  int macros_per_tile = 8;    // macros sharing a tile's buffer and periphery
  int tiles_per_bank = 16;
  int64_t tiles() const { return (macros + macros_per_tile - 1) / macros_per_tile; }
  int64_t banks() const { return (tiles() + tiles_per_bank - 1) / tiles_per_bank; }
};

// How K is scaled when quantised: one power-of-two scale per token and KV head (the tile's ek_t),
// or one per channel of a tile (folded into the query; KIVI's finding for K). V is per token.
enum class KScale : uint8_t { token, channel };

struct KvSpec {
  int tokens_per_tile = cmodel::cim::kTileTokens;
  int prob_bits = cmodel::cim::kTileProbBits;
  int exp_frac = cmodel::cim::kTileExpFrac;
  // kind digital: the bit-exact tile (and the RTL); analog: cim::AnalogTile with the fields below.
  cmodel::cim::TileKind kind = cmodel::cim::TileKind::digital;
  int k_bits = 8;  // default: precision.kv_bits
  int v_bits = 8;  // default: precision.kv_bits
  KScale k_scale = KScale::token;
  cmodel::cim::TileSoftmax softmax = cmodel::cim::TileSoftmax::fixed;
  // analog only (TileParams' meanings)
  int cell_bits = 8;
  int adc_bits = 8;
  cmodel::cim::AdcRange adc_range = cmodel::cim::AdcRange::full_scale;
  double adc_clip = 1.0, out_adc_clip = 1.0;
  double cell_noise_sigma = 0, read_noise_sigma = 0;
  double stuck_rate = 0;
  uint64_t seed = 1;
  // gain-cell retention (TileParams' meanings) and the time between two tokens of a sequence
  // (0: the placement's latency bound per token)
  double retention_ns = 0, refresh_ns = 0, token_interval_ns = 0;
  // conductance drift of non-volatile KV cells (TileParams' meanings; each token's age from the
  // token interval)
  double drift_nu = 0, drift_nu_sigma = 0, drift_t0_s = 1.0;
  bool drift_compensation = true;
};

struct Precision {
  int weight_bits = 8;
  int activation_bits = 8;
  int kv_bits = 8;
};

struct HardwareSpec {
  std::string name, description;
  std::string source;  // the file it was read from, or "<dict>"

  cmodel::cim::MacroSpec macro;  // weight macros; weight_bits/input_bits from `precision`
  Organization organization;
  KvSpec kv;
  Precision precision;
  int64_t buffer_bytes = 256 * 1024;
  cmodel::energy::OffchipKind offchip = cmodel::energy::OffchipKind::hbm;
  int64_t offchip_bytes = int64_t{16} << 30;
  int64_t digital_units = 64;
  cmodel::energy::BaselineConfig baseline;

  cmodel::energy::TechTable tech;           // costs the macros and the periphery
  cmodel::energy::TechTable kv_tech;        // costs the KV tiles (default: = tech)
  cmodel::energy::TechTable baseline_tech;  // costs the conventional baseline
  // The node every cost is carried to, CIM and baseline alike.
  cmodel::energy::NodePoint comparison;
  // One rule for idle silicon on both sides (`--idle gated|leaking`, docs/energy.md): storage
  // that holds no data (CIM macros the placement left empty, conventional SRAM beyond the weights
  // and KV it holds) leaks nothing when gated (the default) and at its table's rate when leaking.
  bool idle_leaks = false;
  int64_t idle_macros = 0;  // built macros holding no data (set by the placement)

  // The attention tile for a model with heads of `head_dim` (kv_bits, tokens, prob_bits from
  // this spec).
  cmodel::cim::TileParams tile(int head_dim) const;
  int64_t macro_cells() const { return int64_t{macro.rows} * macro.cols; }
  cmodel::energy::EventKind offchip_event() const {
    return offchip == cmodel::energy::OffchipKind::hbm ? cmodel::energy::EventKind::hbm_bit
                                                      : cmodel::energy::EventKind::dram_bit;
  }
  // Compares at `node_nm` from now on (supply: that of the macro table, else the KV or baseline
  // table, measured at that node; else the node's nominal supply). Throws kvcim::Error naming `where` outside the scaling model.
  void compare_at(double node_nm, const std::string& where);
  // Integer costs at `comparison` (the ADC row of the table chosen by macro.adc_bits for analog
  // macros; the baseline's SRAM at its bank size).
  cmodel::energy::Costs costs() const;
  cmodel::energy::Costs kv_costs() const;
  cmodel::energy::Costs baseline_costs() const;

  // Re-checks every field (after a program changed some, e.g. the design-space enumerator).
  // Throws kvcim::Error naming `source` and the field.
  void validate() const;
};

// Reads and validates a spec file; technology paths are relative to the file.
HardwareSpec load_hardware_spec(const std::string& path);
// The same from YAML or JSON text (e.g. json.dumps of a Python dict); relative technology paths
// are resolved against `base_dir` (default: the shipped configs/hw folder).
HardwareSpec hardware_spec_from_text(const std::string& text, const std::string& base_dir = "",
                                     const std::string& where = "<dict>");
HardwareSpec hardware_spec_from_node(const YAML::Node& root, const std::string& where,
                                     const std::string& base_dir);

// The same from a JSON document (a Python dict), read as the YAML tree it is, with no text between.
HardwareSpec hardware_spec_from_json(const nlohmann::json& j, const std::string& base_dir = "",
                                     const std::string& where = "<dict>");

// The inverse of the parser: the YAML schema of configs/hw/*.yaml with every field explicit and
// technology paths absolute, so that hardware_spec_from_json(hardware_spec_to_json(hw)) gives hw
// back. Composed of one serialiser per section (below), each the inverse of its part of the parser.
nlohmann::json hardware_spec_to_json(const HardwareSpec& hw);
nlohmann::json to_json(const cmodel::cim::MacroSpec& m);
nlohmann::json to_json(const Organization& o);
nlohmann::json to_json(const KvSpec& k);  // k_bits and v_bits always (the spec omits defaults)
nlohmann::json to_json(const Precision& p);
nlohmann::json to_json(const cmodel::energy::BaselineConfig& b);
nlohmann::json to_json(const cmodel::energy::NodePoint& n);

// The spec as `kvcim run --json` and `kvcim map --json` record it: where it came from, its tables'
// names, the figures derived from it (tiles, banks, slices per weight) and the
// whole spec as hardware_spec_to_json writes it under "full" (HardwareSpec.from_dict reads it back).
nlohmann::json hardware_report_json(const HardwareSpec& hw);

// configs/hw/sram_digital.yaml of the data root (kvcim::data_dir()).
std::string default_hardware_spec_path();
std::string shipped_config_dir();  // data_dir()/configs

}  // namespace kvcim::mapper
