// Named conventional machines (mapper/machine.hpp): the files parse strictly, the decode step is
// a roofline with hand-countable bytes and MACs, static and active energy are power x step time,
// a MAC costs the board its TDP share, no batch-1 step beats the HBM roofline, a regime the HBM
// cannot hold is refused with the shortfall, and every published measurement is reproduced to
// the uncertainty docs/baseline.md states.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/machine.hpp"
#include "kvcim/mapper/shape.hpp"
#include "spec_text.hpp"

using namespace kvcim::mapper;

namespace {

std::string shipped_text(const std::string& name) {
  return kvcim::test::source_text("configs/machines/" + name + ".yaml");
}

std::string refusal(const std::string& yaml) {
  return kvcim::test::refusal_of([](const std::string& t) { machine_from_text(t, "bad.yaml"); }, yaml);
}

using kvcim::test::replaced;

// docs/baseline.md shows `table` as `kvcim baseline --validate` prints it
void expect_in_baseline_docs(const std::string& table) {
  std::ifstream in(std::string(KVCIM_SOURCE_DIR) + "/docs/baseline.md");
  std::ostringstream docs;
  docs << in.rdbuf();
  EXPECT_NE(docs.str().find(table), std::string::npos)
      << "docs/baseline.md is not the output of kvcim baseline --validate:\n" << table;
}

}  // namespace

TEST(Machine, ShippedMachinesParseWithEveryFieldSourced) {
  const std::vector<std::string> names = machine_names();
  ASSERT_GE(names.size(), 2u);
  for (const std::string& n : names) {
    const Machine m = machine_by_name(n);
    EXPECT_EQ(m.name, n);
    EXPECT_EQ(kvcim::provenance_of(m).size(), 16u);
    for (const auto& [field, text] : kvcim::provenance_of(m))
      EXPECT_TRUE(text.rfind("source: ", 0) == 0 || text.rfind("assumption: ", 0) == 0) << field;
  }
  const Machine h = machine_by_name("h100-sxm");
  EXPECT_DOUBLE_EQ(h.hbm_bandwidth_gb_s, 3352);
  EXPECT_DOUBLE_EQ(h.hbm_capacity_gb, 80);
}

TEST(Machine, BadFilesAreRefusedNamingTheField) {
  const std::string good = shipped_text("h100-sxm");
  ASSERT_EQ(refusal(good), "");
  EXPECT_NE(refusal(replaced(good, "tdp_w:", "tdpw:")).find("did you mean 'tdp_w'"), std::string::npos);
  EXPECT_NE(refusal(replaced(good, "{value: 700, source:", "{value: 700, sauce:")).find("tdp_w"), std::string::npos);
  EXPECT_NE(refusal(replaced(good, "{value: 3352,", "{value: -1,")).find("hbm_bandwidth_gb_s.value"),
            std::string::npos);
  EXPECT_NE(refusal(replaced(good, "{value: 70, source:", "{value: 650, source:")).find("active_power_w"),
            std::string::npos);
  // a field left out
  const size_t l1 = good.find("l1_pj_per_bit:");
  const std::string missing = good.substr(0, l1) + good.substr(good.find('\n', l1) + 1);
  EXPECT_NE(refusal(missing).find("l1_pj_per_bit"), std::string::npos);
  EXPECT_NE(refusal("[1, 2]").find("bad.yaml"), std::string::npos);
  EXPECT_NE(refusal("a: [").find("bad.yaml"), std::string::npos);
  // a reason of one word is no reasoning
  EXPECT_NE(refusal(replaced(good, "assumption: \"derived from", "assumption: \"x\", x: \"derived from")).find("bad.yaml"),
            std::string::npos);
}

TEST(Machine, UnknownNameListsTheKnownOnes) {
  try {
    machine_by_name("h200");
    FAIL();
  } catch (const kvcim::Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("'h200'"), std::string::npos);
    EXPECT_NE(w.find("a100-80gb"), std::string::npos);
    EXPECT_NE(w.find("h100-sxm"), std::string::npos);
  }
}

