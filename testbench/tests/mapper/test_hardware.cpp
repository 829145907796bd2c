// Hardware specs: the shipped ones load; every malformed field is an error naming file, line,
// field and value; a JSON tree reads like the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kvcim/error.hpp"
#include "kvcim/mapper/hardware.hpp"
#include "spec_text.hpp"

using namespace kvcim::mapper;
using kvcim::differing_fields;
namespace fs = std::filesystem;
namespace cim = kvcim::cmodel::cim;

namespace {

const std::string kHw = std::string(KVCIM_SOURCE_DIR) + "/configs/hw/";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `text` next to the shipped specs' folder layout (so ../tech and ../macros paths resolve).
struct TempSpec {
  fs::path dir = fs::temp_directory_path() / ("kvcim_hw_" + std::to_string(::getpid()));
  fs::path path;
  explicit TempSpec(const std::string& text) {
    fs::create_directories(dir / "hw");
    for (const char* sub : {"tech", "macros"}) {  // the tables, and the macros specs describe
      fs::create_directories(dir / sub);
      for (const auto& e : fs::directory_iterator(std::string(KVCIM_SOURCE_DIR) + "/configs/" + sub))
        fs::copy_file(e.path(), dir / sub / e.path().filename(), fs::copy_options::overwrite_existing);
    }
    path = dir / "hw" / "spec.yaml";
    std::ofstream(path) << text;
  }
  ~TempSpec() { fs::remove_all(dir); }
};

using kvcim::test::replaced;

std::string spec_error(const std::string& text) {
  TempSpec t(text);
  try {
    load_hardware_spec(t.path.string());
  } catch (const kvcim::Error& e) {
    return e.what();
  }
  return "";
}

cim::TileParams again_tile(const nlohmann::json& j, const HardwareSpec&) {
  return hardware_spec_from_text(j.dump()).tile(8);
}

}  // namespace

// kv.kind, widths, layout and the analog fields: parsed into the tile the runtime builds,
// defaults giving the digital tile exactly as before, errors naming the field.
TEST(Hardware, KvTileFields) {
  const HardwareSpec d = load_hardware_spec(kHw + "sram_digital.yaml");
  EXPECT_EQ(d.tile(8), cim::TileParams{});  // the RTL's parameters
  EXPECT_EQ(d.kv.k_bits, 8);
  EXPECT_EQ(d.kv.k_scale, KScale::token);
  const HardwareSpec a = load_hardware_spec(kHw + "gain_cell_kv.yaml");
  const cim::TileParams t = a.tile(8);
  EXPECT_EQ(t.kind, cim::TileKind::analog);
  EXPECT_EQ(t.cell_bits, 4);
  EXPECT_EQ(t.adc_bits, 10);
  EXPECT_EQ(t.adc_range, cim::AdcRange::calibrated);
  EXPECT_EQ(t.adc_clip, 0.125);
  EXPECT_EQ(t.out_adc_clip, 0.25);
  EXPECT_EQ(a.kv_tech.name, "gain_cell_kv");
  // ADC conversions priced at kv.adc_bits: the [A2] 10-bit row, not the 8-bit default
  EXPECT_NE(a.kv_costs().energy(kvcim::cmodel::energy::EventKind::adc_conversion),
            a.kv_tech.costs({a.comparison, 8, 0}).energy(kvcim::cmodel::energy::EventKind::adc_conversion));

  const std::string text = read(kHw + "sram_digital.yaml");
  auto with_kv = [&](const std::string& extra) {
    return replaced(text, "  exp_frac: 6\n", "  exp_frac: 6\n" + extra);
  };
  {
    TempSpec ts(with_kv("  k_bits: 4\n  v_bits: 6\n  k_scale: channel\n"));
    const HardwareSpec h = load_hardware_spec(ts.path.string());
    EXPECT_EQ(h.tile(8).kb(), 4);
    EXPECT_EQ(h.tile(8).vb(), 6);
    EXPECT_EQ(h.kv.k_scale, KScale::channel);
    const nlohmann::json j = hardware_spec_to_json(h);
    EXPECT_EQ(j["kv"]["k_bits"], 4);
    EXPECT_EQ(j["kv"]["k_scale"], "channel");
    EXPECT_FALSE(j["kv"].contains("adc_bits"));
    EXPECT_EQ(hardware_spec_to_json(hardware_spec_from_text(j.dump())), j);
  }
  EXPECT_NE(spec_error(with_kv("  kind: analgo\n")).find("did you mean 'analog'"), std::string::npos)
      << spec_error(with_kv("  kind: analgo\n"));
  EXPECT_NE(spec_error(with_kv("  k_bits: 9\n")).find("kv.k_bits"), std::string::npos);
  EXPECT_NE(spec_error(with_kv("  v_bits: 1\n")).find("kv.v_bits"), std::string::npos);
  EXPECT_NE(spec_error(with_kv("  adc_bits: 8\n")).find("kind: analog"), std::string::npos);
  EXPECT_NE(spec_error(with_kv("  softmax: relu\n")).find("softmax"), std::string::npos);
  EXPECT_NE(spec_error(with_kv("  kind: analog\n  read_noise_sigma: -1\n")).find("read_noise_sigma"),
            std::string::npos);
  EXPECT_NE(spec_error(with_kv("  kind: analog\n  adc_clip: 2\n")).find("adc_clip"), std::string::npos);
}

