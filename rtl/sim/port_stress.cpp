// Port-independent random stimulus and its scoreboard (kvcim/rtl/port_stress.hpp). Compiled per
// Verilated model: it drives the model's ports through RtlTile::Impl.
#include "kvcim/rtl/port_stress.hpp"

#include <deque>

#include "rtl_tile_impl.hpp"

namespace kvcim::rtl {

using cmodel::cim::CModelTile;

namespace {

struct Query {
  std::vector<int8_t> q;
  cmodel::cim::QueryScale scale;
};

class Driver {
 public:
  Driver(RtlTile& tile, const PortStressOptions& o, PortStressResult& r)
      : tile_(tile), m_(tile.impl()), p_(m_.params), c_(p_), rng_(o.seed), hold_(o.backpressure), r_(r),
        watchdog_(o.watchdog_cycles > 0 ? o.watchdog_cycles
                                        : 4 * (cmodel::cim::append_cycles(p_) +
                                               cmodel::cim::query_cycles(p_, p_.tokens)) + 64) {}

  void episode(int index) {
    episode_ = index;
    tile_.reset();
    tile_.reset_events();
    c_.reset();
    c_.reset_events();
    // A quarter of the episodes fill the tile: a full tile then refuses an offered append.
    const int n = std::bernoulli_distribution(0.25)(rng_) ? p_.tokens
                                                          : std::uniform_int_distribution<int>(1, p_.tokens)(rng_);
    const TileProblem tokens = random_problem(rng_, p_, n);
    std::deque<Query> queries;
    const int n_queries = std::uniform_int_distribution<int>(1, 4)(rng_);
    for (int i = 0; i < n_queries; ++i) {
      const TileProblem one = random_problem(rng_, p_, 1);
      queries.push_back({one.q, one.scale});
    }
    int next_token = 0;
    bool app_on = false, q_on = false;
    std::deque<TileResult> expected;  // queries accepted, results not yet transferred
    int64_t quiet = 0;                // cycles since the last transfer
    while (next_token < n || app_on || !queries.empty() || q_on || !expected.empty()) {
      // Each port decides on its own; a valid, once raised, stays until its transfer.
      if (!app_on && next_token < n && !hold()) {
        put_append(tokens.k[next_token], tokens.v[next_token], tokens.ek[next_token], tokens.ev[next_token]);
        app_on = true;
      } else if (!app_on) {
        put_junk_append();
      }
      // (a query needs a token held: the C model refuses an empty tile; the RTL's answer to one is
      // a directed test's, testbench/tests/rtl)
      if (!q_on && !queries.empty() && c_.tokens() > 0 && !hold()) {
        put_query(queries.front());
        q_on = true;
      } else if (!q_on) {
        put_junk_query();
      }
      m_.top->app_valid_i = app_on;
      m_.top->q_valid_i = q_on;
      m_.top->res_ready_i = !hold();
      m_.settle();
      const bool app_fire = app_on && m_.top->app_ready_o;
      const bool q_fire = q_on && m_.top->q_ready_o;
      const bool res_fire = m_.top->res_valid_o && m_.top->res_ready_i;
      r_.same_cycle_offers += app_on && q_on;
      r_.stalls[0] += app_on && !app_fire;
      r_.stalls[1] += q_on && !q_fire;
      r_.stalls[2] += m_.top->res_valid_o && !res_fire;
      if (q_fire && app_on)
        fail("port stress", "q_ready_o", "1 while app_valid_i is 1 (" + where() + ")",
             "0: an append offered in the same cycle goes first (docs/attention_tile.md)");
      if (res_fire) {
        if (expected.empty()) fail("port stress", "res_valid_o", "1 (" + where() + ")", "no result pending");
        compare(expected.front(), read_result());
        expected.pop_front();
      }
      if (app_fire) {
        c_.append(tokens.k[next_token], tokens.v[next_token], tokens.ek[next_token], tokens.ev[next_token]);
        ++next_token;
        ++r_.appends;
      }
      if (q_fire) {
        expected.push_back(c_.query(queries.front().q, queries.front().scale));
        queries.pop_front();
        ++r_.queries;
      }
      m_.tick();
      if (app_fire) app_on = false;
      if (q_fire) q_on = false;
      quiet = (app_fire || q_fire || res_fire) ? 0 : quiet + 1;
      if (quiet > watchdog_) stuck(app_on, q_on, !expected.empty());
    }
    drain();
    const std::string events = diff_events(c_.events(), tile_.events());
    if (!events.empty()) note(r_.event_mismatches, "events:" + events);
    if (n == p_.tokens) refuse_when_full();
  }

