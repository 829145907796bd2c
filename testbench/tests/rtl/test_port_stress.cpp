// Port-independent random stimulus (kvcim/rtl/port_stress.hpp) on the default build: appends and
// queries offered in the same cycle, every handshake stalled, every result and every event counter
// equal to the C model replaying the transfers in firing order; its watchdog turns a stall into an
// error naming the handshake.
#include <gtest/gtest.h>

#include "kvcim/error.hpp"
#include "kvcim/rtl/port_stress.hpp"

namespace {

using namespace kvcim::rtl;

PortStressOptions options(int episodes, uint64_t seed, double backpressure) {
  PortStressOptions o;
  o.episodes = episodes;
  o.seed = seed;
  o.backpressure = backpressure;
  return o;
}

void expect_clean(const PortStressResult& r) {
  EXPECT_EQ(r.result_mismatches, 0) << (r.first.empty() ? "" : r.first.front());
  EXPECT_EQ(r.event_mismatches, 0) << (r.first.empty() ? "" : r.first.front());
}

TEST(PortStress, EveryTransferMatchesTheCModel) {
  RtlTile rtl;
  const PortStressResult r = port_stress(rtl, options(60, 11, 0.25));
  expect_clean(r);
  EXPECT_GT(r.appends, 60);
  EXPECT_GE(r.queries, 60);
  // the stimulus reaches the corners it exists for
  EXPECT_GT(r.same_cycle_offers, 0);
  for (int port = 0; port < 3; ++port) EXPECT_GT(r.stalls[port], 0) << "port " << port;
}

TEST(PortStress, WithoutAndWithHeavyBackpressure) {
  for (double bp : {0.0, 0.7}) {
    RtlTile rtl;
    const PortStressResult r = port_stress(rtl, options(20, 12, bp));
    expect_clean(r);
    EXPECT_GT(r.same_cycle_offers, 0) << bp;
  }
}

TEST(PortStress, WatchdogNamesTheStuckHandshake) {
  // Two quiet cycles are fewer than any query takes: the watchdog must fire and say what waits.
  RtlTile rtl;
  PortStressOptions o = options(5, 13, 0.0);
  o.watchdog_cycles = 2;
  try {
    port_stress(rtl, o);
    FAIL() << "no watchdog";
  } catch (const kvcim::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("watchdog"), std::string::npos) << what;
    EXPECT_NE(what.find("waiting for"), std::string::npos) << what;
  }
}

TEST(PortStress, RejectsBadOptions) {
  RtlTile rtl;
  EXPECT_THROW(port_stress(rtl, options(1, 1, 1.0)), kvcim::Error);
  EXPECT_THROW(port_stress(rtl, options(-1, 1, 0.0)), kvcim::Error);
}

}  // namespace