TEST(Hardware, NoiseModelFieldOfAnalogMacros) {
  const std::string text = read(kHw + "sram_analog.yaml");
  const auto with_model = [&](const std::string& line) { return replaced(text, "  seed: 1\n", "  seed: 1\n" + line); };
  EXPECT_EQ(load_hardware_spec(kHw + "sram_analog.yaml").macro.noise_model, cim::NoiseModel::fixed);  // default
  TempSpec ts(with_model("  noise_model: exact\n"));
  const HardwareSpec h = load_hardware_spec(ts.path.string());
  EXPECT_EQ(h.macro.noise_model, cim::NoiseModel::exact);
  const nlohmann::json j = hardware_spec_to_json(h);
  EXPECT_EQ(j["macro"]["noise_model"], "exact");
  EXPECT_EQ(hardware_spec_from_text(j.dump()).macro.noise_model, cim::NoiseModel::exact);
  EXPECT_NE(spec_error(with_model("  noise_model: fast\n")).find("noise_model"), std::string::npos);
  const std::string digital = read(kHw + "sram_digital.yaml");
  EXPECT_NE(spec_error(replaced(digital, "  kind: digital\n", "  kind: digital\n  noise_model: exact\n")).find("kind: analog"),
            std::string::npos);
}

TEST(Hardware, MergedMacroKindIsSelectedRoundTripsAndRefusesBadInput) {
  const std::string merged = replaced(read(kHw + "sram_analog.yaml"), "  kind: analog\n", "  kind: analog_merged\n");
  TempSpec ts(merged);
  const HardwareSpec h = load_hardware_spec(ts.path.string());
  EXPECT_EQ(h.macro.kind, cim::MacroKind::analog_merged);
  EXPECT_EQ(h.macro.adc_count(), 256 / 8 / 8);  // one converter per 8 outputs of 8 slices
  const nlohmann::json j = hardware_spec_to_json(h);
  EXPECT_EQ(j["macro"]["kind"], "analog_merged");
  EXPECT_EQ(hardware_spec_from_text(j.dump()).macro.kind, cim::MacroKind::analog_merged);
  // a bipolar converter needs a sign and a magnitude bit; a kind the table does not hold
  const std::string one_bit = spec_error(replaced(merged, "  adc_bits: 8", "  adc_bits: 1"));
  EXPECT_NE(one_bit.find("adc_bits = 1"), std::string::npos) << one_bit;
  const std::string bad_kind = spec_error(replaced(merged, "  kind: analog_merged", "  kind: analog_merge"));
  EXPECT_NE(bad_kind.find("kind"), std::string::npos) << bad_kind;
  EXPECT_NE(bad_kind.find("analog_merged"), std::string::npos) << bad_kind;  // the choices named
}

