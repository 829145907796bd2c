#include "kvcim/cmodel/energy/events.hpp"

#include <array>
#include <vector>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel::energy {

namespace {
// Every value of an enum of N values numbered from 0, in order.
template <class E, size_t N>
std::array<E, N> every_value() {
  std::array<E, N> a{};
  for (size_t i = 0; i < N; ++i) a[i] = static_cast<E>(i);
  return a;
}

// The event vocabulary, once: each kind's name and component, in enum order.
struct KindInfo {
  std::string_view name;
  Component component;
};
constexpr KindInfo kKinds[] = {
    {"row_activation", Component::dac},     {"column_read", Component::array},
    {"adc_conversion", Component::adc},     {"adder_op", Component::array},
    {"shift_add_op", Component::array},     {"cell_write", Component::cell_write},
    {"macro_cycle", Component::array},      {"buffer_bit", Component::buffer},
    {"sram_bit", Component::weight_sram},   {"dram_bit", Component::offchip},
    {"hbm_bit", Component::offchip},        {"wire_bit_um", Component::interconnect},
    {"int8_mac", Component::digital},       {"fp16_mac", Component::digital},
    {"int32_add", Component::digital},      {"int32_mul", Component::digital},
    {"fp32_add", Component::digital},       {"fp32_mul", Component::digital},
    {"exp_op", Component::digital},         {"lane_cycle", Component::control},
    {"leak_kib_ns", Component::leakage},    {"leak_lane_ns", Component::leakage},
    {"die_link_bit", Component::interconnect}, {"link_idle_ns", Component::leakage}};
constexpr std::string_view kKindNames[] = {
    kKinds[0].name,  kKinds[1].name,  kKinds[2].name,  kKinds[3].name,  kKinds[4].name,
    kKinds[5].name,  kKinds[6].name,  kKinds[7].name,  kKinds[8].name,  kKinds[9].name,
    kKinds[10].name, kKinds[11].name, kKinds[12].name, kKinds[13].name, kKinds[14].name,
    kKinds[15].name, kKinds[16].name, kKinds[17].name, kKinds[18].name, kKinds[19].name,
    kKinds[20].name, kKinds[21].name, kKinds[22].name, kKinds[23].name};
constexpr std::string_view kComponentNames[] = {
    "array",       "adc",          "dac",     "cell_write", "buffer",  "weight_sram",
    "kv_sram",     "offchip",      "interconnect", "digital", "control", "leakage"};
constexpr std::string_view kOpNames[] = {
    "q_proj", "k_proj", "v_proj", "o_proj", "ffn_w1", "ffn_w2", "ffn_w3", "classifier",
    "attn_scores", "softmax", "attn_weighted_sum", "kv_write", "other", "chip"};

// A name missing from a table would silently print as "": the sizes must match the enums.
static_assert(std::size(kKinds) == kEventKinds);
static_assert(std::size(kKindNames) == kEventKinds);
static_assert(std::size(kComponentNames) == kComponents);
static_assert(std::size(kOpNames) == kOps);

template <typename E, size_t N>
E parse_name(const std::string& where, const char* what, const std::string& text,
             const std::string_view (&names)[N]) {
  std::vector<std::string> known(std::begin(names), std::end(names));
  for (size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<E>(i);
  fail(where, what, "'" + text + "'", "unknown; " + suggestion(text, known));
}
}  // namespace

Component component_of(EventKind kind) { return kKinds[static_cast<int>(kind)].component; }

Component component_of(EventKind kind, Op op) {
  if (kind == EventKind::sram_bit && is_attention_op(op)) return Component::kv_sram;
  return component_of(kind);
}

bool is_attention_op(Op op) {
  return op == Op::attn_scores || op == Op::softmax || op == Op::attn_weighted_sum ||
         op == Op::kv_write;
}

std::string_view name(EventKind kind) { return kKindNames[static_cast<int>(kind)]; }
std::string_view name(Component c) { return kComponentNames[static_cast<int>(c)]; }
std::string_view name(Op op) { return kOpNames[static_cast<int>(op)]; }

const std::array<EventKind, kEventKinds>& all_event_kinds() {
  static const auto all = every_value<EventKind, kEventKinds>();
  return all;
}

const std::array<Component, kComponents>& all_components() {
  static const auto all = every_value<Component, kComponents>();
  return all;
}

const std::array<Op, kOps>& all_ops() {
  static const auto all = every_value<Op, kOps>();
  return all;
}

EventKind parse_event_kind(const std::string& where, const std::string& text) {
  return parse_name<EventKind>(where, "event", text, kKindNames);
}

Op parse_op(const std::string& where, const std::string& text) {
  return parse_name<Op>(where, "op", text, kOpNames);
}

std::array<int64_t, kMacroEventKinds> macro_event_counts(const cim::MacroEvents& e) {
  std::array<int64_t, kMacroEventKinds> counts{};
  size_t i = 0;
  for_each_counter(e, [&](const std::string&, int64_t n) { counts[i++] = n; });
  return counts;
}

}  // namespace kvcim::cmodel::energy
