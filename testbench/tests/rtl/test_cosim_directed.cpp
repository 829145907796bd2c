// Directed co-simulation: corner cases, back-pressure on every handshake, reset in the middle of
// operations, the decode pattern, the documented latency, tracing. Every output integer and every
// event counter is compared with the C model, at the parameters the tile was built at (the
// defaults in test_rtl; the gate-level netlist's configuration in testbench/tests/rtl_gates, which
// compiles this file with KVCIM_RTL_GATES: no assertions in a netlist, no kvcim command).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "kvcim/error.hpp"
#include "kvcim/rtl/corner_problems.hpp"
#include "kvcim/rtl/rtl_tile.hpp"
#include "kvcim/rtl/rtl_tiles.hpp"
#include "kvcim/testbench/tile_hooks.hpp"
#include "tile_options.hpp"

namespace {

using namespace kvcim::cmodel::cim;
using namespace kvcim::rtl;
using namespace kvcim::testbench;

// The parameters the RTL under test was built at.
TileParams built() { return RtlTile::built_params(); }

TileProblem uniform_problem(int n, int8_t k, int8_t v, int8_t q, int ek, int ev, QueryScale s) {
  return kvcim::rtl::uniform_problem(built(), n, k, v, q, ek, ev, s);
}

// Runs the problem through a fresh C model and `rtl`; compares results and events.
void expect_same(RtlTile& rtl, const TileProblem& pr, const std::string& what) {
  CModelTile c(built());
  rtl.reset_events();
  const TileResult want = run_problem(c, pr);
  const TileResult got = run_problem(rtl, pr);
  EXPECT_EQ(diff_results(want, got), "") << what;
  EXPECT_EQ(diff_events(c.events(), rtl.events()), "") << what;
}

TEST(CosimDirected, AllZeros) {
  RtlTile rtl;
  const int T = built().tokens;
  for (int n : {1, 2, T - 1, T})
    expect_same(rtl, uniform_problem(n, 0, 0, 0, 0, 0, QueryScale{32768, 0}), "zeros n=" + std::to_string(n));
}

TEST(CosimDirected, Extremes) {
  RtlTile rtl;
  const TileParams p = built();
  const int T = p.tokens, D = p.head_dim;
  const int8_t lo = static_cast<int8_t>(-(1 << (p.kv_bits - 1)));
  const int8_t hi = static_cast<int8_t>((1 << (p.kv_bits - 1)) - 1);
  for (int n : {1, T})
    for (int8_t k : {lo, hi})
      for (int8_t v : {lo, hi})
        for (int8_t q : {lo, hi})
          for (QueryScale s : {QueryScale{65535, -128}, QueryScale{65535, 127}, QueryScale{32768, -20}})
            for (int e : {-128, 127}) {
              const std::string what = "n=" + std::to_string(n) + " k=" + std::to_string(k) +
                                       " v=" + std::to_string(v) + " q=" + std::to_string(q) +
                                       " qexp=" + std::to_string(s.qexp) + " e=" + std::to_string(e);
              expect_same(rtl, uniform_problem(n, k, v, q, e, e, s), what);
            }
  // The largest score: q = k = lo on all dims: s = D * lo^2 (8 * 16384 = 2^17 at the defaults:
  // needs the full K accumulator); mixed signs across tokens make the softmax pick it.
  std::mt19937_64 rng(1);
  TileProblem pr = uniform_problem(T, lo, hi, lo, -8, -8, QueryScale{65535, -30});
  for (int t = 1; t < T; t += 2) pr.k[t].assign(D, hi);
  for (int t = 0; t < T; t += 3) pr.v[t].assign(D, lo);
  expect_same(rtl, pr, "largest score");
  // Exponent extremes per token: rescale and fold shifts clamp at 62 and 31.
  for (int trial = 0; trial < 20; ++trial) {
    pr = random_problem(rng, p, T);
    for (int t = 0; t < T; ++t) {
      pr.ek[t] = (t % 2) ? -128 : 127;
      pr.ev[t] = (t % 3) ? -128 : 127;
    }
    expect_same(rtl, pr, "exponent extremes trial " + std::to_string(trial));
  }
}

TEST(CosimDirected, OneTokenAndAFullTile) {
  RtlTile rtl;
  const TileParams p = built();
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 20; ++trial) {
    expect_same(rtl, random_problem(rng, p, 1), "one token " + std::to_string(trial));
    expect_same(rtl, random_problem(rng, p, p.tokens), "full tile " + std::to_string(trial));
  }
  // A full tile refuses another token, in both implementations, with the same message.
  CModelTile c(p);
  const TileProblem pr = random_problem(rng, p, p.tokens);
  run_problem(c, pr);
  run_problem(rtl, pr);
  std::string mc, mr;
  try { c.append(pr.k[0], pr.v[0], 0, 0); } catch (const kvcim::Error& e) { mc = e.what(); }
  try { rtl.append(pr.k[0], pr.v[0], 0, 0); } catch (const kvcim::Error& e) { mr = e.what(); }
  EXPECT_NE(mc.find("tile full"), std::string::npos) << mc;
  EXPECT_NE(mr.find("tile full"), std::string::npos) << mr;
  EXPECT_EQ(rtl.tokens(), p.tokens);
}