TEST(Hardware, ShippedSpecsLoad) {
  for (const char* f : {"sram_digital.yaml", "sram_analog.yaml", "reram_analog.yaml"}) {
    SCOPED_TRACE(f);
    const HardwareSpec hw = load_hardware_spec(kHw + f);
    EXPECT_NO_THROW(hw.validate());
    EXPECT_EQ(hw.macro.weight_bits, hw.precision.weight_bits);
    EXPECT_EQ(hw.macro.input_bits, hw.precision.activation_bits);
    EXPECT_GT(hw.organization.macros, 0);
    EXPECT_NO_THROW(hw.costs());
  }
  const HardwareSpec d = load_hardware_spec(default_hardware_spec_path());
  EXPECT_EQ(d.name, "sram_digital");
  EXPECT_EQ(d.macro.kind, cim::MacroKind::digital);
  EXPECT_EQ(d.macro.rows, 256);
  EXPECT_EQ(d.tech.name, "sram_digital_cim");
  EXPECT_EQ(d.baseline_tech.name, "digital_45nm");
  EXPECT_EQ(d.buffer.bytes, 256 * 1024);
  EXPECT_EQ(d.offchip.capacity, int64_t{16} << 30);
  const HardwareSpec r = load_hardware_spec(kHw + "reram_analog.yaml");
  EXPECT_EQ(r.macro.kind, cim::MacroKind::analog);
  EXPECT_EQ(r.macro.cell_bits, 1);   // as the calibrated [C11] (docs/calibration.md)
  EXPECT_EQ(r.macro.rows_per_cycle, 32);
  EXPECT_EQ(r.macro.adc_share, 1);
  EXPECT_TRUE(r.kv_tech.endurance_writes.has_value());
  const HardwareSpec a = load_hardware_spec(kHw + "sram_analog.yaml");
  EXPECT_EQ(a.kv_tech.name, "sram_digital_cim");  // kv.technology overrides
}

