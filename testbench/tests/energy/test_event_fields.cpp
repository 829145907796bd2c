// The event structs are described once, by field tables (kvcim/fields.hpp): the sums, differences,
// scaling, the ledger's macro vocabulary and the RTL's counter list all come from those tables.
// These tests make each generated operation touch every counter, and catch a member declared
// outside its table (it would be left out of every sum without a compile error).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "kvcim/cmodel/energy/events.hpp"
#include "kvcim/fields.hpp"
#include "kvcim/runtime/cim_attention.hpp"
#include "kvcim/runtime/cim_linear.hpp"
#include "kvcim/rtl/rtl_tile.hpp"

namespace {

using namespace kvcim;
using cmodel::cim::MacroEvents;
using cmodel::cim::SoftmaxEvents;
using cmodel::cim::TileEvents;
using runtime::AttentionEvents;
using runtime::LinearEvents;

template <class S>
std::vector<int64_t> counters(const S& s) {
  std::vector<int64_t> out;
  for_each_counter(s, [&](const std::string&, int64_t v) { out.push_back(v); });
  return out;
}

template <class S>
std::vector<std::string> paths() {
  const S s;
  std::vector<std::string> out;
  for_each_counter(s, [&](const std::string& path, int64_t) { out.push_back(path); });
  return out;
}

// Every counter a different value: first + 7 i for counter i.
template <class S>
S numbered(int64_t first) {
  S s;
  int64_t i = 0;
  for_each_counter(s, [&](const std::string&, int64_t& v) { v = first + 7 * i++; });
  return s;
}

template <class S>
void expect_generated_arithmetic() {
  const S a = numbered<S>(100), b = numbered<S>(3);
  const std::vector<int64_t> ca = counters(a), cb = counters(b);
  S sum = a;
  sum += b;
  const std::vector<int64_t> cs = counters(sum), cd = counters(minus_fields(a, b)),
                             ct = counters(times_fields(a, 5));
  ASSERT_EQ(cs.size(), ca.size());
  for (size_t i = 0; i < ca.size(); ++i) {
    EXPECT_EQ(cs[i], ca[i] + cb[i]) << paths<S>()[i];
    EXPECT_EQ(cd[i], ca[i] - cb[i]) << paths<S>()[i];
    EXPECT_EQ(ct[i], ca[i] * 5) << paths<S>()[i];
  }
  EXPECT_TRUE(a == numbered<S>(100));
  EXPECT_FALSE(a == b);
  // A member outside the table would make the struct larger than its counters.
  EXPECT_EQ(sizeof(S), ca.size() * sizeof(int64_t)) << "a member of the struct is not in its field table";
}

TEST(EventFields, EverySumDifferenceAndScaleCoversEveryCounter) {
  expect_generated_arithmetic<MacroEvents>();
  expect_generated_arithmetic<SoftmaxEvents>();
  expect_generated_arithmetic<TileEvents>();
  expect_generated_arithmetic<AttentionEvents>();
  expect_generated_arithmetic<LinearEvents>();
}

TEST(EventFields, PathsNameNestedCountersOnce) {
  const std::vector<std::string> p = paths<TileEvents>();
  ASSERT_EQ(p.size(), 7u + 7u + 7u + 3u);
  EXPECT_EQ(p.front(), "k_macro.row_activations");
  EXPECT_EQ(p[7], "v_macro.row_activations");
  EXPECT_EQ(p[14], "softmax.multiplies");
  EXPECT_EQ(p.back(), "queries");
  EXPECT_EQ(std::set<std::string>(p.begin(), p.end()).size(), p.size());
  EXPECT_EQ(paths<AttentionEvents>().size(), 3 * p.size() + 3);
}

// The ledger charges MacroEvents' field i as EventKind i: the names must agree (row_activations
// is row_activation events, ..., cycles is macro_cycle).
TEST(EventFields, MacroFieldsAreTheLedgersMacroEventKindsInOrder) {
  const std::vector<std::string> p = paths<MacroEvents>();
  ASSERT_EQ(static_cast<int>(p.size()), cmodel::energy::kMacroEventKinds);
  for (size_t i = 0; i < p.size(); ++i) {
    std::string kind(cmodel::energy::name(static_cast<cmodel::energy::EventKind>(i)));
    if (kind.rfind("macro_", 0) == 0) kind = kind.substr(6);
    EXPECT_EQ(p[i].rfind(kind, 0), 0u) << p[i] << " charged as " << kind;
  }
  const auto counts = cmodel::energy::macro_event_counts(numbered<MacroEvents>(1));
  const std::vector<int64_t> c = counters(numbered<MacroEvents>(1));
  EXPECT_TRUE(std::equal(counts.begin(), counts.end(), c.begin()));
}

// The RTL's counters_o indices: TileEvents' counters in table order but the ADC conversions (the
// RTL's macros are digital), named by path; the SV source refers to them by these names.
TEST(EventFields, RtlCountersAreTheTileCountersButTheAdc) {
  const std::vector<std::string> names = rtl::rtl_counter_names();
  ASSERT_EQ(names.size(), 22u);
  EXPECT_EQ(names.front(), "K_MACRO_ROW_ACTIVATIONS");
  EXPECT_EQ(names[2], "K_MACRO_ADDER_OPS");
  EXPECT_EQ(names[12], "SOFTMAX_MULTIPLIES");
  EXPECT_EQ(names[19], "CYCLES");
  EXPECT_EQ(names.back(), "QUERIES");
  for (const std::string& n : names) EXPECT_EQ(n.find("ADC"), std::string::npos) << n;
}

}  // namespace