// Bytes and MACs by hand for Llama-2-7B at batch 1, context 100, fp16.
TEST(Machine, StepCountsBytesAndMacsByHand) {
  const Machine m = machine_by_name("h100-sxm");
  const kvcim::cmodel::Config c = shape_preset("llama2-7b").config;
  const MachineStep s = machine_step(m, c, {1, 100, 16, 16});
  const double matrices = 32.0 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008) + 4096.0 * 32000;
  const double kv_token = 2.0 * 32 * 4096 * 2;  // K and V, 32 layers, 4096 wide, 2 bytes
  EXPECT_DOUBLE_EQ(s.weight_bytes, (matrices + 32000.0 * 4096) * 2);
  EXPECT_DOUBLE_EQ(s.kv_bytes, 100 * kv_token);
  EXPECT_DOUBLE_EQ(s.bytes_moved, matrices * 2 + 4096 * 2 + 101 * kv_token);
  EXPECT_DOUBLE_EQ(s.macs, matrices + 2.0 * 32 * 32 * 128 * 100);
  EXPECT_DOUBLE_EQ(s.roofline_ns, s.bytes_moved / 3352);
  EXPECT_DOUBLE_EQ(s.memory_ns, s.roofline_ns / 0.85);
  EXPECT_STREQ(s.bound(), "memory");
}

TEST(Machine, StaticEnergyIsPowerTimesStepTime) {
  int limited = 0;
  for (const std::string& n : machine_names()) {
    const Machine m = machine_by_name(n);
    for (int64_t b : {1, 8, 64, 256}) {
      const MachineStep s = machine_step(m, shape_preset("llama3-8b").config, {b, 512, 16, 16});
      EXPECT_DOUBLE_EQ(s.static_pj, m.idle_power_w * s.step_ns * 1e3) << n << " batch " << b;
      EXPECT_DOUBLE_EQ(s.active_pj, m.active_power_w * s.step_ns * 1e3) << n << " batch " << b;
      EXPECT_DOUBLE_EQ(s.tdp_pj, m.tdp_w * s.step_ns * 1e3);
      // the roofline's slower leg, or longer at the board's power limit, drawing exactly the TDP
      if (s.power_limited) {
        ++limited;
        // by hand: the dynamic energy over the power the TDP leaves above idle + active
        EXPECT_NEAR(s.step_ns, (s.memory_pj + s.wire_pj + s.compute_pj) / ((m.tdp_w - m.idle_power_w - m.active_power_w) * 1e3),
                    1e-9 * s.step_ns);
        EXPECT_GT(s.step_ns, std::max(s.memory_ns, s.compute_ns)) << n << " batch " << b;
        EXPECT_NEAR(s.power_w(), m.tdp_w, 1e-9 * m.tdp_w) << n << " batch " << b;
        EXPECT_STREQ(s.bound(), "power");
      } else {
        EXPECT_DOUBLE_EQ(s.step_ns, std::max(s.memory_ns, s.compute_ns)) << n << " batch " << b;
      }
      // a decode step never draws more than the board's limit
      EXPECT_LE(s.power_w(), m.tdp_w * (1 + 1e-12)) << n << " batch " << b;
    }
  }
  // the A100 at batch 256: compute-bound with 256 sequences' KV read besides, at its limit
  EXPECT_GE(limited, 1);
}

// By hand for the H100 file: a fp16 MAC costs (700 - 80 - 87) W over the MACs per second the board
// sustains, 989.4e12 / 2 x 0.8; the batch-1 Llama-3-8B step at 1 token of context draws the 300 W
// its active power was derived from.
TEST(Machine, MacEnergyAndBatchOnePowerByHand) {
  const Machine m = machine_by_name("h100-sxm");
  EXPECT_NEAR(m.mac_pj(16), (700.0 - 70 - 97) / (989.4e12 / 2 * 0.8) * 1e12, 1e-12);
  EXPECT_NEAR(m.mac_pj(8), m.mac_pj(16) * 989.4 / 1978.9, 1e-12);
  const MachineStep s = machine_step(m, shape_preset("llama3-8b").config, {1, 1, 16, 16});
  const double memory_w = 0.85 * 3352e9 * 8 * (3.59 + 0.30 + 0.16) * 1e-12;
  const double wire_w = 0.85 * 3352e9 * 8 * 0.12 * (std::sqrt(814.0) / 2) * 1e-12;  // 14.3 mm
  EXPECT_NEAR(s.power_w(), 70 + 97 + memory_w + wire_w + s.compute_pj / s.step_ns * 1e-3, 1e-6);
  EXPECT_NEAR(s.power_w(), 300, 3);
}

