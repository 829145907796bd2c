// kvcim cosim: random attention problems through the Verilated RTL tile and the C model; every
// output integer and every event counter compared. Exit 0: no mismatch; 1: mismatches (the first
// few printed with their seed and trial); 2: bad arguments.
#ifdef KVCIM_HAVE_RTL
#include <cstdlib>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kvcim/error.hpp"
#include "kvcim/runtime/defaults.hpp"
#include "kvcim/rtl/cosim_job.hpp"
#include "kvcim/rtl/rtl_tile.hpp"

namespace kvcim::cli {

void add_cosim(CLI::App& app) {
  struct Opts {
    // the defaults are kvcim.cosim()'s too (runtime/defaults.hpp)
    int trials = rtl::CosimDefaults::trials, tokens = rtl::CosimDefaults::tokens;
    uint64_t seed = rtl::CosimDefaults::seed;
    std::string trace;
    double backpressure = rtl::CosimDefaults::backpressure;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("cosim", "Co-simulate the RTL attention tile against its C model");
  cmd->add_option("--trials", o->trials, "random attention problems")->capture_default_str();
  cmd->add_option("--seed", o->seed, "problem generator seed")->capture_default_str();
  cmd->add_option("--tokens", o->tokens, "tokens per problem (0: random, 1 to the tile size)")
      ->capture_default_str();
  cmd->add_option("--trace", o->trace,
                  std::string("write a trace of the RTL to this file, ") +
                      (rtl::RtlTile::trace_format() == std::string("fst")
                           ? "FST (GTKWave; a VCD build: -DKVCIM_RTL_TRACE=vcd)"
                           : "VCD (this build: -DKVCIM_RTL_TRACE=vcd)"));
  cmd->add_option("--backpressure", o->backpressure,
                  "probability of withholding each handshake per cycle")->capture_default_str();
  cmd->callback([o] {
    const rtl::CosimResult r = rtl::cosim_job(
        {.trials = o->trials, .seed = o->seed, .tokens = o->tokens, .backpressure = o->backpressure,
         .trace_path = o->trace});
    for (const rtl::CosimMismatch& m : r.first) {
      const std::string where = "seed " + std::to_string(o->seed) + " trial " + std::to_string(m.trial) +
                                " tokens " + std::to_string(m.tokens) + " (C model != RTL):";
      if (!m.results.empty()) std::cout << "output mismatch: " << where << m.results << "\n";
      if (!m.events.empty()) std::cout << "event mismatch: " << where << m.events << "\n";
    }
    const int capacity = rtl::RtlTile::built_params().tokens;
    std::cout << "trials: " << o->trials << " (seed " << o->seed << ", tokens "
              << (o->tokens ? std::to_string(o->tokens) : "1.." + std::to_string(capacity)) << ")\n"
              << "output mismatches: " << r.result_mismatches << "\n"
              << "event-count mismatches: " << r.event_mismatches << "\n"
              << "simulated cycles: " << r.sim_cycles << " in " << r.seconds << " s (RTL and C model)\n";
    if (!o->trace.empty()) std::cout << "trace: " << o->trace << "\n";
    if (r.result_mismatches || r.event_mismatches) {
      std::cout.flush();
      std::exit(1);
    }
  });
}

}  // namespace kvcim::cli
#endif  // KVCIM_HAVE_RTL
