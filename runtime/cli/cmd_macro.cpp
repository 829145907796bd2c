// kvcim macro: price one full operation of a published CIM macro (configs/macros/*.yaml) and
// compare it with the paper's figures (docs/calibration.md).
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kvcim/io.hpp"
#include "kvcim/mapper/macro_pricing.hpp"

namespace kvcim::cli {

void add_macro(CLI::App& app) {
  struct Opts {
    std::string hw, json;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "macro", "Price one full operation of a published CIM macro: fJ/MAC, TOPS/W, TOPS/mm^2, GOPS, breakdown");
  cmd->add_option("--hw", o->hw, "macro spec (configs/macros/*.yaml: a hardware spec with a published: block)")
      ->required();
  cmd->add_option("--json", o->json, "write the figures as JSON to this file");
  cmd->callback([o] {
    const mapper::MacroFile m = mapper::load_macro_file(o->hw);
    const mapper::MacroPrice p = mapper::price_macro(m);
    // Everything is computed before anything is written: a bad spec leaves no file behind.
    if (!o->json.empty()) write_file_atomic(o->json, mapper::macro_to_json(m, p).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    std::cout << mapper::macro_summary(m, p);
    if (!o->json.empty()) std::cout << "wrote " << o->json << "\n";
  });
}

}  // namespace kvcim::cli