TEST(CosimDirected, BackpressureOnEveryHandshake) {
  // 0.9: each valid (append, query) and the result ready are withheld 90% of the cycles.
  const TileParams p = built();
  for (double bp : {0.5, 0.9}) {
    RtlTile rtl(backpressured(bp, 77));
    CModelTile c(p);
    std::mt19937_64 rng(3);
    for (int trial = 0; trial < 40; ++trial) {
      const int n = std::uniform_int_distribution<int>(1, p.tokens)(rng);
      const TileProblem pr = random_problem(rng, p, n);
      const uint64_t before = rtl.sim_cycles();
      ASSERT_EQ(diff_results(run_problem(c, pr), run_problem(rtl, pr)), "") << bp << " " << trial;
      // stalls add clock cycles but no work: the tile's cycle counter still equals the C model's
      ASSERT_EQ(diff_events(c.events(), rtl.events()), "") << bp << " " << trial;
      EXPECT_GT(rtl.sim_cycles() - before,
                static_cast<uint64_t>(n * append_cycles(p) + query_cycles(p, n)));
    }
  }
}

TEST(CosimDirected, DocumentedLatency) {
  RtlTile rtl;
  const TileParams p = built();
  std::mt19937_64 rng(4);
  for (int n : {1, 5, p.tokens}) {
    const TileProblem pr = random_problem(rng, p, n);
    rtl.reset();
    const uint64_t t0 = rtl.sim_cycles();
    for (int t = 0; t < n; ++t) rtl.append(pr.k[t], pr.v[t], pr.ek[t], pr.ev[t]);
    const uint64_t t1 = rtl.sim_cycles();
    rtl.query(pr.q, pr.scale);
    const uint64_t t2 = rtl.sim_cycles();
    // an append takes head_dim cycles (the K column group, one wordline per cycle)
    EXPECT_EQ(t1 - t0, static_cast<uint64_t>(n * p.head_dim)) << n;
    // query transfer to result transfer: kv_bits + prob_bits + 3n + (divider stages - 1) + 4, the
    // divider pipelined in ceil(prob_bits / 4) stages
    const int stages = (p.prob_bits + 3) / 4;
    EXPECT_EQ(t2 - t1, static_cast<uint64_t>(p.kv_bits + p.prob_bits + 3 * n + stages - 1 + 4)) << n;
    EXPECT_EQ(t2 - t1, static_cast<uint64_t>(query_cycles(p, n))) << n;
  }
}

