// The fixed noise model's subset-sum table and its row lists (macro_fixed_subsets.hpp).
#include "macro_fixed_subsets.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstdint>
#include <limits>

namespace kvcim::cmodel::cim::detail {

int32_t subset_sums(const int16_t* qdev, size_t stride, int rows, int cols, int rpc,
                    std::vector<int16_t, LineAllocator<int16_t>>& table) {
  const int nbg = subset_blocks_per_group(rpc), groups = (rows + rpc - 1) / rpc;
  const size_t entries = static_cast<size_t>(groups) * nbg * kSubsetMasks;
  if (entries * kGridTileCols > static_cast<size_t>(std::numeric_limits<int32_t>::max())) return -1;  // int32 offsets
  const size_t tile = subset_tile(rows, rpc);
  // Every entry a compute can read is written below (the columns below `cols`, the subsets of a
  // block's own rows): a thread's table is built again for each macro, and filling it first
  // would double the writes.
  table.resize(tile * ((static_cast<size_t>(cols) + kGridTileCols - 1) / kGridTileCols));
  // the smallest and largest sum, per column of a tile (one reduction at the end, not per loop)
  std::array<int32_t, kGridTileCols> lo{}, hi{};
  for (int c0 = 0; c0 < cols; c0 += kGridTileCols) {
    const int w = std::min(kGridTileCols, cols - c0);
    int16_t* t = table.data() + static_cast<size_t>(c0 / kGridTileCols) * tile;
    for (int g = 0; g < groups; ++g)
      for (int j = 0; j < nbg; ++j) {
        const int r0 = g * rpc + kSubsetRows * j;
        const int nr = std::min({kSubsetRows, (g + 1) * rpc - r0, rows - r0});  // the block's rows
        int16_t* blk = t + static_cast<size_t>(g * nbg + j) * kSubsetMasks * kGridTileCols;
        // each subset = its lowest row + the subset of the others (built before it: a smaller
        // mask); restrict pointers, so that the loops run in vectors
        for (int m = 1; m < (1 << std::max(nr, 0)); ++m) {
          const int16_t* __restrict low =
              qdev + static_cast<size_t>(r0 + std::countr_zero(static_cast<unsigned>(m))) * stride + c0;
          int16_t* __restrict out = blk + static_cast<size_t>(m - 1) * kGridTileCols;
          const int rest = m & (m - 1);
          if (rest == 0) {  // one row: its deviations
            for (int col = 0; col < w; ++col) {
              lo[col] = std::min(lo[col], int32_t{low[col]});
              hi[col] = std::max(hi[col], int32_t{low[col]});
              out[col] = low[col];
            }
            continue;
          }
          const int16_t* __restrict other = blk + static_cast<size_t>(rest - 1) * kGridTileCols;
          for (int col = 0; col < w; ++col) {
            const int32_t v = int32_t{low[col]} + int32_t{other[col]};
            lo[col] = std::min(lo[col], v);
            hi[col] = std::max(hi[col], v);
            out[col] = static_cast<int16_t>(v);  // wraps only where a bound leaves int16: then not used
          }
        }
      }
  }
  int32_t top = 0;
  for (int col = 0; col < kGridTileCols; ++col) top = std::max({top, hi[col], -lo[col]});
  return top > 32767 ? -1 : top;
}

namespace {
// Bits r .. r + n - 1 (n <= kSubsetRows, r + n <= the plane's rows) of a bit-plane of 64-row words.
inline uint32_t plane_bits(const uint64_t* plane, int r, int n) {
  const int w = r / 64, o = r % 64;
  uint64_t v = plane[w] >> o;
  if (o + n > 64) v |= plane[w + 1] << (64 - o);  // the block straddles two words
  return static_cast<uint32_t>(v) & ((1u << n) - 1u);
}
// The blocks of a plane's byte (bits 8 i .. 8 i + 7, byte-aligned rows): the offsets, from the
// byte's first block's entries, of the subsets its blocks with a driven row drive, in row order.
constexpr int kBlocksPerByte = 8 / kSubsetRows;
struct ByteBlocks {
  int32_t off[kBlocksPerByte];  // the first n listed; the rest 0, written and overwritten
  int n;
};
constexpr std::array<ByteBlocks, 256> byte_blocks() {
  std::array<ByteBlocks, 256> t{};
  for (int byte = 0; byte < 256; ++byte)
    for (int i = 0; i < kBlocksPerByte; ++i) {
      const int mask = (byte >> (kSubsetRows * i)) & kSubsetMasks;
      if (mask != 0) t[byte].off[t[byte].n++] = (i * kSubsetMasks + mask - 1) * kGridTileCols;
    }
  return t;
}
constexpr std::array<ByteBlocks, 256> kByteBlocks = byte_blocks();
// The width of the largest level of rows < n_rows (bit a of cycle k's level is bit offset + a of
// the code).
int level_bits(const uint64_t* cb, size_t bit_stride, int B, const Piece* pieces, int T, int n_rows) {
  const int nw = (n_rows + 63) / 64;
  const uint64_t last = n_rows % 64 == 0 ? ~uint64_t{0} : (uint64_t{1} << (n_rows % 64)) - 1;
  int bits = 0;
  for (int k = 0; k < T; ++k)
    for (int a = bits; a < pieces[k].width && pieces[k].offset + a < B; ++a) {
      const uint64_t* plane = cb + static_cast<size_t>(pieces[k].offset + a) * bit_stride;
      uint64_t any = plane[nw - 1] & last;
      for (int w = 0; w + 1 < nw; ++w) any |= plane[w];
      if (any != 0) bits = a + 1;
    }
  return bits;
}
// The set bits of each byte, in order (list_fixed_rows).
struct ByteRows {
  uint8_t row[8];  // the first n; the rest 0
  int n;
};
constexpr std::array<ByteRows, 256> byte_rows() {
  std::array<ByteRows, 256> t{};
  for (int byte = 0; byte < 256; ++byte)
    for (int i = 0; i < 8; ++i)
      if ((byte >> i) & 1) t[byte].row[t[byte].n++] = static_cast<uint8_t>(i);
  return t;
}
constexpr std::array<ByteRows, 256> kByteRows = byte_rows();
// The lists' frame, shared by list_fixed_rows and list_fixed_subsets: for each step s = k * G + g
// and level bit b < bits, row_begin[s * bits + b] = the entries so far, then list(plane, g, m)
// writes group g's entries for bit-plane `plane` from row_off[m] and returns the new count (a
// zero bit of every level lists nothing).
template <class List>
void list_steps(const uint64_t* cb, size_t bit_stride, int B, const Piece* pieces, int T, int G, int bits,
                std::vector<int>& row_begin, List&& list) {
  row_begin.resize(static_cast<size_t>(T) * G * bits + 1);
  int m = 0;
  for (int k = 0; k < T; ++k)
    for (int g = 0; g < G; ++g)
      for (int b = 0; b < bits; ++b) {
        row_begin[(static_cast<size_t>(k) * G + g) * bits + b] = m;
        if (b >= pieces[k].width || pieces[k].offset + b >= B) continue;  // a zero bit of every level
        m = list(cb + static_cast<size_t>(pieces[k].offset + b) * bit_stride, g, m);
      }
  row_begin[static_cast<size_t>(T) * G * bits] = m;
}
}  // namespace

int list_fixed_rows(const uint64_t* cb, size_t bit_stride, int B, const Piece* pieces, int T, int n_rows, int G,
                    int rpc, size_t stride, std::vector<int>& row_begin, std::vector<int32_t>& row_off) {
  const int bits = level_bits(cb, bit_stride, B, pieces, T, n_rows);
  row_off.resize(static_cast<size_t>(T) * n_rows * bits + 8);  // (+ 8: a byte's rows are written whole)
  list_steps(cb, bit_stride, B, pieces, T, G, bits, row_begin, [&](const uint64_t* plane, int g, int m) {
    const int r1 = std::min(n_rows, (g + 1) * rpc);
    for (int r = g * rpc; r < r1;) {
      const uint32_t v = static_cast<uint32_t>(plane[r / 64] >> (r % 64));
      if (r % 8 == 0 && r1 - r >= 8) {
        // a byte of the plane in the group: its set rows from kByteRows (written whole, the count
        // added), without a branch on the bits (random input bits mispredict)
        const ByteRows& e = kByteRows[v & 0xffu];
        for (int i = 0; i < 8; ++i)
          row_off[static_cast<size_t>(m) + i] = static_cast<int32_t>(static_cast<size_t>(r + e.row[i]) * stride);
        m += e.n;
        r += 8;
        continue;
      }
      row_off[m] = static_cast<int32_t>(static_cast<size_t>(r) * stride);
      m += static_cast<int>(v & 1u);
      ++r;
    }
    return m;
  });
  return bits;
}

int list_fixed_subsets(const uint64_t* cb, size_t bit_stride, int B, const Piece* pieces, int T, int n_rows,
                       int G, int rpc, std::vector<int>& row_begin, std::vector<int32_t>& row_off) {
  const int bits = level_bits(cb, bit_stride, B, pieces, T, n_rows);
  const int nbg = subset_blocks_per_group(rpc);
  // (+ kBlocksPerByte: a byte's entries are written whole, past the last listed one)
  row_off.resize(static_cast<size_t>(T) * G * nbg * bits + kBlocksPerByte);
  list_steps(cb, bit_stride, B, pieces, T, G, bits, row_begin, [&](const uint64_t* plane, int g, int m) {
    const int r1 = std::min(n_rows, (g + 1) * rpc);
    for (int j = 0; j < nbg && g * rpc + kSubsetRows * j < r1;) {
      const int r0 = g * rpc + kSubsetRows * j;
      if (r0 % 8 == 0 && r1 - r0 >= 8) {
        // A byte of the plane in the group: kBlocksPerByte whole blocks, listed from kByteBlocks
        // (its entries written whole, the count added); a block at a time, the word address,
        // shift and straddle test were a quarter of a cell-noise call at the shipped 256 x 256
        // geometry.
        const ByteBlocks& e = kByteBlocks[(plane[r0 / 64] >> (r0 % 64)) & 0xffu];
        const auto off = static_cast<int32_t>(static_cast<size_t>(g * nbg + j) * kSubsetMasks * kGridTileCols);
        for (int i = 0; i < kBlocksPerByte; ++i) row_off[static_cast<size_t>(m) + i] = off + e.off[i];
        m += e.n;
        j += kBlocksPerByte;
        continue;
      }
      const auto mask = static_cast<int>(plane_bits(plane, r0, std::min(kSubsetRows, r1 - r0)));
      // without a branch on the mask (random input bits mispredict): a skipped block's entry is
      // written and overwritten
      row_off[m] = static_cast<int32_t>((static_cast<size_t>(g * nbg + j) * kSubsetMasks + std::max(mask, 1) - 1) *
                                        kGridTileCols);
      m += mask != 0 ? 1 : 0;
      ++j;
    }
    return m;
  });
  return bits;
}

}  // namespace kvcim::cmodel::cim::detail
