// The hardware spec: one YAML file (configs/hw/*.yaml) parsed once into a validated value.
//
//   name / description
//   technology: ../tech/sram_digital_cim.yaml   # relative to the spec file (every path is)
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
//   die:          reticle_mm2, wafer_scale, wafer_mm2 (optional): the largest die (package.hpp)
//   link:         energy_pj_per_bit, bandwidth_gb_s, latency_ns, idle_power_mw (optional; when given, energy
//                 and bandwidth are required): one die-to-die link
//
// Every field is checked (type, unit, range) from its section's field table (spec_fields below,
// kvcim/spec_fields.hpp); an unknown key is an error suggesting the closest known key. The same
// parser reads an in-memory YAML/JSON tree (a Python dict). docs/hardware_fields.md lists every
// field (made from the tables).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/cmodel/cim/macro.hpp"
#include "kvcim/cmodel/energy/baseline.hpp"
#include "kvcim/cmodel/energy/tech.hpp"
#include "kvcim/mapper/package.hpp"
#include "kvcim/cmodel/macro_model/macro_desc.hpp"
#include "kvcim/spec_fields.hpp"

namespace YAML {
class Node;
}

namespace kvcim::mapper {

// Where a design point keeps weights and the KV cache: in CIM macros, or off-chip (computed by
// the digital engine). Attention-only CIM (AttAcc, GainCellAttention) keeps weights off-chip;
// weights-only CIM keeps the KV cache off-chip.
enum class Home : uint8_t { cim, offchip };

inline constexpr std::string_view kHomeNames[] = {"cim", "offchip"};

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

// The spec's sections described once (kvcim/spec_fields.hpp): parser, JSON, Python, docs.
constexpr auto spec_fields(const Organization*) {
  using Self = Organization;
  using Names = std::span<const std::string_view>;
  return std::tuple{
      ::kvcim::range_field("macros", &Self::macros, 1, 4294967296.0, "", "CIM macros on the chip, or `auto`: sized for the model")
          .needed(),
      ::kvcim::flag_field("macros_auto", &Self::macros_auto, "macros: auto (sized by the mapper)").derived(),
      ::kvcim::range_field("area_mm2", &Self::area_mm2, 0.0, 1e9, "mm2", "area budget at the comparison node; 0 = none").sparse(),
      ::kvcim::choice_field("weights", &Self::weights, Names(kHomeNames), "where the weights live").sparse().always_reported(),
      ::kvcim::choice_field("kv", &Self::kv, Names(kHomeNames), "where the KV cache lives").sparse().always_reported(),
      ::kvcim::range_field("macros_per_tile", &Self::macros_per_tile, 1, 1048576, "", "macros sharing a tile's buffer and periphery"),
      ::kvcim::range_field("tiles_per_bank", &Self::tiles_per_bank, 1, 1048576, "", "tiles per bank"),
  };
}

// How K is scaled when quantised: one power-of-two scale per token and KV head (the tile's ek_t),
// or one per channel of a tile (folded into the query; KIVI's finding for K). V is per token.
enum class KScale : uint8_t { token, channel };
inline constexpr std::string_view kKScaleNames[] = {"token", "channel"};

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
  std::string technology;  // the table pricing the tiles (default: the chip's; HardwareSpec::kv_tech)
  // analog only: TileParams' fields (HardwareSpec::tile copies them), and the time between two
  // tokens of a sequence (0: the placement's latency bound per token)
  KVCIM_ANALOG_TILE_FIELDS(KVCIM_SPEC_MEMBER_NUM, KVCIM_SPEC_MEMBER_FLAG, KVCIM_SPEC_MEMBER_CHOICE)
  double token_interval_ns = 0;
};

constexpr int spec_kind(const KvSpec& k) { return static_cast<int>(k.kind); }
constexpr auto spec_fields(const KvSpec*) {
  using Self = KvSpec;
  using Names = std::span<const std::string_view>;
  using namespace cmodel::cim;
  constexpr unsigned analog_only = ::kvcim::kind_bit(static_cast<int>(TileKind::analog));
  return std::tuple{
      ::kvcim::range_field("tokens_per_tile", &Self::tokens_per_tile, 1, 4096, "tokens", "tokens one attention tile holds"),
      ::kvcim::range_field("prob_bits", &Self::prob_bits, 1, 16, "bits", "unsigned probability width P"),
      ::kvcim::range_field("exp_frac", &Self::exp_frac, 0, 12, "bits", "fractional bits of the base-2 logits (2^F table entries)"),
      ::kvcim::choice_field("kind", &Self::kind, Names(kTileKindNames),
                            "digital: the bit-exact tile (and the RTL); analog: multi-level cells and ADCs"),
      ::kvcim::range_field("k_bits", &Self::k_bits, 2, 8, "bits", "width of the stored K").by_default("precision.kv_bits"),
      ::kvcim::range_field("v_bits", &Self::v_bits, 2, 8, "bits", "width of the stored V").by_default("precision.kv_bits"),
      ::kvcim::choice_field("k_scale", &Self::k_scale, Names(kKScaleNames),
                            "K's power-of-two scale per token (and KV head) or per channel of a tile"),
      ::kvcim::choice_field("softmax", &Self::softmax, Names(kTileSoftmaxNames),
                            "normalisation of the scores; the digital tile has `fixed` only"),
      ::kvcim::path_field("technology", &Self::technology, "configs/tech/*.yaml", "the technology table that prices the KV tiles")
          .by_default("technology (the chip's)"),
      KVCIM_ANALOG_TILE_FIELDS(KVCIM_SPEC_ROW_NUM, KVCIM_SPEC_ROW_FLAG, KVCIM_SPEC_ROW_CHOICE)
      ::kvcim::range_field("token_interval_ns", &Self::token_interval_ns, 0.0, 1e30, "ns",
                           "time between two tokens of a sequence; 0 = the placement's latency bound").only(analog_only),
  };
}

