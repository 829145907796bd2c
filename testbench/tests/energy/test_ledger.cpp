// The ledger: every breakdown sums exactly to the total, counts accumulate by (layer, op,
// kind), bad input is rejected.
#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <utility>

#include "kvcim/cmodel/energy/ledger.hpp"
#include "kvcim/error.hpp"

using namespace kvcim::cmodel::energy;

namespace {

Costs random_costs(std::mt19937_64& rng) {
  Costs c;
  c.table = "random";
  std::uniform_int_distribution<int64_t> e(0, 5'000'000), t(0, 2'000'000);
  for (int i = 0; i < kEventKinds; ++i) {
    c.energy_aj[i] = e(rng);
    c.latency_fs[i] = t(rng);
  }
  return c;
}

Ledger random_ledger(std::mt19937_64& rng, int layers, int adds) {
  Ledger l(layers);
  std::uniform_int_distribution<int> layer(-1, layers - 1), op(0, kOps - 1), kind(0, kEventKinds - 1);
  std::uniform_int_distribution<int64_t> n(0, 1'000'000);
  for (int i = 0; i < adds; ++i)
    l.add(layer(rng), static_cast<Op>(op(rng)), static_cast<EventKind>(kind(rng)), n(rng));
  return l;
}

}  // namespace

TEST(Ledger, BreakdownsSumExactlyToTotal) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int layers = 1 + trial % 9;
    Ledger l = random_ledger(rng, layers, 50 + trial);
    const Costs c = random_costs(rng), a = random_costs(rng);
    for (const Costs* attention : {static_cast<const Costs*>(nullptr), &a}) {
      const Breakdown b = l.cost(c, attention);
      int64_t by_comp = 0, by_op = 0, by_layer = 0, by_kind = 0, t_comp = 0, t_op = 0, t_layer = 0;
      for (auto x : b.component_energy_aj) by_comp += x;
      for (auto x : b.op_energy_aj) by_op += x;
      for (auto x : b.layer_energy_aj) by_layer += x;
      for (auto x : b.kind_energy_aj) by_kind += x;
      for (auto x : b.component_latency_fs) t_comp += x;
      for (auto x : b.op_latency_fs) t_op += x;
      for (auto x : b.layer_latency_fs) t_layer += x;
      ASSERT_EQ(by_comp, b.energy_aj);
      ASSERT_EQ(by_op, b.energy_aj);
      ASSERT_EQ(by_layer, b.energy_aj);
      ASSERT_EQ(by_kind, b.energy_aj);
      ASSERT_EQ(t_comp, b.latency_fs);
      ASSERT_EQ(t_op, b.latency_fs);
      ASSERT_EQ(t_layer, b.latency_fs);
      // The total is the plain sum of count x cost over kinds, computed independently here.
      int64_t expect = 0;
      for (auto op : all_ops())
        for (auto k : all_event_kinds()) {
          const Costs& cc = attention && is_attention_op(op) ? *attention : c;
          expect += l.count(op, k) * cc.energy(k);
        }
      ASSERT_EQ(expect, b.energy_aj);
    }
  }
}

TEST(Ledger, ComponentOfEachKindIsWhereItsEnergyGoes) {
  Costs c;
  for (int i = 0; i < kEventKinds; ++i) c.energy_aj[i] = 1000 + i;
  Ledger l(2);
  l.add(1, Op::attn_scores, EventKind::adc_conversion, 3);
  l.add(0, Op::q_proj, EventKind::row_activation, 5);
  l.add(kModelLevel, Op::classifier, EventKind::hbm_bit, 7);
  const Breakdown b = l.cost(c);
  EXPECT_EQ(b.component_energy_aj[static_cast<int>(Component::adc)], 3 * (1000 + 2));
  EXPECT_EQ(b.component_energy_aj[static_cast<int>(Component::dac)], 5 * 1000);
  EXPECT_EQ(b.component_energy_aj[static_cast<int>(Component::offchip)], 7 * (1000 + 10));
  EXPECT_EQ(b.layer_energy_aj[1], 3 * 1002);
  EXPECT_EQ(b.layer_energy_aj[2], 7 * 1010);  // model level is the last slot
  EXPECT_EQ(b.op_energy_aj[static_cast<int>(Op::classifier)], 7 * 1010);
}

