// RtlTile::Impl: the Verilated model, its context and the port-level clocking, for rtl_tile.cpp and
// for the harness hooks of the tests (testbench/harness/tile_hooks.cpp), which drive the ports
// directly. Compiled only against a Verilated model (it includes the model's header).
//
// The harness clocks the Verilated cim_attention_tile through its ports. Convention: each cycle the
// harness sets the inputs and lowers the clock, evaluates (the combinational outputs ready, valid
// settle), decides, then raises the clock and evaluates again (the rising edge is where transfers
// happen). Two evaluations per cycle; registered outputs are valid after the second.
#pragma once
#include "kvcim/rtl/rtl_tile.hpp"

#include <atomic>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "Vcim_attention_tile.h"
#include "kvcim/error.hpp"
#include "verilated.h"
// One trace format per Verilated model (rtl/rtl.cmake, KVCIM_RTL_TRACE): FST by default.
#if KVCIM_RTL_TRACE_FST
#include "verilated_fst_c.h"
using TraceWriter = VerilatedFstC;
#else
#include "verilated_vcd_c.h"
using TraceWriter = VerilatedVcdC;
#endif
#if VM_COVERAGE
#include "verilated_cov.h"
#endif

namespace kvcim::rtl {

using cmodel::cim::TileEvents;
using cmodel::cim::TileParams;
using cmodel::cim::TileResult;

namespace detail {

// Verilator maps a port of <= 64 bits to an integer and a wider one to VlWide (32-bit words).
template <typename T>
void put_bits(T& port, int lsb, int width, uint64_t value) {
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  port = static_cast<T>((static_cast<uint64_t>(port) & ~(mask << lsb)) | ((value & mask) << lsb));
}
template <std::size_t N>
void put_bits(VlWide<N>& port, int lsb, int width, uint64_t value) {
  for (int b = 0; b < width; ++b) {
    const int bit = lsb + b;
    const uint32_t m = 1u << (bit % 32);
    if ((value >> b) & 1u) port[bit / 32] |= m;
    else port[bit / 32] &= ~m;
  }
}
template <typename T>
uint64_t get_bits(const T& port, int lsb, int width) {
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  return (static_cast<uint64_t>(port) >> lsb) & mask;
}
template <std::size_t N>
uint64_t get_bits(const VlWide<N>& port, int lsb, int width) {
  uint64_t v = 0;
  for (int b = 0; b < width; ++b) v |= uint64_t{(port[(lsb + b) / 32] >> ((lsb + b) % 32)) & 1u} << b;
  return v;
}
template <typename T>
void put_vector(T& port, std::span<const int8_t> x, int bits) {
  for (size_t i = 0; i < x.size(); ++i)
    put_bits(port, static_cast<int>(i) * bits, bits, static_cast<uint8_t>(x[i]));
}

// A trace named for the other format would be a file its viewer misreads: refused before any
// cycle runs. Other names (no extension, .trace) are the user's choice.
inline void check_trace_path(const std::string& path) {
  const std::string built = RtlTile::trace_format();
  const std::string other = built == "fst" ? "vcd" : "fst";
  const size_t dot = path.rfind('.');
  if (dot != std::string::npos && path.substr(dot + 1) == other)
    fail(path, "trace file", "'." + other + "'",
         "this kvcim writes " + built + " traces (configured with KVCIM_RTL_TRACE=" + built +
             "): name the file ." + built + ", or configure with -DKVCIM_RTL_TRACE=" + other);
}

}  // namespace detail

using namespace detail;

struct RtlTile::Impl {
  RtlTileOptions opt;
  // KVCIM_RTL_TILE_CONFIG (head_dim, tokens, kv_bits, prob_bits): a build of the tile
  // Verilated with the same -G overrides (testbench/tests/rtl_configs)
  TileParams params = RtlTile::built_params();
  std::unique_ptr<VerilatedContext> ctx;
  std::unique_ptr<Vcim_attention_tile> top;
  std::unique_ptr<TraceWriter> vcd;
  std::mt19937_64 rng;
  std::bernoulli_distribution stall;
  uint64_t cycles = 0;
  uint64_t dumped = ~uint64_t{0};  // the last time dumped to the trace

