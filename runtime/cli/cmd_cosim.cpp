// kvcim cosim: random attention problems through the Verilated RTL tile and the C model; every
// output integer and every event counter compared. Exit 0: no mismatch; 1: mismatches (the first
// few printed with their seed and trial); 2: bad arguments.
#ifdef KVCIM_HAVE_RTL
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kvcim/error.hpp"
#include "kvcim/runtime/defaults.hpp"
#include "kvcim/testbench/rtl_tile.hpp"

namespace kvcim::cli {

void add_cosim(CLI::App& app) {
  struct Opts {
    // the defaults are kvcim.cosim()'s too (runtime/defaults.hpp)
    int trials = runtime::CosimDefaults::trials, tokens = runtime::CosimDefaults::tokens;
    uint64_t seed = runtime::CosimDefaults::seed;
    std::string trace;
    double backpressure = runtime::CosimDefaults::backpressure;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("cosim", "Co-simulate the RTL attention tile against its C model");
  cmd->add_option("--trials", o->trials, "random attention problems")->capture_default_str();
  cmd->add_option("--seed", o->seed, "problem generator seed")->capture_default_str();
  cmd->add_option("--tokens", o->tokens, "tokens per problem (0: random, 1 to the tile size)")
      ->capture_default_str();
  cmd->add_option("--trace", o->trace, "write a VCD trace of the RTL to this file");
  cmd->add_option("--backpressure", o->backpressure,
                  "probability of withholding each handshake per cycle")->capture_default_str();
  cmd->callback([o] {
    using namespace kvcim::cmodel::cim;
    using namespace kvcim::testbench;
    const TileParams p;
    if (o->trials < 1) fail("--trials", "trials", std::to_string(o->trials), "expected >= 1");
    if (o->tokens < 0 || o->tokens > p.tokens)
      fail("--tokens", "tokens", std::to_string(o->tokens),
           "expected 0 (random) or 1.." + std::to_string(p.tokens));
    if (!(o->backpressure >= 0.0 && o->backpressure < 1.0))
      fail("--backpressure", "backpressure", std::to_string(o->backpressure), "expected [0, 1)");

    int64_t out_mismatch = 0, event_mismatch = 0;
    uint64_t cycles = 0;
    const auto start = std::chrono::steady_clock::now();
    {
      CModelTile c(p);
      RtlTile rtl(RtlTileOptions{.backpressure = o->backpressure, .seed = o->seed + 1,
                                 .trace_path = o->trace});
      std::mt19937_64 rng(o->seed);
      for (int trial = 0; trial < o->trials; ++trial) {
        const int n = o->tokens ? o->tokens : std::uniform_int_distribution<int>(1, p.tokens)(rng);
        const TileProblem pr = random_problem(rng, p, n);
        c.reset_events();
        rtl.reset_events();
        const std::string dr = diff_results(run_problem(c, pr), run_problem(rtl, pr));
        const std::string de = diff_events(c.events(), rtl.events());
        if (!dr.empty() && ++out_mismatch <= 5)
          std::cout << "output mismatch: seed " << o->seed << " trial " << trial << " tokens " << n
                    << " (C model != RTL):" << dr << "\n";
        if (!de.empty() && ++event_mismatch <= 5)
          std::cout << "event mismatch: seed " << o->seed << " trial " << trial << " tokens " << n
                    << " (C model != RTL):" << de << "\n";
      }
      cycles = rtl.sim_cycles();
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "trials: " << o->trials << " (seed " << o->seed << ", tokens "
              << (o->tokens ? std::to_string(o->tokens) : "1.." + std::to_string(p.tokens)) << ")\n"
              << "output mismatches: " << out_mismatch << "\n"
              << "event-count mismatches: " << event_mismatch << "\n"
              << "simulated cycles: " << cycles << " in " << secs << " s (RTL and C model)\n";
    if (!o->trace.empty()) std::cout << "trace: " << o->trace << "\n";
    if (out_mismatch || event_mismatch) {
      std::cout.flush();
      std::exit(1);
    }
  });
}

}  // namespace kvcim::cli
#endif  // KVCIM_HAVE_RTL