 private:
  bool hold() { return hold_(rng_); }
  std::string where() const {
    return "episode " + std::to_string(episode_) + ", cycle " + std::to_string(m_.cycles);
  }

  void put_append(const std::vector<int8_t>& k, const std::vector<int8_t>& v, int ek, int ev) {
    put_vector(m_.top->app_k_i, k, p_.kv_bits);
    put_vector(m_.top->app_v_i, v, p_.kv_bits);
    m_.top->app_ek_i = static_cast<uint8_t>(ek);
    m_.top->app_ev_i = static_cast<uint8_t>(ev);
  }
  void put_query(const Query& q) {
    put_vector(m_.top->q_i, q.q, p_.kv_bits);
    m_.top->qmul_i = q.scale.qmul;
    m_.top->qexp_i = static_cast<uint8_t>(q.scale.qexp);
  }
  // What an idle port carries: anything (a tile that reads a payload without its valid differs).
  std::vector<int8_t> junk() {
    std::vector<int8_t> x(p_.head_dim);
    for (int8_t& b : x) b = static_cast<int8_t>(rng_());
    return x;
  }
  void put_junk_append() {
    put_append(junk(), junk(), static_cast<int8_t>(rng_()), static_cast<int8_t>(rng_()));
  }
  void put_junk_query() {
    put_query({junk(), {static_cast<uint16_t>(rng_()), static_cast<int8_t>(rng_())}});
  }

  TileResult read_result() const {
    TileResult g;
    g.o.resize(p_.head_dim);
    for (int i = 0; i < p_.head_dim; ++i) g.o[i] = static_cast<int32_t>(get_bits(m_.top->o_o, 32 * i, 32));
    g.evmax = static_cast<int>(static_cast<int8_t>(m_.top->evmax_o));
    g.ymax = static_cast<int64_t>(m_.top->ymax_o);
    g.sum = static_cast<int64_t>(m_.top->sum_o);
    return g;
  }
  void compare(const TileResult& want, const TileResult& got) {
    const std::string d = diff_results(want, got);
    if (!d.empty()) note(r_.result_mismatches, "result:" + d);
  }
  void note(int64_t& count, const std::string& what) {
    ++count;
    if (r_.first.size() < 5) r_.first.push_back(where() + ": " + what);
  }

  // Valids low until the tile is idle again (an append's K column write outlasts its transfer).
  void drain() {
    m_.top->app_valid_i = 0;
    m_.top->q_valid_i = 0;
    m_.top->res_ready_i = 0;
    m_.settle();
    for (int64_t waited = 0; !m_.top->q_ready_o; ++waited) {
      if (waited > watchdog_) stuck(false, false, false);
      m_.tick();
      m_.settle();
    }
  }

  // An append offered to a full tile is never accepted; the protocol lets it go only under reset.
  void refuse_when_full() {
    put_junk_append();
    if (m_.offer_append_then_reset(3))
      fail("port stress", "app_ready_o", "1 on a full tile (" + where() + ")", "0");
  }

  [[noreturn]] void stuck(bool app_on, bool q_on, bool result_due) const {
    std::string what;
    if (app_on) what += " append valid waiting for app_ready_o;";
    if (q_on) what += " query valid waiting for q_ready_o;";
    if (result_due) what += " an accepted query waiting for res_valid_o;";
    if (what.empty()) what = " the tile not returning to idle (q_ready_o low);";
    fail("port stress", "watchdog", "no transfer for " + std::to_string(watchdog_) + " cycles (" + where() + ")",
         "progress:" + what.substr(0, what.size() - 1));
  }

  RtlTile& tile_;
  RtlTile::Impl& m_;
  const TileParams p_;
  CModelTile c_;
  std::mt19937_64 rng_;
  std::bernoulli_distribution hold_;
  PortStressResult& r_;
  const int64_t watchdog_;
  int episode_ = 0;
};

}  // namespace

PortStressResult port_stress(RtlTile& tile, const PortStressOptions& o) {
  if (o.episodes < 0) fail("port stress", "episodes", std::to_string(o.episodes), "expected >= 0");
  if (!(o.backpressure >= 0.0 && o.backpressure < 1.0))
    fail("port stress", "backpressure", std::to_string(o.backpressure), "expected a probability in [0, 1)");
  PortStressResult r;
  Driver d(tile, o, r);
  for (int e = 0; e < o.episodes; ++e) d.episode(e);
  return r;
}

}  // namespace kvcim::rtl