TEST(CosimDirected, ResetInTheMiddleOfAQueryOrAppend) {
  RtlTile rtl;
  std::mt19937_64 rng(5);
  const TileParams p = built();
  for (int at = 0; at <= query_cycles(p, 10) + 2; ++at) {
    const TileProblem pr = random_problem(rng, p, 10);
    rtl.reset();
    for (int t = 0; t < 10; ++t) rtl.append(pr.k[t], pr.v[t], pr.ek[t], pr.ev[t]);
    query_then_reset(rtl, pr.q, pr.scale.qmul, pr.scale.qexp, at);
    ASSERT_EQ(rtl.tokens(), 0) << at;
    ASSERT_EQ(rtl.events(), TileEvents{}) << at;  // reset zeroes the counters
    // the tile works normally afterwards
    const TileProblem next = random_problem(rng, p, std::uniform_int_distribution<int>(1, p.tokens)(rng));
    CModelTile c(p);
    ASSERT_EQ(diff_results(run_problem(c, next), run_problem(rtl, next)), "") << "reset at " << at;
    ASSERT_EQ(diff_events(c.events(), rtl.events()), "") << "reset at " << at;
  }
  for (int at = 0; at <= p.head_dim + 1; ++at) {
    const TileProblem pr = random_problem(rng, p, 3);
    rtl.reset();
    append_then_reset(rtl, pr.k[0], pr.v[0], pr.ek[0], pr.ev[0], at);
    ASSERT_EQ(rtl.tokens(), 0) << at;
    CModelTile c(p);
    ASSERT_EQ(diff_results(run_problem(c, pr), run_problem(rtl, pr)), "") << "append reset at " << at;
    ASSERT_EQ(diff_events(c.events(), rtl.events()), "") << "append reset at " << at;
  }
}

TEST(CosimDirected, DecodePatternAppendQueryAppend) {
  // As the runtime drives a tile: one token appended per step, a query after each, no reset.
  const TileParams p = built();
  RtlTile rtl;
  CModelTile c(p);
  std::mt19937_64 rng(6);
  const TileProblem pr = random_problem(rng, p, p.tokens);
  for (int t = 0; t < p.tokens; ++t) {
    c.append(pr.k[t], pr.v[t], pr.ek[t], pr.ev[t]);
    rtl.append(pr.k[t], pr.v[t], pr.ek[t], pr.ev[t]);
    // an append's events are complete when append() returns (the runtime reads them then)
    ASSERT_EQ(diff_events(c.events(), rtl.events()), "") << "after append " << t;
    const TileProblem q = random_problem(rng, p, 1);  // a fresh query each step
    ASSERT_EQ(diff_results(c.query(q.q, q.scale), rtl.query(q.q, q.scale)), "") << t;
    ASSERT_EQ(diff_events(c.events(), rtl.events()), "") << t;
  }
}

