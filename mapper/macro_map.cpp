#include "kvcim/mapper/macro_map.hpp"

#include <algorithm>
#include <cmath>

namespace kvcim::mapper {

MacroMap macro_map(const Placement& p) {
  const int64_t total = p.hw.organization.macros;
  const int64_t n = std::min(total, kMaxMacroMap);
  const double cells = static_cast<double>(p.hw.macro_cells());
  MacroMap out;
  out.used_cells.assign(n, 0.0);
  out.role.assign(n, 0);
  out.truncated = total > n;
  for (const auto& m : p.weights.matrices)
    for (int64_t b = 0; b < m.onchip_blocks; ++b) {
      const int64_t macro = m.first_macro + b;
      if (macro >= n) break;
      out.role[macro] = 1;
      out.used_cells[macro] += static_cast<double>(m.block_cells(b, p.hw.macro));
    }
  const KvLayout& kv = p.kv;
  const int64_t kv_first = p.weights.macros_used;
  for (int64_t i = kv_first; i < std::min(n, kv_first + kv.macros); ++i) out.role[i] = 2;
  // without block tables (placements beyond kMaxGrownPages) KV cells are not located
  if (kv.pages_per_tile <= 0 || kv.tokens_per_page <= 0 || !p.allocator_grown) return out;
  auto add_cells = [&](double offset, double used) {  // KV-area cells -> macros
    while (used > 0) {
      const int64_t macro = kv_first + static_cast<int64_t>(offset / cells);
      if (macro >= n) return;
      const double room = cells - std::fmod(offset, cells);
      const double take = std::min(room, used);
      out.used_cells[macro] += take;
      used -= take;
      offset += take;
    }
  };
  const double page_cells = static_cast<double>(kv.page_cells());
  const double token_cells = static_cast<double>(kv.token_cells());
  for (int seq = 0; seq < kv.sequences; ++seq) {
    const int64_t length = p.allocator.length(seq);
    for (int layer = 0; layer < kv.layers; ++layer)
      for (int head = 0; head < kv.stored_heads; ++head) {
        const auto& table = p.allocator.block_table(p.allocator.stream(seq, layer, head));
        for (size_t page = 0; page < table.size(); ++page) {
          if (table[page].where != Where::cim) continue;
          const int64_t first = static_cast<int64_t>(page) * kv.tokens_per_page;
          const int64_t tokens = std::clamp<int64_t>(length - first, 0, kv.tokens_per_page);
          const int64_t slot = table[page].slot;
          const double offset = static_cast<double>(slot / kv.pages_per_tile) *
                                    static_cast<double>(kv.tile_cells) +
                                static_cast<double>(slot % kv.pages_per_tile) * page_cells;
          add_cells(offset, static_cast<double>(tokens) * token_cells);
        }
      }
  }
  return out;
}

const char* macro_role_name(uint8_t role) {
  static const char* roles[] = {"unused", "weights", "kv"};
  return role < 3 ? roles[role] : "unused";
}

nlohmann::json macro_map_json(const Placement& p) {
  const MacroMap mm = macro_map(p);
  const double cells = static_cast<double>(p.hw.macro_cells());
  nlohmann::json role = nlohmann::json::array(), used = nlohmann::json::array();
  for (size_t i = 0; i < mm.role.size(); ++i) {
    role.push_back(macro_role_name(mm.role[i]));
    used.push_back(cells > 0 ? std::min(1.0, mm.used_cells[i] / cells) : 0.0);
  }
  return {{"role", role}, {"utilization", used}, {"truncated", mm.truncated}};
}

}  // namespace kvcim::mapper
