// kvcim macro: price one full operation of a CIM macro described as its paper describes it
// (configs/macros/*.yaml) with the component model, at its published operating point or over
// sweeps of supply and input bits, beside the paper's figures (docs/calibration.md).
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kvcim/io.hpp"
#include "kvcim/mapper/macro_pricing.hpp"

namespace kvcim::cli {

void add_macro(CLI::App& app) {
  struct Opts {
    std::string hw, json, vdd, input_bits, constants;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "macro", "Price one operation of a CIM macro by components: energy, area, latency, fJ/MAC, TOPS/W, TOPS/mm^2, GOPS");
  cmd->add_option("--hw", o->hw, "macro spec (configs/macros/*.yaml: the macro as its paper describes it)")->required();
  cmd->add_option("--vdd", o->vdd, "supply: V, a list a,b or a sweep lo:hi:step (default: the published supply)");
  cmd->add_option("--input-bits", o->input_bits, "input bits: n or a list 1,2,4,8 (default: the published bits)");
  cmd->add_option("--constants", o->constants, "component constants (default: the shipped configs/macro_model.yaml)");
  cmd->add_option("--json", o->json, "write the figures as JSON to this file");
  cmd->callback([o] {
    namespace mm = cmodel::macro_model;
    const mapper::MacroFile m = mapper::load_macro_file(o->hw);
    const mm::Constants k = o->constants.empty() ? mm::shipped_constants() : mm::load_constants(o->constants);
    std::vector<double> vdds = {0}, bits = {0};
    if (!o->vdd.empty()) vdds = mapper::parse_sweep(o->vdd, "--vdd");
    if (!o->input_bits.empty()) bits = mapper::parse_sweep(o->input_bits, "--input-bits");
    for (double b : bits)
      if (b != 0 && (b < 1 || b > 16 || b != static_cast<int>(b)))
        throw Error("--input-bits: " + o->input_bits + ": expected whole numbers 1..16");
    std::vector<mapper::MacroPrice> points;
    for (double v : vdds)
      for (double b : bits) points.push_back(mapper::price_macro(m, k, {v, 0, static_cast<int>(b)}));
    // Everything is computed before anything is written: a bad spec leaves no file behind.
    if (!o->json.empty())
      write_file_atomic(o->json, mapper::macro_to_json(m, points, k).dump(2, ' ', false,
                                                                          nlohmann::json::error_handler_t::replace) + "\n");
    std::cout << mapper::macro_summary(m, points, k);
    if (!o->json.empty()) std::cout << "wrote " << o->json << "\n";
  });
}

}  // namespace kvcim::cli