struct Precision {
  int weight_bits = 8;
  int activation_bits = 8;
  int kv_bits = 8;
};

constexpr auto spec_fields(const Precision*) {
  return std::tuple{
      ::kvcim::range_field("weight_bits", &Precision::weight_bits, 2, 8, "bits", "width of the weights").needed(),
      ::kvcim::range_field("activation_bits", &Precision::activation_bits, 2, 8, "bits", "width of the activations").needed(),
      ::kvcim::range_field("kv_bits", &Precision::kv_bits, 2, 8, "bits", "width of q and (by default) of K and V").needed(),
  };
}

// The on-chip buffer the tiles share (its area and leakage; chip.hpp).
struct BufferSpec {
  int64_t bytes = 256 * 1024;
};
constexpr auto spec_fields(const BufferSpec*) {
  return std::tuple{
      ::kvcim::range_field("bytes", &BufferSpec::bytes, 0, 1125899906842624.0, "bytes", "on-chip buffer capacity"),
  };
}

// The off-chip memory beside the CIM chip: what a bit moved costs, and what it holds at most.
struct OffchipSpec {
  cmodel::energy::OffchipKind kind = cmodel::energy::OffchipKind::hbm;
  int64_t capacity = int64_t{16} << 30;
};
constexpr auto spec_fields(const OffchipSpec*) {
  using Names = std::span<const std::string_view>;
  return std::tuple{
      ::kvcim::choice_field("kind", &OffchipSpec::kind, Names(cmodel::energy::kOffchipKindNames),
                            "the off-chip memory (its bit price)"),
      ::kvcim::range_field("capacity", &OffchipSpec::capacity, 0, 1152921504606846976.0, "bytes",
                           "what it holds at most; a placement needing more is refused"),
  };
}

// The digital periphery: parallel lanes for the work outside the macros.
struct DigitalSpec {
  int64_t units = 64;
};
constexpr auto spec_fields(const DigitalSpec*) {
  return std::tuple{
      ::kvcim::range_field("units", &DigitalSpec::units, 1, 1073741824.0, "", "parallel lanes of the digital periphery"),
  };
}

struct HardwareSpec {
  std::string name, description;
  std::string technology;  // the file of `tech`
  std::string source;      // the file it was read from, or "<dict>"

  cmodel::cim::MacroSpec macro;  // weight macros; weight_bits/input_bits from `precision`
  Organization organization;
  KvSpec kv;
  Precision precision;
  BufferSpec buffer;
  OffchipSpec offchip;
  DigitalSpec digital;
  cmodel::energy::BaselineConfig baseline;
  DieSpec die;    // the largest die the chip is cut into (mapper/dies.hpp)
  LinkSpec link;  // what a bit costs between two dies

  // The published macro the weight macros are (`macro.describes`: a configs/macros/*.yaml, the
  // macro as its paper describes it). When set, the macros' events (row activation, column read,
  // ADC conversion, adder and shift-add ops) are priced by the component macro model
  // (cmodel/macro_model/event_prices.hpp) at `comparison`, not by `tech`'s values for them.
  std::optional<cmodel::macro_model::MacroFile> described;
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
    return offchip.kind == cmodel::energy::OffchipKind::hbm ? cmodel::energy::EventKind::hbm_bit
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

// The spec's top level beside its sections (kvcim/spec_fields.hpp).
constexpr auto spec_fields(const HardwareSpec*) {
  using Self = HardwareSpec;
  return std::tuple{
      ::kvcim::text_field("name", &Self::name, "the design's name").needed(),
      ::kvcim::text_field("description", &Self::description, "one line about the design"),
      ::kvcim::path_field("technology", &Self::technology, "configs/tech/*.yaml",
                          "the technology table that prices the macros and the periphery")
          .needed(),
  };
}

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
nlohmann::json to_json(const BufferSpec& b);
nlohmann::json to_json(const OffchipSpec& o);
nlohmann::json to_json(const DigitalSpec& d);
nlohmann::json to_json(const cmodel::energy::BaselineConfig& b);
nlohmann::json to_json(const cmodel::energy::NodePoint& n);
nlohmann::json to_json(const DieSpec& d);
nlohmann::json to_json(const LinkSpec& l);

// The spec as `kvcim run --json` and `kvcim map --json` record it: where it came from, its tables'
// names, the figures derived from it (tiles, banks, slices per weight) and the
// whole spec as hardware_spec_to_json writes it under "full" (HardwareSpec.from_dict reads it back).
nlohmann::json hardware_report_json(const HardwareSpec& hw);

// configs/hw/sram_digital.yaml of the data root (kvcim::data_dir()).
std::string default_hardware_spec_path();
std::string shipped_config_dir();  // data_dir()/configs

// The idle rule as the CLI (--idle) and Python (idle=) spell it: "gated" (false) or "leaking"
// (true); anything else fails naming `where` and the field.
bool idle_leaks_from(const std::string& where, const std::string& idle);

}  // namespace kvcim::mapper