// Every byte moved crosses half the die's side on wire: bytes x 8 x 0.12 pJ/bit/mm x sqrt(814) / 2 mm
// on the H100, sqrt(826) / 2 on the A100; the prefill's bytes likewise.
TEST(Machine, WireEnergyIsBytesTimesHalfTheDieSide) {
  const kvcim::cmodel::Config c = shape_preset("llama2-7b").config;
  for (const auto& [name, die] : {std::pair{"h100-sxm", 814.0}, std::pair{"a100-80gb", 826.0}}) {
    const Machine m = machine_by_name(name);
    EXPECT_DOUBLE_EQ(m.wire_mm(), std::sqrt(die) / 2) << name;
    for (int64_t b : {1, 64}) {
      const MachineStep s = machine_step(m, c, {b, 300, 16, 16});
      EXPECT_NEAR(s.wire_pj, s.bytes_moved * 8 * 0.12 * std::sqrt(die) / 2, 1e-9 * s.wire_pj) << name;
      EXPECT_NEAR(s.energy_pj(), s.static_pj + s.active_pj + s.memory_pj + s.wire_pj + s.compute_pj,
                  1e-9 * s.energy_pj());
    }
    const MachineStep p = machine_prefill(m, c, 300, 16);
    EXPECT_NEAR(p.wire_pj, p.bytes_moved * 8 * 0.12 * std::sqrt(die) / 2, 1e-9 * p.wire_pj) << name;
  }
}

// A prefill of P tokens: the weights once, P tokens' MACs and their causal attention.
TEST(Machine, PrefillCountsByHand) {
  const Machine m = machine_by_name("h100-sxm");
  const kvcim::cmodel::Config c = shape_preset("llama3-8b").config;
  const MachineStep p = machine_prefill(m, c, 100, 16);
  const double matrices = static_cast<double>(kvcim::cmodel::energy::weight_elements(c));
  EXPECT_DOUBLE_EQ(p.macs, 100 * matrices + 2.0 * 32 * 32 * 128 * (100.0 * 101 / 2));
  EXPECT_DOUBLE_EQ(p.bytes_moved, matrices * 2 + 100.0 * 4096 * 2 + 100.0 * 2 * 32 * 1024 * 2);
  EXPECT_DOUBLE_EQ(p.compute_pj, p.macs * m.mac_pj(16));
  // 100 tokens at once: far less time than 100 decode steps
  EXPECT_LT(p.step_ns, 100 * machine_step(m, c, {1, 50, 16, 16}).step_ns / 10);
}

