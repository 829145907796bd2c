#include "kvcim/rtl/cosim_job.hpp"

#include <chrono>
#include <random>

#include "kvcim/error.hpp"
#include "kvcim/rtl/rtl_tile.hpp"

namespace kvcim::rtl {

using namespace kvcim::cmodel::cim;

CosimResult cosim_job(const CosimOptions& o) {
  const TileParams p = RtlTile::built_params();
  if (o.trials < 1) fail("cosim", "trials", std::to_string(o.trials), "expected at least 1");
  if (o.tokens < 0 || o.tokens > p.tokens)
    fail("cosim", "tokens", std::to_string(o.tokens),
         "expected 0 (random) or 1.." + std::to_string(p.tokens) + " (the tile's capacity)");
  if (!(o.backpressure >= 0.0 && o.backpressure < 1.0))
    fail("cosim", "backpressure", std::to_string(o.backpressure), "expected a probability in [0, 1)");
  CosimResult r;
  r.options = o;
  const auto start = std::chrono::steady_clock::now();
  CModelTile c(p);
  RtlTile rtl(RtlTileOptions{.backpressure = o.backpressure, .seed = o.seed + 1, .trace_path = o.trace_path});
  std::mt19937_64 rng(o.seed);
  for (int trial = 0; trial < o.trials; ++trial) {
    const int n = o.tokens ? o.tokens : std::uniform_int_distribution<int>(1, p.tokens)(rng);
    const TileProblem problem = random_problem(rng, p, n);
    c.reset_events();
    rtl.reset_events();
    const std::string dr = diff_results(run_problem(c, problem), run_problem(rtl, problem));
    const std::string de = diff_events(c.events(), rtl.events());
    r.result_mismatches += !dr.empty();
    r.event_mismatches += !de.empty();
    if (!(dr.empty() && de.empty()) && r.first.size() < 5) r.first.push_back({trial, n, dr, de});
    r.cmodel_events += c.events();
    r.rtl_events += rtl.events();
  }
  r.sim_cycles = rtl.sim_cycles();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kvcim::rtl
