// kvcim cosim: every built configuration of the Verilated RTL tile (the linked one and each module
// of the table, rtl::RtlTiles) against the C model, every output integer and every event counter
// compared, over random problems, the directed corners and port-independent stimulus, all under
// back-pressure (rtl::cosim_job). Exit 0: every configuration agrees; 1: a mismatch, a fired
// assertion or a hang (the first few printed with their seed); 2: bad arguments.
#ifdef KVCIM_HAVE_RTL
#include <cstdlib>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "kvcim/error.hpp"
#include "kvcim/rtl/cosim_job.hpp"
#include "kvcim/rtl/rtl_tile.hpp"
#include "kvcim/rtl/rtl_tiles.hpp"

namespace kvcim::cli {

namespace {

// The configurations to run: every one found, or the one named.
std::vector<rtl::RtlConfig> selected(const std::string& only) {
  const rtl::RtlTiles tiles(
      rtl::RtlTileSource{rtl::RtlTile::built_params(), [] { return std::make_unique<rtl::RtlTile>(); }});
  std::vector<rtl::RtlConfig> all = tiles.configs(&rtl::cosim_job);
  if (only.empty()) return all;
  std::string names;
  for (const rtl::RtlConfig& c : all) {
    if (c.name == only) return {c};
    names += (names.empty() ? "" : ", ") + c.name;
  }
  fail("cosim", "config", only, "one of the built configurations: " + names);
}

void print(const rtl::CosimResult& r, const std::string& name) {
  const rtl::CosimOptions& o = r.options;
  for (const rtl::CosimMismatch& m : r.first) {
    const std::string where = name + " seed " + std::to_string(o.seed) + " " + m.what + " (C model != RTL):";
    if (!m.results.empty()) std::cout << "output mismatch: " << where << m.results << "\n";
    if (!m.events.empty()) std::cout << "event mismatch: " << where << m.events << "\n";
  }
  if (!r.failure.empty()) std::cout << "failure: " << name << " seed " << o.seed << ": " << r.failure << "\n";
  std::cout << name << ": trials " << o.trials << " (tokens "
            << (o.tokens ? std::to_string(o.tokens) : "1.." + std::to_string(r.params.tokens)) << "), corners "
            << r.corners << ", port stress " << r.port_appends << " appends " << r.port_queries << " queries ("
            << r.port_same_cycle_offers << " cycles offering both); output mismatches " << r.result_mismatches
            << ", event-count mismatches " << r.event_mismatches << (r.passed() ? "" : ", FAILED") << "; "
            << r.sim_cycles << " cycles in " << r.seconds << " s\n";
}

}  // namespace

void add_cosim(CLI::App& app) {
  struct Opts {
    // the defaults are kvcim.cosim()'s too (rtl::CosimDefaults)
    int trials = rtl::CosimDefaults::trials, tokens = rtl::CosimDefaults::tokens;
    int port_episodes = rtl::CosimDefaults::port_episodes;
    uint64_t seed = rtl::CosimDefaults::seed;
    std::string trace, config;
    double backpressure = rtl::CosimDefaults::backpressure;
    bool no_corners = !rtl::CosimDefaults::corners;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("cosim", "Co-simulate every built configuration of the RTL attention tile against its C model");
  cmd->add_option("--config", o->config, "run only this configuration (e.g. hd8_t64_kv8_p12; default: every one built)");
  cmd->add_option("--trials", o->trials, "random attention problems per configuration")->capture_default_str();
  cmd->add_option("--port-episodes", o->port_episodes,
                  "episodes of port-independent random stimulus per configuration")->capture_default_str();
  cmd->add_flag("--no-corners", o->no_corners, "skip the directed corner problems");
  cmd->add_option("--seed", o->seed, "problem generator seed")->capture_default_str();
  cmd->add_option("--tokens", o->tokens, "tokens per random problem (0: random, 1 to the tile size)")
      ->capture_default_str();
  cmd->add_option("--trace", o->trace,
                  std::string("write a trace of the RTL to this file (with --config), ") +
                      (rtl::RtlTile::trace_format() == std::string("fst")
                           ? "FST (GTKWave; a VCD build: -DKVCIM_RTL_TRACE=vcd)"
                           : "VCD (this build: -DKVCIM_RTL_TRACE=vcd)"));
  cmd->add_option("--backpressure", o->backpressure,
                  "probability of withholding each handshake per cycle (0: none)")->capture_default_str();
  cmd->callback([o] {
    const rtl::CosimOptions opts{.trials = o->trials, .seed = o->seed, .tokens = o->tokens,
                                 .backpressure = o->backpressure, .corners = !o->no_corners,
                                 .port_episodes = o->port_episodes, .trace_path = o->trace};
    const std::vector<rtl::RtlConfig> configs = selected(o->config);
    if (!o->trace.empty() && configs.size() != 1)
      fail("cosim", "trace", o->trace, "one configuration to trace: name it with --config");
    // Every configuration's options are checked before any runs: bad arguments exit 2, never
    // after a partial run.
    for (const rtl::RtlConfig& c : configs) rtl::check_cosim_options(opts, c.params);
    bool passed = true;
    for (const rtl::RtlConfig& c : configs) {
      const rtl::CosimResult r = c.cosim(opts);
      print(r, c.name + (c.linked ? " (linked)" : ""));
      passed = passed && r.passed();
    }
    std::cout << (passed ? "cosim: passed, " : "cosim: FAILED, ") << configs.size() << " configuration"
              << (configs.size() == 1 ? "" : "s") << "\n";
    std::cout.flush();
    if (!passed) std::exit(1);
  });
}

}  // namespace kvcim::cli
#endif  // KVCIM_HAVE_RTL