TEST(Ledger, CountsAccumulateAndMerge) {
  Ledger a(3), b(1);
  a.add(2, Op::ffn_w1, EventKind::int8_mac, 10);
  a.add(2, Op::ffn_w1, EventKind::int8_mac, 5);
  b.add(0, Op::ffn_w1, EventKind::int8_mac, 1);
  b.add(5, Op::kv_write, EventKind::cell_write, 4);  // grows to layer 5
  EXPECT_EQ(a.count(2, Op::ffn_w1, EventKind::int8_mac), 15);
  EXPECT_EQ(b.n_layers(), 6);
  a += b;
  EXPECT_EQ(a.count(Op::ffn_w1, EventKind::int8_mac), 16);
  EXPECT_EQ(a.count(EventKind::cell_write), 4);
  a *= 3;
  EXPECT_EQ(a.count(Op::ffn_w1, EventKind::int8_mac), 48);
  Ledger c = a;
  EXPECT_TRUE(c == a);
  c.add(0, Op::other, EventKind::fp32_add, 1);
  EXPECT_FALSE(c == a);
}

// Each macro counter lands in its own event kind, and every counter of MacroEvents' table has one.
TEST(Ledger, MacroEventsMapOneToOne) {
  using kvcim::cmodel::cim::MacroEvents;
  const std::pair<int64_t MacroEvents::*, EventKind> kinds[] = {
      {&MacroEvents::row_activations, EventKind::row_activation},
      {&MacroEvents::column_reads, EventKind::column_read},
      {&MacroEvents::adc_conversions, EventKind::adc_conversion},
      {&MacroEvents::adder_ops, EventKind::adder_op},
      {&MacroEvents::shift_add_ops, EventKind::shift_add_op},
      {&MacroEvents::cell_writes, EventKind::cell_write},
      {&MacroEvents::cycles, EventKind::macro_cycle},
  };
  ASSERT_EQ(std::size(kinds), static_cast<size_t>(kvcim::field_count<MacroEvents>()));
  MacroEvents e;
  for (size_t i = 0; i < std::size(kinds); ++i) e.*kinds[i].first = static_cast<int64_t>(i) + 1;
  Ledger l(1);
  l.add_macro(0, Op::v_proj, e);
  for (size_t i = 0; i < std::size(kinds); ++i)
    EXPECT_EQ(l.count(0, Op::v_proj, kinds[i].second), static_cast<int64_t>(i) + 1) << name(kinds[i].second);
}

TEST(Ledger, RejectsNegativeCountsBadLayersAndOverflow) {
  Ledger l(1);
  EXPECT_THROW(l.add(0, Op::q_proj, EventKind::int8_mac, -1), kvcim::Error);
  EXPECT_THROW(l.add(-2, Op::q_proj, EventKind::int8_mac, 1), kvcim::Error);
  l.add(0, Op::q_proj, EventKind::int8_mac, INT64_MAX - 1);
  EXPECT_THROW(l.add(0, Op::q_proj, EventKind::int8_mac, 2), kvcim::Error);
  // energies are 128-bit: beyond int64's 9.2 J they stay exact (a 70B token on DRAM is ~11 J)
  Costs c;
  c.energy_aj[static_cast<int>(EventKind::int8_mac)] = 2;
  EXPECT_EQ(l.cost(c).energy_aj, static_cast<Aj>(INT64_MAX - 1) * 2);
  EXPECT_EQ(l.energy_aj(c), static_cast<Aj>(INT64_MAX - 1) * 2);
  // serial latency stays int64 femtoseconds (2.5 hours): beyond it, an error
  c.latency_fs[static_cast<int>(EventKind::int8_mac)] = 2;
  EXPECT_THROW(l.cost(c), kvcim::Error);
}

TEST(Ledger, JsonCarriesTotalsAndBreakdowns) {
  Costs c;
  c.table = "t";
  c.energy_aj[static_cast<int>(EventKind::fp32_mul)] = 3'700'000;  // 3.7 pJ
  Ledger l(2);
  l.add(1, Op::softmax, EventKind::fp32_mul, 10);
  const auto j = l.to_json(c);
  EXPECT_DOUBLE_EQ(j["energy_pj"].get<double>(), 37.0);
  EXPECT_DOUBLE_EQ(j["energy_pj_by_op"]["softmax"].get<double>(), 37.0);
  EXPECT_DOUBLE_EQ(j["energy_pj_by_component"]["digital"].get<double>(), 37.0);
  EXPECT_DOUBLE_EQ(j["energy_pj_by_layer"][1].get<double>(), 37.0);
  EXPECT_EQ(j["events"]["fp32_mul"].get<int64_t>(), 10);
}

TEST(Events, NamesRoundTripAndSuggest) {
  for (auto k : all_event_kinds()) EXPECT_EQ(parse_event_kind("t", std::string(name(k))), k);
  for (auto op : all_ops()) EXPECT_EQ(parse_op("t", std::string(name(op))), op);
  try {
    parse_op("t", "q_prj");
    FAIL() << "accepted a misspelt op";
  } catch (const kvcim::Error& e) {
    EXPECT_NE(std::string(e.what()).find("q_proj"), std::string::npos) << e.what();
  }
}