TEST(Hardware, FieldErrorsNameFileLineFieldAndValue) {
  const std::string base = read(kHw + "sram_digital.yaml");
  struct Case {
    std::string what, from, to, expect1, expect2;
  };
  const std::vector<Case> cases = {
      {"unknown top key", "buffer:", "bufer:", "bufer", "did you mean 'buffer'"},
      {"unknown nested key", "  rows: 256", "  rowz: 256", "macro.rowz", "did you mean 'rows'"},
      {"wrong type", "  rows: 256", "  rows: many", "macro.rows = 'many'", "integer"},
      {"negative", "  macros: 1024", "  macros: -4", "organization.macros = '-4'", "[1,"},
      {"wrong unit", "  bytes: 256 KiB", "  bytes: 256 ns", "buffer.bytes = '256 ns'", "bytes"},
      {"negative size", "  bytes: 256 KiB", "  bytes: -1 KiB", "buffer.bytes", "non-negative"},
      {"bad choice", "  kind: digital", "  kind: digitl", "macro.kind", "did you mean 'digital'"},
      {"adc on digital", "  rows_per_cycle: 256", "  rows_per_cycle: 256\n  adc_bits: 6", "macro.adc_bits",
       "analog"},
      {"missing section", "precision:\n  weight_bits: 8\n  activation_bits: 8\n  kv_bits: 8\n", "", "precision",
       "missing"},
      {"bad technology path", "technology: ../tech/sram_digital_cim.yaml", "technology: ../tech/none.yaml",
       "technology", "none.yaml"},
      {"bits out of range", "  kv_bits: 8", "  kv_bits: 12", "precision.kv_bits = '12'", "[2, 8]"},
      {"geometry", "  cols: 256", "  cols: 4", "macro", "slices_per_weight"},
      {"rows_per_cycle above rows", "  rows_per_cycle: 256", "  rows_per_cycle: 300", "macro.rows_per_cycle",
       "[1, 256]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string e = spec_error(replaced(base, c.from, c.to));
    EXPECT_NE(e.find("spec.yaml"), std::string::npos) << e;
    EXPECT_NE(e.find(c.expect1), std::string::npos) << e;
    EXPECT_NE(e.find(c.expect2), std::string::npos) << e;
  }
  // the line of the offending key
  const std::string e = spec_error(replaced(base, "  rows: 256", "  rowz: 256"));
  int line = 0;
  {
    std::istringstream in(base);
    std::string l;
    for (int n = 1; std::getline(in, l); ++n)
      if (l == "  rows: 256") line = n;
  }
  EXPECT_NE(e.find("spec.yaml:" + std::to_string(line)), std::string::npos) << e;
}

TEST(Hardware, AnalogAdcNeedsACostedResolution) {
  const std::string base = read(kHw + "sram_analog.yaml");
  const std::string e = spec_error(replaced(base, "  adc_bits: 8", "  adc_bits: 13"));
  EXPECT_NE(e.find("energy_pj_by_adc_bits"), std::string::npos) << e;
}

TEST(Hardware, JsonTreeReadsLikeTheFile) {
  const HardwareSpec file = load_hardware_spec(kHw + "sram_analog.yaml");
  const std::string json = R"({
    "name": "sram_analog", "technology": "../tech/sram_analog_cim.yaml",
    "macro": {"describes": "../macros/C7.yaml", "kind": "analog", "rows": 256, "cols": 256, "cell_bits": 1, "input_bits_per_cycle": 2,
              "rows_per_cycle": 256, "adc_bits": 8, "adc_share": 8, "adc_range": "calibrated",
              "adc_clip": 0.33203125, "encoding": "twos_complement", "cell_noise_sigma": 0,
              "read_noise_sigma": 0.15, "seed": 1},
    "organization": {"macros": 1024, "macros_per_tile": 8, "tiles_per_bank": 16},
    "kv": {"tokens_per_tile": 64, "prob_bits": 12, "exp_frac": 6,
           "technology": "../tech/sram_digital_cim.yaml"},
    "precision": {"weight_bits": 8, "activation_bits": 8, "kv_bits": 8},
    "buffer": {"bytes": "256 KiB"}, "offchip": {"kind": "hbm", "capacity": "16 GiB"},
    "digital": {"units": 64},
    "baseline": {"mac": "int8", "offchip": "hbm", "sram": "8 MiB", "mac_units": 1024,
                 "technology": "../tech/digital_45nm.yaml"}})";
  const HardwareSpec dict = hardware_spec_from_text(json);
  EXPECT_EQ(dict.source, "<dict>");
  EXPECT_EQ(dict.macro.rows_per_cycle, file.macro.rows_per_cycle);
  EXPECT_EQ(dict.macro.adc_share, file.macro.adc_share);
  EXPECT_EQ(dict.macro.kind, file.macro.kind);
  EXPECT_EQ(dict.organization.macros, file.organization.macros);
  EXPECT_EQ(dict.buffer.bytes, file.buffer.bytes);
  EXPECT_EQ(dict.baseline.sram_bytes, file.baseline.sram_bytes);
  EXPECT_EQ(dict.kv_tech.name, file.kv_tech.name);
  EXPECT_EQ(dict.costs().energy_aj, file.costs().energy_aj);
  try {
    hardware_spec_from_text(replaced(json, "\"rows\": 256", "\"rowss\": 256"));
    FAIL() << "accepted an unknown key";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("<dict>"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("did you mean 'rows'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(hardware_spec_from_text("{not json"), kvcim::Error);
  EXPECT_THROW(load_hardware_spec("/nonexistent/spec.yaml"), kvcim::Error);
}

// hardware_spec_to_json is the parser's inverse: every shipped spec, written out and read back,
// is the same spec (every field, the technology tables by their costs).
TEST(Hardware, ToJsonReadsBackAsTheSameSpec) {
  for (const char* name : {"sram_digital", "sram_analog", "reram_analog", "gain_cell_kv"}) {
    SCOPED_TRACE(name);
    const HardwareSpec hw = load_hardware_spec(kHw + std::string(name) + ".yaml");
    const nlohmann::json j = hardware_spec_to_json(hw);
    EXPECT_EQ(again_tile(j, hw), hw.tile(8));  // the KV tile's every field survives
    const HardwareSpec again = hardware_spec_from_text(j.dump());
    EXPECT_EQ(hardware_spec_to_json(again), j);
    // field for field against the spec read from the file (not only a fixed point of to_json)
    using Keys = std::vector<std::string>;
    EXPECT_EQ(differing_fields(again.macro, hw.macro), Keys{});
    EXPECT_EQ(differing_fields(again.organization, hw.organization), Keys{});
    EXPECT_EQ(differing_fields(again.kv, hw.kv), Keys{});
    EXPECT_EQ(differing_fields(again.precision, hw.precision), Keys{});
    EXPECT_EQ(differing_fields(again.buffer, hw.buffer), Keys{});
    EXPECT_EQ(differing_fields(again.offchip, hw.offchip), Keys{});
    EXPECT_EQ(differing_fields(again.digital, hw.digital), Keys{});
    EXPECT_EQ(differing_fields(again.baseline, hw.baseline), Keys{});
    EXPECT_EQ(differing_fields(again.comparison, hw.comparison), Keys{});
    EXPECT_EQ(again.name, hw.name);
    EXPECT_EQ(again.description, hw.description);
    EXPECT_EQ(j["macro"].contains("adc_bits"), hw.macro.kind == cim::MacroKind::analog);
    EXPECT_EQ(again.kv_tech.name, hw.kv_tech.name);
    EXPECT_EQ(again.costs().energy_aj, hw.costs().energy_aj);
    EXPECT_EQ(again.kv_costs().energy_aj, hw.kv_costs().energy_aj);
    EXPECT_EQ(again.baseline_costs().energy_aj, hw.baseline_costs().energy_aj);
    EXPECT_TRUE(fs::path(j["technology"].get<std::string>()).is_absolute());
  }
}

// A dict is read as the tree it is (no text between), and a report's record of the spec holds
// the whole spec: reading its "full" section gives the spec that ran.
TEST(Hardware, JsonTreeAndReportRecordReadBack) {
  for (const char* name : {"sram_digital", "sram_analog", "reram_analog", "gain_cell_kv"}) {
    SCOPED_TRACE(name);
    const HardwareSpec hw = load_hardware_spec(kHw + std::string(name) + ".yaml");
    const nlohmann::json j = hardware_spec_to_json(hw);
    EXPECT_EQ(hardware_spec_to_json(hardware_spec_from_json(j)), j);
    EXPECT_EQ(hardware_spec_to_json(hardware_spec_from_text(j.dump())), j);
    const nlohmann::json r = hardware_report_json(hw);
    EXPECT_EQ(r["full"], j);
    EXPECT_EQ(hardware_spec_to_json(hardware_spec_from_json(r["full"])), j);
    // the sections are their structs' serialisers
    EXPECT_EQ(r["precision"], to_json(hw.precision));
    EXPECT_EQ(r["kv"], to_json(hw.kv));
    EXPECT_EQ(j["precision"], to_json(hw.precision));
    EXPECT_EQ(r["organization"]["tiles"], hw.organization.tiles());
    EXPECT_EQ(r["technology"], hw.tech.name);
  }
  try {
    nlohmann::json j = hardware_spec_to_json(load_hardware_spec(kHw + "sram_digital.yaml"));
    j["macro"]["rowz"] = 4;
    hardware_spec_from_json(j);
    FAIL() << "accepted an unknown key";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("<dict>"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rowz"), std::string::npos) << e.what();
  }
}