TEST(CosimDirected, SameErrorsAsTheCModel) {
  const TileParams p = built();
  RtlTile rtl;
  CModelTile c(p);
  // (v8: one head_dim vector, v7: one element short)
  const std::vector<int8_t> v8(p.head_dim, 1), v7(p.head_dim - 1, 1);
  auto msg = [](auto&& f) {
    try { f(); } catch (const kvcim::Error& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  EXPECT_NE(msg([&] { rtl.query(v8, 40000, -20); }), "no error");  // no tokens
  EXPECT_NE(msg([&] { rtl.append(v7, v8, 0, 0); }), "no error");
  EXPECT_NE(msg([&] { rtl.append(v8, v8, 300, 0); }), "no error");
  rtl.append(v8, v8, 0, 0);
  c.append(v8, v8, 0, 0);
  EXPECT_NE(msg([&] { rtl.query(v8, 10, -20); }), "no error");
  // the RTL's messages name the same fields and values (the checks are shared)
  EXPECT_EQ(msg([&] { rtl.query(v8, 40000, 999); }).substr(msg([&] { rtl.query(v8, 40000, 999); }).find(": ")),
            msg([&] { c.query(v8, 40000, 999); }).substr(msg([&] { c.query(v8, 40000, 999); }).find(": ")));
  EXPECT_THROW(RtlTile(backpressured(1.0, 1)), kvcim::Error);
}

// The big-endian unsigned integer of 8 bytes at `at` (FST's header fields).
uint64_t be64(const std::string& bytes, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return v;
}

// The trace is written in the format of the build (FST by default, GTKWave's; VCD with
// -DKVCIM_RTL_TRACE=vcd), records every cycle, and changes no result.
TEST(CosimDirected, TraceWritesTheBuiltFormatAndChangesNothing) {
  const std::string format = RtlTile::trace_format();
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kvcim_tile_trace_" + std::to_string(::getpid()) + "." + format)).string();
  std::mt19937_64 rng(7);
  const TileProblem pr = random_problem(rng, built(), std::min(12, built().tokens));
  TileResult traced;
  int64_t working_cycles = 0;
  {
    RtlTile rtl(with_trace(path));
    traced = run_problem(rtl, pr);
    working_cycles = rtl.events().cycles;
  }
  CModelTile c(built());
  EXPECT_EQ(diff_results(run_problem(c, pr), traced), "");
  std::ifstream f(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (format == "vcd") {
    EXPECT_NE(text.find("$enddefinitions"), std::string::npos);
    EXPECT_NE(text.find("res_valid_o"), std::string::npos);
  } else {
    // FST's header block (fstapi.c): type 0, 329 bytes, start and end time, the endianness test
    // double e, memory, scopes, variables. The end time is the last dump, two per clock cycle.
    ASSERT_GT(text.size(), 330u);
    EXPECT_EQ(text[0], 0);
    EXPECT_EQ(be64(text, 1), 329u);
    EXPECT_EQ(be64(text, 9), 0u);
    EXPECT_GT(be64(text, 17), 2 * static_cast<uint64_t>(working_cycles));  // every working cycle
    double e = 0;
    std::memcpy(&e, text.data() + 25, sizeof e);
    EXPECT_EQ(e, 2.7182818284590452354);
    EXPECT_GT(be64(text, 57), 50u);  // variables: every port and register of the tile
  }
  std::filesystem::remove(path);
  EXPECT_THROW(RtlTile(with_trace("/nonexistent-dir/x." + format)), kvcim::Error);
  // a name of the other format is refused, naming what this build writes
  const std::string other = format == "fst" ? "vcd" : "fst";
  try {
    RtlTile wrong(with_trace((std::filesystem::temp_directory_path() / ("kvcim_wrong." + other)).string()));
    FAIL() << "accepted a ." << other << " name";
  } catch (const kvcim::Error& err) {
    EXPECT_NE(std::string(err.what()).find("writes " + format + " traces"), std::string::npos) << err.what();
  }
}

}  // namespace

#ifndef KVCIM_RTL_GATES  // (the kvcim command runs the RTL build, not the netlist)
namespace {

// `kvcim cosim` from the command line, with its defaults: every built configuration (the linked
// one and each module of the table, all built by `make build`), random problems, corners and port
// stimulus under back-pressure, exits 0; bad arguments exit 2.
std::string run(const std::string& args, int& rc) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("kvcim_cosim_" + std::to_string(::getpid()) + ".txt")).string();
  rc = WEXITSTATUS(std::system((std::string(KVCIM_KVCIM_EXE) + " cosim " + args + " > " + out + " 2>&1").c_str()));
  std::ifstream f(out);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::filesystem::remove(out);
  return text;
}

TEST(CosimCommand, DefaultRunsEveryConfigurationAndPasses) {
  if (!std::filesystem::exists(KVCIM_KVCIM_EXE)) GTEST_SKIP() << "kvcim not built: " << KVCIM_KVCIM_EXE;
  int rc = 0;
  const std::string text = run("", rc);
  EXPECT_EQ(rc, 0) << text;
  EXPECT_NE(text.find("cosim: passed, 6 configurations"), std::string::npos) << text;
  EXPECT_NE(text.find(rtl_config_name(built()) + " (linked)"), std::string::npos) << text;
  EXPECT_EQ(text.find("mismatches 1"), std::string::npos) << text;
}

TEST(CosimCommand, RejectsBadArgumentsWithExit2) {
  if (!std::filesystem::exists(KVCIM_KVCIM_EXE)) GTEST_SKIP() << "kvcim not built: " << KVCIM_KVCIM_EXE;
  int rc = 0;
  for (const char* bad : {"--tokens 65", "--trials 0", "--backpressure 1", "--config hd1_t1_kv1_p1",
                          "--port-episodes -1"}) {
    const std::string text = run(bad, rc);
    EXPECT_EQ(rc, 2) << bad << ": " << text;
  }
  const std::string text = run("--config " + rtl_config_name(built()) + " --trials 20 --port-episodes 2", rc);
  EXPECT_EQ(rc, 0) << text;
  EXPECT_NE(text.find("cosim: passed, 1 configuration"), std::string::npos) << text;
}

}  // namespace
#endif

