// The fixed noise model's subset-sum table and its row lists (macro_fixed_subsets.hpp).
#include "macro_fixed_subsets.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <limits>

namespace kvcim::cmodel::cim::detail {

int32_t subset_sums(const int16_t* qdev, size_t stride, int rows, int cols, int rpc,
                    std::vector<int16_t, LineAllocator<int16_t>>& table) {
  const int nbg = subset_blocks_per_group(rpc), groups = (rows + rpc - 1) / rpc;
  const size_t entries = static_cast<size_t>(groups) * nbg * kSubsetMasks;
  if (entries * kGridTileCols > static_cast<size_t>(std::numeric_limits<int32_t>::max())) return -1;  // int32 offsets
  const size_t tile = subset_tile(rows, rpc);
  table.assign(tile * ((static_cast<size_t>(cols) + kGridTileCols - 1) / kGridTileCols), 0);
  int32_t top = 0;
  for (int c0 = 0; c0 < cols; c0 += kGridTileCols) {
    const int w = std::min(kGridTileCols, cols - c0);
    int16_t* t = table.data() + static_cast<size_t>(c0 / kGridTileCols) * tile;
    for (int g = 0; g < groups; ++g)
      for (int j = 0; j < nbg; ++j) {
        const int r0 = g * rpc + kSubsetRows * j;
        const int nr = std::min({kSubsetRows, (g + 1) * rpc - r0, rows - r0});  // the block's rows
        int16_t* blk = t + static_cast<size_t>(g * nbg + j) * kSubsetMasks * kGridTileCols;
        // each subset = its lowest row + the subset of the others (built before it: a smaller mask)
        for (int m = 1; m < (1 << std::max(nr, 0)); ++m) {
          const int16_t* low = qdev + static_cast<size_t>(r0 + std::countr_zero(static_cast<unsigned>(m))) * stride + c0;
          const int rest = m & (m - 1);
          const int16_t* other = rest != 0 ? blk + static_cast<size_t>(rest - 1) * kGridTileCols : nullptr;
          int16_t* out = blk + static_cast<size_t>(m - 1) * kGridTileCols;
          for (int col = 0; col < w; ++col) {
            const int32_t v = int32_t{low[col]} + (other != nullptr ? int32_t{other[col]} : 0);
            top = std::max(top, std::abs(v));
            out[col] = static_cast<int16_t>(v);  // wraps only where top > 32767: then not used
          }
        }
      }
  }
  return top > 32767 ? -1 : top;
}

int list_fixed_subsets(const uint32_t* u, int n_rows, int T, int G, int rpc,
                       std::vector<int>& row_begin, std::vector<int32_t>& row_off,
                       std::vector<int>& fetch_begin, std::vector<int32_t>& fetch_off) {
  uint32_t all = 0;
  for (size_t i = 0; i < static_cast<size_t>(n_rows) * T; ++i) all |= u[i];
  const int bits = std::bit_width(all), nbg = subset_blocks_per_group(rpc);
  constexpr size_t stride = kGridTileCols;  // an entry's columns in a tile
  row_begin.resize(static_cast<size_t>(T) * G * bits + 1);
  row_off.resize(static_cast<size_t>(T) * G * nbg * bits);
  thread_local std::vector<uint32_t> used;
  int m = 0;
  for (int k = 0; k < T; ++k)
    for (int g = 0; g < G; ++g)
      for (int b = 0; b < bits; ++b) {
        row_begin[(static_cast<size_t>(k) * G + g) * bits + b] = m;
        const int r1 = std::min(n_rows, (g + 1) * rpc);
        for (int j = 0; j < nbg && g * rpc + kSubsetRows * j < r1; ++j) {
          const int r0 = g * rpc + kSubsetRows * j;
          int mask = 0;
          for (int i = 0; i < kSubsetRows && r0 + i < r1; ++i)
            mask |= static_cast<int>((u[static_cast<size_t>(r0 + i) * T + k] >> b) & 1u) << i;
          // without a branch on the mask (random input bits mispredict): a skipped block's entry
          // is written and overwritten
          row_off[m] = static_cast<int32_t>((static_cast<size_t>(g * nbg + j) * kSubsetMasks + std::max(mask, 1) - 1) * stride);
          m += mask != 0 ? 1 : 0;
        }
      }
  row_begin[static_cast<size_t>(T) * G * bits] = m;
  // the subsets each block drives at any step, each listed once, in the order of first use
  used.assign(static_cast<size_t>(G) * nbg, 0);
  fetch_begin.resize(static_cast<size_t>(G) + 1);
  fetch_off.resize(static_cast<size_t>(G) * nbg * kSubsetMasks);
  int f = 0;
  for (int g = 0; g < G; ++g) {
    fetch_begin[g] = f;
    for (int k = 0; k < T; ++k) {
      const size_t s = (static_cast<size_t>(k) * G + g) * bits;
      for (int i = row_begin[s]; i < row_begin[s + bits]; ++i) {
        const auto e = static_cast<size_t>(row_off[i]) / stride;  // block * kSubsetMasks + mask - 1
        const uint32_t bit = 1u << (e % kSubsetMasks);
        fetch_off[f] = row_off[i];
        f += (used[e / kSubsetMasks] & bit) == 0 ? 1 : 0;
        used[e / kSubsetMasks] |= bit;
      }
    }
  }
  fetch_begin[G] = f;
  return bits;
}

}  // namespace kvcim::cmodel::cim::detail
