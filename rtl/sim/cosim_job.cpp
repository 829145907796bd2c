#include "kvcim/rtl/cosim_job.hpp"

#include <chrono>
#include <random>

#include "kvcim/error.hpp"
#include "kvcim/rtl/corner_problems.hpp"
#include "kvcim/rtl/port_stress.hpp"
#include "kvcim/rtl/rtl_tile.hpp"

namespace kvcim::rtl {

using namespace kvcim::cmodel::cim;

namespace {

// Runs one problem through both tiles; counts and records a difference.
void compare(CModelTile& c, RtlTile& rtl, const TileProblem& problem, const std::string& what, CosimResult& r) {
  c.reset_events();
  rtl.reset_events();
  const std::string dr = diff_results(run_problem(c, problem), run_problem(rtl, problem));
  const std::string de = diff_events(c.events(), rtl.events());
  r.result_mismatches += !dr.empty();
  r.event_mismatches += !de.empty();
  if (!(dr.empty() && de.empty()) && r.first.size() < 5) r.first.push_back({what, dr, de});
  r.cmodel_events += c.events();
  r.rtl_events += rtl.events();
}

}  // namespace

CosimResult cosim_job(const CosimOptions& o) {
  const TileParams p = RtlTile::built_params();
  check_cosim_options(o, p);
  CosimResult r;
  r.options = o;
  r.params = p;
  const auto start = std::chrono::steady_clock::now();
  CModelTile c(p);
  RtlTileOptions ro;
  ro.backpressure = o.backpressure;
  ro.seed = o.seed + 1;
  ro.trace_path = o.trace_path;
  // A handshake of a working tile completes within a few query latencies even under
  // back-pressure: a stuck one fails in well under a second.
  ro.timeout_cycles = 20 * (append_cycles(p) + query_cycles(p, p.tokens)) + 1000;
  RtlTile rtl(ro);
  try {
    std::mt19937_64 rng(o.seed);
    for (int trial = 0; trial < o.trials; ++trial) {
      const int n = o.tokens ? o.tokens : std::uniform_int_distribution<int>(1, p.tokens)(rng);
      compare(c, rtl, random_problem(rng, p, n),
              "trial " + std::to_string(trial) + ", " + std::to_string(n) + " tokens", r);
    }
    if (o.corners) {
      for (const CornerProblem& cp : corner_problems(p)) {
        compare(c, rtl, cp.problem, "corner '" + cp.name + "'", r);
        ++r.corners;
      }
    }
    if (o.port_episodes > 0) {
      PortStressOptions po;
      po.episodes = o.port_episodes;
      po.seed = o.seed + 2;
      po.backpressure = o.backpressure;
      const PortStressResult ps = port_stress(rtl, po);
      r.result_mismatches += ps.result_mismatches;
      r.event_mismatches += ps.event_mismatches;
      for (const std::string& m : ps.first)
        if (r.first.size() < 5) r.first.push_back({"port stress", m, ""});
      r.port_appends = ps.appends;
      r.port_queries = ps.queries;
      r.port_same_cycle_offers = ps.same_cycle_offers;
    }
  } catch (const Error& e) {
    r.failure = e.what();
  }
  r.sim_cycles = rtl.sim_cycles();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kvcim::rtl
