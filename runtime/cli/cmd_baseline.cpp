// kvcim baseline: the named conventional machines (configs/machines/*.yaml) and the published
// decode measurements they reproduce (docs/baseline.md).
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kvcim/mapper/machine.hpp"

namespace kvcim::cli {

void add_baseline(CLI::App& app) {
  struct Opts {
    bool validate = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "baseline", "List the named conventional machines (--baseline NAME of map and run); --validate: "
                  "reproduce published GPU decode measurements");
  cmd->add_flag("--validate", o->validate,
                "print the validation tables (markdown): measurement, what it includes, predicted, error; then the "
                "measured batch sweep of the H100 row beside the model");
  cmd->callback([o] {
    if (o->validate) {
      std::cout << mapper::validation_markdown(mapper::reproduce_measurements()) << "\n"
                << mapper::batch_sweep_markdown(mapper::reproduce_batch_sweep());
      return;
    }
    std::cout << "synthetic: the spec's own conventional engine (its baseline: section), the default\n";
    for (const std::string& n : mapper::machine_names()) {
      const mapper::Machine m = mapper::machine_by_name(n);
      std::cout << n << ": " << m.description << "; " << m.hbm_capacity_gb << " GB HBM at " << m.hbm_bandwidth_gb_s
                << " GB/s, " << m.peak_fp16_tflops << " TFLOP/s fp16, " << m.peak_int8_tops << " TOP/s int8, "
                << m.sram_mib << " MiB SRAM, " << m.node_nm << " nm, TDP " << m.tdp_w << " W, idle "
                << m.idle_power_w << " W, active " << m.active_power_w << " W (" << m.source << ")\n";
    }
  });
}

}  // namespace kvcim::cli