  explicit Impl(const RtlTileOptions& o)
      : opt(o), rng(o.seed), stall(o.backpressure > 0.0 ? o.backpressure : 0.0) {
    if (!(o.backpressure >= 0.0 && o.backpressure < 1.0))
      fail("RtlTile", "backpressure", std::to_string(o.backpressure), "expected a probability in [0, 1)");
    if (o.timeout_cycles < 1)
      fail("RtlTile", "timeout_cycles", std::to_string(o.timeout_cycles), "expected >= 1");
    ctx = std::make_unique<VerilatedContext>();
    // One thread per tile, the caller's: a context's default is one thread per core, i.e. a pool
    // of (cores - 1) workers per tile, idle for this single-threaded model but alive as long as
    // the tile (an evaluation holding hundreds of tiles held hundreds of threads).
    ctx->threads(1);
    // A failing assertion ($error in rtl/cim_attention_tile_assertions.sv) sets gotError instead
    // of aborting the process; check_assertions() turns it into kvcim::Error.
    ctx->fatalOnError(false);
    if (!o.trace_path.empty()) {
      check_trace_path(o.trace_path);
      ctx->traceEverOn(true);
    }
    top = std::make_unique<Vcim_attention_tile>(ctx.get(), "tile");
    if (!o.trace_path.empty()) {
      vcd = std::make_unique<TraceWriter>();
      top->trace(vcd.get(), 99);
      vcd->open(o.trace_path.c_str());
      if (!vcd->isOpen()) fail(o.trace_path, "trace file", o.trace_path, "could not be opened for writing");
    }
    // Every control input is driven from the first cycle: under X randomisation (--x-initial
    // unique) an undriven input starts at a random value, e.g. evt_clear_i = 1 clearing the
    // counters on every cycle.
    top->clear_i = 0;
    top->evt_clear_i = 0;
    top->app_valid_i = 0;
    top->q_valid_i = 0;
    top->res_ready_i = 0;
    top->rst = 1;
    settle();
    tick();
    settle();
    tick();
    top->rst = 0;
    settle();
  }

  ~Impl() {
    // Verilator's scopes unregister themselves from the calling thread's current context
    // (Verilated::threadContextp()), not from their own: destroyed while another tile's context,
    // possibly a freed one, was current, they locked that context's mutex (a hang, seen when an
    // evaluation dropped its tiles in another order than it made them).
    enter();
    top->final();
    if (vcd) vcd->close();
#if VM_COVERAGE
    // The coverage build (testbench/coverage): one file per tile, merged by check_coverage.py.
    if (const char* dir = std::getenv("KVCIM_RTL_COVERAGE_DIR")) {
      static std::atomic<int> serial{0};
      const std::string path = std::string(dir) + "/tile_" + std::to_string(getpid()) + "_" +
                               std::to_string(serial++) + ".dat";
      ctx->coveragep()->write(path.c_str());
    }
#endif
    vcd.reset();
    top.reset();
    // The thread's current context is about to be freed: the next Verilator call on this thread
    // that finds none takes the last one made, or the default.
    Verilated::threadContextp(nullptr);
  }

  // Makes this tile's context the calling thread's current one. Verilator reports a failed
  // assertion ($error) to the thread's current context, which is the last one constructed on the
  // thread unless set: without this, one tile's assertion would be flagged on another tile's
  // context (or on a freed one), and check_assertions() would miss it.
  void enter() const {
    if (Verilated::threadContextp() != ctx.get()) Verilated::threadContextp(ctx.get());
  }

  bool withhold() { return opt.backpressure > 0.0 && stall(rng); }

  // Settles the combinational outputs for the current inputs, with the clock low.
  void settle() {
    enter();
    top->clk = 0;
    top->eval();
    // (settle() may run twice in one cycle, e.g. when append() waits for nothing: one dump a time)
    if (vcd && dumped != 2 * cycles) {
      vcd->dump(static_cast<uint64_t>(2 * cycles));
      dumped = 2 * cycles;
    }
  }
  // The rising edge (transfers, register updates, assertions). The next settle() lowers the clock.
  void tick() {
    enter();
    top->clk = 1;
    top->eval();
    if (vcd) vcd->dump(static_cast<uint64_t>(2 * cycles + 1));
    ++cycles;
    check_assertions();
  }
  void check_assertions() {
    if (ctx->gotError()) {
      ctx->gotError(false);
      ctx->gotFinish(false);
      fail("RtlTile", "assertion", "failed at cycle " + std::to_string(cycles),
           "the RTL assertions to hold (see the %Error line above)");
    }
  }