// Every batch from 1 to 256 (powers of two and between), weights int8 or fp16 with int8 or fp16
// KV: no step is faster than its bytes over the peak HBM bandwidth, and none faster than every
// weight byte once over it (the batch-1 decode floor, which a batch shares and cannot beat).
TEST(Machine, NoStepBeatsTheHbmRoofline) {
  int checked = 0;
  for (const std::string& n : machine_names()) {
    const Machine m = machine_by_name(n);
    for (const char* preset : {"llama2-7b", "llama2-13b", "llama3-8b", "mistral-7b"}) {
      const kvcim::cmodel::Config c = shape_preset(preset).config;
      for (int64_t b : {1, 2, 3, 4, 8, 16, 24, 32, 64, 100, 128, 200, 256})
        for (int64_t ctx : {1, 512, 4096})
          for (int wbits : {8, 16})
            for (int kvbits : {8, 16}) {
              MachineStep s;
              try {
                s = machine_step(m, c, {b, ctx, wbits, kvbits});
              } catch (const kvcim::Error&) {
                continue;  // more than the HBM holds (tested below)
              }
              ++checked;
              const std::string at = n + " " + preset + " batch " + std::to_string(b);
              EXPECT_GE(s.step_ns, s.roofline_ns) << at;
              EXPECT_DOUBLE_EQ(s.roofline_ns, s.bytes_moved / m.hbm_bandwidth_gb_s) << at;
              const double weights = static_cast<double>(kvcim::cmodel::energy::weight_elements(c)) * wbits / 8;
              EXPECT_GE(s.step_ns, weights / m.hbm_bandwidth_gb_s) << at;
              // the step's time is the slower leg; each leg at a fraction <= 1 of its peak
              EXPECT_GE(s.memory_ns, s.roofline_ns) << at;
            }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(Machine, Int8WeightsHalveTheWeightBytes) {
  const Machine m = machine_by_name("a100-80gb");
  const kvcim::cmodel::Config c = shape_preset("llama2-7b").config;
  const MachineStep fp16 = machine_step(m, c, {1, 1, 16, 16}), int8 = machine_step(m, c, {1, 1, 8, 16});
  EXPECT_DOUBLE_EQ(int8.weight_bytes * 2, fp16.weight_bytes);
  EXPECT_LT(int8.energy_pj(), fp16.energy_pj());
}

TEST(Machine, MoreThanTheHbmHoldsIsRefusedWithTheShortfall) {
  const Machine m = machine_by_name("h100-sxm");
  // Llama-2-70B fp16: 138 GB of weights alone
  try {
    machine_step(m, shape_preset("llama2-70b").config, {1, 1, 16, 16});
    FAIL();
  } catch (const kvcim::Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("HBM capacity"), std::string::npos) << w;
    EXPECT_NE(w.find("more than the machine's HBM holds"), std::string::npos) << w;
  }
  // Llama-2-7B: 64 sequences x 4096 tokens of fp16 KV is 137 GB
  EXPECT_THROW(machine_step(m, shape_preset("llama2-7b").config, {64, 4096, 16, 16}), kvcim::Error);
  EXPECT_THROW(machine_step(m, shape_preset("llama2-7b").config, {0, 1, 16, 16}), kvcim::Error);
  EXPECT_THROW(machine_step(m, shape_preset("llama2-7b").config, {1, 0, 16, 16}), kvcim::Error);
  EXPECT_THROW(machine_step(m, shape_preset("llama2-7b").config, {1, 1, 4, 16}), kvcim::Error);
}

// docs/baseline.md shows the table `kvcim baseline --validate` prints; every reproduced
// measurement is held to the band the model computes, every software-gap row with a published rate
// to the uncertainty printed there.
TEST(Machine, MeasurementsReproducedToTheErrorTheDocsState) {
  const std::vector<Reproduction> rows = reproduce_measurements();
  ASSERT_EQ(rows.size(), measurements().size());
  expect_in_baseline_docs(validation_markdown(rows));
  int reproduced = 0;
  for (const Reproduction& x : rows) {
    // the model has no software overhead: it predicts less than every measurement
    EXPECT_LT(x.joules_per_token, x.m.joules_per_token) << x.m.id;
    EXPECT_GT(x.step.tdp_pj, x.step.energy_pj()) << x.m.id;
    EXPECT_LE(x.power_w, x.tdp_w) << x.m.id;
    EXPECT_EQ(x.tdp_w, machine_by_name(x.m.machine).tdp_w) << x.m.id;
    // the band's top is the board at its TDP with no overlap of memory and compute: above the model
    EXPECT_GT(x.joules_per_token_hi, x.joules_per_token) << x.m.id;
    if (x.m.tokens_per_s > 0) {
      EXPECT_GT(x.tokens_per_s, x.m.tokens_per_s) << x.m.id << ": faster than the roofline";
    }
    if (x.m.check == Check::reproduced) {
      ++reproduced;
      EXPECT_TRUE(x.in_band()) << x.m.id << ": " << x.m.joules_per_token << " J outside the model's band "
                               << x.joules_per_token << " - " << x.joules_per_token_hi;
      // and the measured board power between the model's and the TDP, the band's power bounds
      if (x.m.power_w > 0) {
        EXPECT_GE(x.m.power_w, x.power_w) << x.m.id;
        EXPECT_LE(x.m.power_w, x.tdp_w) << x.m.id;
      }
    } else if (x.m.uncertainty > 0) {
      // a run whose software the model lacks: the modelled power over the measured time
      EXPECT_LE(std::abs(x.rate_error), x.m.uncertainty) << x.m.id;
    }
  }
  EXPECT_GE(reproduced, 1);
  // the reproduced row's measurement is checking data only: no machine field mentions it
  for (const std::string& n : machine_names())
    EXPECT_EQ(shipped_text(n).find("0.12 J"), std::string::npos) << n;
}

// The measured batch sweep C3 v3 belongs to is printed beside the model (docs/baseline.md equals
// the command's output); each point shares C3 v3's regime but its batch, and its achieved
// bandwidth is the model's decode bytes over the measured time less the modelled prefill's.
TEST(Machine, BatchSweepShownBesideTheModelInC3sRegime) {
  const std::vector<Reproduction> rows = reproduce_batch_sweep();
  ASSERT_EQ(rows.size(), batch_sweep().size());
  expect_in_baseline_docs(batch_sweep_markdown(rows));
  const Reproduction c3 = reproduce_measurements().at(2);
  ASSERT_STREQ(c3.m.id, "C3 v3");
  const Machine h100 = machine_by_name("h100-sxm");
  int64_t last_batch = 0;
  for (const Reproduction& x : rows) {
    EXPECT_EQ(x.m.check, Check::shown) << x.m.id;
    EXPECT_GT(x.m.sequences, last_batch) << x.m.id;
    last_batch = x.m.sequences;
    EXPECT_EQ(x.m.context(), c3.m.context()) << x.m.id;
    EXPECT_DOUBLE_EQ(x.m.joules_per_token, x.m.power_w / x.m.tokens_per_s) << x.m.id;
    EXPECT_LE(x.m.power_w, h100.tdp_w) << x.m.id;
    // by hand: decode bytes per output token over the measured time per token less the prefill's
    const double ns = 1e9 / x.m.tokens_per_s - x.prefill.step_ns / static_cast<double>(x.m.output_tokens);
    const double bw = x.step.bytes_moved / static_cast<double>(x.m.sequences) / ns / h100.hbm_bandwidth_gb_s;
    EXPECT_NEAR(x.achieved_bandwidth_fraction, bw, 1e-12) << x.m.id;
    EXPECT_GT(x.achieved_bandwidth_fraction, 0) << x.m.id;
    EXPECT_LE(x.achieved_bandwidth_fraction, 1) << x.m.id << ": faster than the HBM's peak";
    if (x.m.sequences == c3.m.sequences) {
      // the same regime as the C3 v3 row: the same prediction, and the measurement within its rounding
      EXPECT_DOUBLE_EQ(x.joules_per_token, c3.joules_per_token);
      EXPECT_NEAR(x.m.joules_per_token, c3.m.joules_per_token, 0.005);
    }
  }
  EXPECT_EQ(last_batch, 256);
}

// A run slower than the model's step, by hand: the busy board for the modelled time per output
// token, the idle board for the rest of the measured time; between the model and the busy board
// over the measured time (idle power is below the busy board's).
TEST(Machine, HostGapsAtIdlePowerByHand) {
  int slower = 0;
  for (const Reproduction& x : reproduce_measurements()) {
    if (x.m.tokens_per_s <= 0) continue;
    const Machine m = machine_by_name(x.m.machine);
    const double modelled_s = 1 / x.tokens_per_s, measured_s = 1 / x.m.tokens_per_s;
    ASSERT_GT(measured_s, modelled_s) << x.m.id;
    ++slower;
    EXPECT_NEAR(x.joules_gaps_idle, x.joules_per_token + m.idle_power_w * (measured_s - modelled_s), 1e-9) << x.m.id;
    EXPECT_GT(x.joules_gaps_idle, x.joules_per_token) << x.m.id;
    EXPECT_LT(x.joules_gaps_idle, x.joules_at_measured_rate) << x.m.id;
    EXPECT_NEAR(x.gaps_idle_error, x.joules_gaps_idle / x.m.joules_per_token - 1, 1e-12) << x.m.id;
  }
  EXPECT_EQ(slower, 4);
}