namespace {

// Port-level corners the AttentionTile checks refuse, for the coverage targets (an empty-tile query,
// back-pressure on the append port, an append refused by a full tile).
TEST(CosimDirected, PortCornersTheCheckedInterfaceRefuses) {
  const TileParams p = built();
  RtlTile rtl;
  const int8_t q3 = static_cast<int8_t>(std::min(3, (1 << (p.kv_bits - 1)) - 1));  // 3, or the largest
  const std::vector<int8_t> q(p.head_dim, q3), k(p.head_dim, 1), v(p.head_dim, -2);
  const TileResult empty = query_unchecked(rtl, q, 32768, 0);
  EXPECT_EQ(empty.sum, 0);
  for (int32_t o : empty.o) EXPECT_EQ(o, 0);
  const uint64_t before = rtl.sim_cycles();
  append_back_to_back(rtl, k, v);
  EXPECT_EQ(rtl.tokens(), 2);
  EXPECT_GE(rtl.sim_cycles() - before, static_cast<uint64_t>(2 * p.head_dim));  // the 2nd waited
  CModelTile c(p);
  c.append(k, v, 0, 0);
  c.append(k, v, 0, 0);
  EXPECT_EQ(diff_results(c.query(q, 32768, 0), rtl.query(q, 32768, 0)), "");
  while (rtl.tokens() < p.tokens) rtl.append(k, v, 0, 0);
  offer_append_to_full_tile_then_reset(rtl, k, v, 3);
  EXPECT_EQ(rtl.tokens(), 0);
}

#ifndef KVCIM_RTL_GATES  // (a flattened netlist has no assertions bound to it)
// The assertions (rtl/cim_attention_tile_assertions.sv, Verilated with --assert) fire when the
// harness breaks the valid/ready protocol on purpose, on each input port and for each field of its
// payload (an assertion that leaves a field out turns its test red); every other test proves them
// silent (a failing assertion throws out of any harness call). The result port's assertions guard
// the tile's own outputs, which no port can break: the mutation script checks them
// (scripts/rtl_mutations.sh).
struct BrokenCase {
  Broken what;
  const char* name;
  const char* message;  // the assertion's $error text
};

// (the test's name in CTest: the case's name, not the struct's bytes)
void PrintTo(const BrokenCase& c, std::ostream* os) { *os << c.name; }

class RtlAssertions : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(RtlAssertions, FireWhenTheHandshakeIsBroken) {
  const BrokenCase& c = GetParam();
  RtlTile rtl;
  std::string error;
  // Verilator prints the $error line (naming the assertion) on stdout; the harness throws.
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  try {
    break_handshake(rtl, c.what);
  } catch (const kvcim::Error& e) {
    error = e.what();
  }
  const std::string printed = ::testing::internal::GetCapturedStdout() + ::testing::internal::GetCapturedStderr();
  ASSERT_NE(error, "") << c.name << ": no assertion fired";
  EXPECT_NE(error.find("assertion"), std::string::npos) << error;
  EXPECT_NE(printed.find(c.message), std::string::npos) << c.name << ": " << printed;
}

INSTANTIATE_TEST_SUITE_P(
    EveryPortAndField, RtlAssertions,
    ::testing::Values(BrokenCase{Broken::app_valid, "app_valid", "append valid dropped before ready"},
                      BrokenCase{Broken::app_k, "app_k", "append payload changed while waiting"},
                      BrokenCase{Broken::app_v, "app_v", "append payload changed while waiting"},
                      BrokenCase{Broken::app_ek, "app_ek", "append payload changed while waiting"},
                      BrokenCase{Broken::app_ev, "app_ev", "append payload changed while waiting"},
                      BrokenCase{Broken::q_valid, "q_valid", "query valid dropped before ready"},
                      BrokenCase{Broken::q_q, "q", "query payload changed while waiting"},
                      BrokenCase{Broken::q_qmul, "qmul", "query payload changed while waiting"},
                      BrokenCase{Broken::q_qexp, "qexp", "query payload changed while waiting"}),
    [](const ::testing::TestParamInfo<BrokenCase>& info) { return std::string(info.param.name); });
#endif

}  // namespace