  void check_timeout(int64_t waited, const char* what) const {
    if (waited > opt.timeout_cycles)
      fail("RtlTile", what, "no handshake after " + std::to_string(waited) + " cycles",
           "the tile to respond (is the RTL stuck?)");
  }

  // Transfers one token; with `wait_done`, also clocks until the tile is idle again (the K column
  // group takes head_dim cycles), so that its events are complete when append() returns.
  void append(std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev, bool wait_done) {
    put_vector(top->app_k_i, k, params.kv_bits);
    put_vector(top->app_v_i, v, params.kv_bits);
    top->app_ek_i = static_cast<uint8_t>(ek);
    top->app_ev_i = static_cast<uint8_t>(ev);
    // Back-pressure delays raising valid; once raised, valid stays high until the transfer.
    for (int64_t waited = 0;; ++waited) {
      check_timeout(waited, "append");
      top->app_valid_i = (top->app_valid_i || !withhold()) ? 1 : 0;
      settle();
      const bool fire = top->app_valid_i && top->app_ready_o;
      tick();
      if (fire) break;
    }
    top->app_valid_i = 0;
    settle();
    for (int64_t waited = 0; wait_done && !top->q_ready_o; ++waited) {  // q_ready: idle again
      check_timeout(waited, "append completion");
      tick();
      settle();
    }
  }

  void start_query(std::span<const int8_t> q, uint16_t qmul, int qexp) {
    put_vector(top->q_i, q, params.kv_bits);
    top->qmul_i = qmul;
    top->qexp_i = static_cast<uint8_t>(qexp);
    top->res_ready_i = 0;
    for (int64_t waited = 0;; ++waited) {
      check_timeout(waited, "query");
      top->q_valid_i = (top->q_valid_i || !withhold()) ? 1 : 0;
      settle();
      const bool fire = top->q_valid_i && top->q_ready_o;
      tick();
      if (fire) break;
    }
    top->q_valid_i = 0;
    settle();
  }

  // Offers the append on the ports (payload already set) for `cycles` cycles, then resets with
  // valid still high (the protocol lets an offered append go only under reset). True if the tile
  // raised app_ready_o in any of those cycles: a full tile must not.
  bool offer_append_then_reset(int cycles) {
    top->app_valid_i = 1;
    bool ready = false;
    for (int i = 0; i < cycles; ++i) {
      settle();
      ready = ready || top->app_ready_o;
      tick();
    }
    top->rst = 1;
    settle();
    tick();
    top->rst = 0;
    top->app_valid_i = 0;
    settle();
    return ready;
  }

  TileResult finish_query() {
    TileResult r;
    for (int64_t waited = 0;; ++waited) {  // ready may drop again: only valid is sticky
      check_timeout(waited, "result");
      top->res_ready_i = withhold() ? 0 : 1;
      settle();
      const bool fire = top->res_valid_o && top->res_ready_i;
      if (fire) {
        r.o.resize(params.head_dim);
        for (int i = 0; i < params.head_dim; ++i)
          r.o[i] = static_cast<int32_t>(get_bits(top->o_o, 32 * i, 32));
        r.evmax = static_cast<int>(static_cast<int8_t>(top->evmax_o));
        r.ymax = static_cast<int64_t>(top->ymax_o);
        r.sum = static_cast<int64_t>(top->sum_o);
      }
      tick();
      if (fire) break;
    }
    top->res_ready_i = 0;
    settle();
    return r;
  }

  void pulse(CData& pin) {
    pin = 1;
    settle();
    tick();
    pin = 0;
    settle();
  }

  std::vector<uint64_t> counters() const {
    static const int n = static_cast<int>(rtl_counter_names().size());
    std::vector<uint64_t> c(n);
    for (int i = 0; i < n; ++i) c[i] = get_bits(top->counters_o, 64 * i, 64);
    return c;
  }
};

}  // namespace kvcim::rtl
