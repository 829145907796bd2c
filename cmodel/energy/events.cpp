#include "kvcim/cmodel/energy/events.hpp"

#include <vector>

#include "kvcim/cmodel/energy/config_reader.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel::energy {

namespace {
constexpr std::string_view kKindNames[] = {
    "row_activation", "column_read", "adc_conversion", "adder_op", "shift_add_op",
    "cell_write",     "macro_cycle", "buffer_bit",     "sram_bit", "dram_bit",
    "hbm_bit",        "int8_mac",    "fp16_mac",       "int32_add", "fp32_add",
    "fp32_mul",       "exp_op"};
constexpr std::string_view kComponentNames[] = {
    "array", "adc", "dac", "cell_write", "buffer", "offchip", "digital"};
constexpr std::string_view kOpNames[] = {
    "q_proj", "k_proj", "v_proj", "o_proj", "ffn_w1", "ffn_w2", "ffn_w3", "classifier",
    "attn_scores", "softmax", "attn_weighted_sum", "kv_write", "other"};

// A name missing from a table would silently print as "": the sizes must match the enums.
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

Component component_of(EventKind kind) {
  switch (kind) {
    case EventKind::row_activation: return Component::dac;
    case EventKind::column_read:
    case EventKind::adder_op:
    case EventKind::shift_add_op:
    case EventKind::macro_cycle: return Component::array;
    case EventKind::adc_conversion: return Component::adc;
    case EventKind::cell_write: return Component::cell_write;
    case EventKind::buffer_bit:
    case EventKind::sram_bit: return Component::buffer;
    case EventKind::dram_bit:
    case EventKind::hbm_bit: return Component::offchip;
    case EventKind::int8_mac:
    case EventKind::fp16_mac:
    case EventKind::int32_add:
    case EventKind::fp32_add:
    case EventKind::fp32_mul:
    case EventKind::exp_op: return Component::digital;
  }
  return Component::digital;
}

bool is_attention_op(Op op) {
  return op == Op::attn_scores || op == Op::softmax || op == Op::attn_weighted_sum ||
         op == Op::kv_write;
}

std::string_view name(EventKind kind) { return kKindNames[static_cast<int>(kind)]; }
std::string_view name(Component c) { return kComponentNames[static_cast<int>(c)]; }
std::string_view name(Op op) { return kOpNames[static_cast<int>(op)]; }

const std::array<EventKind, kEventKinds>& all_event_kinds() {
  static const auto all = [] {
    std::array<EventKind, kEventKinds> a{};
    for (int i = 0; i < kEventKinds; ++i) a[i] = static_cast<EventKind>(i);
    return a;
  }();
  return all;
}

const std::array<Component, kComponents>& all_components() {
  static const auto all = [] {
    std::array<Component, kComponents> a{};
    for (int i = 0; i < kComponents; ++i) a[i] = static_cast<Component>(i);
    return a;
  }();
  return all;
}

const std::array<Op, kOps>& all_ops() {
  static const auto all = [] {
    std::array<Op, kOps> a{};
    for (int i = 0; i < kOps; ++i) a[i] = static_cast<Op>(i);
    return a;
  }();
  return all;
}

EventKind parse_event_kind(const std::string& where, const std::string& text) {
  return parse_name<EventKind>(where, "event", text, kKindNames);
}

Op parse_op(const std::string& where, const std::string& text) {
  return parse_name<Op>(where, "op", text, kOpNames);
}

std::array<int64_t, 7> macro_event_counts(const cim::MacroEvents& e) {
  return {e.row_activations, e.column_reads, e.adc_conversions, e.adder_ops,
          e.shift_add_ops,   e.cell_writes,  e.cycles};
}

}  // namespace kvcim::cmodel::energy
