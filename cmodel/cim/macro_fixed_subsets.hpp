// Internal to the macro C model: the fixed noise model's subset-sum table of the grid deviations
// ("four Russians"). Every column of a macro sees the same input bits, so the driven rows of a
// block of kSubsetRows rows are one of 2^kSubsetRows subsets for all columns at once: with the
// deviations of every subset summed beforehand, a block costs one vector add per input cycle and
// level bit (none where no row of it is driven) instead of one per driven row. The sums are exact
// integers, so fixed_columns gives the same codes from the table as from the rows.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kvcim/cmodel/cim/macro.hpp"
#include "macro_kernels.hpp"

namespace kvcim::cmodel::cim::detail {

// Rows per block. The table holds 2^k - 1 sums per k rows, (2^k - 1) / k times the deviations'
// memory, and streams from L3 on every call (1.5 MB for the benchmark's 256 x 2,048 macro at 2
// rows, 3.75 MB at 4), so larger blocks save adds but not time: at 4 rows the cell-noise call was
// 1 - 8% faster for 2.5 times the memory, at 3 and 5 rows no faster (docs/performance.md, section 3).
constexpr int kSubsetRows = 2;
constexpr int kSubsetMasks = (1 << kSubsetRows) - 1;  // the non-empty subsets a block stores
static_assert(8 % kSubsetRows == 0, "list_fixed_subsets reads a byte's blocks at once");

// The blocks of a row group of rpc rows: the blocks never straddle two groups (a conversion sums
// its own group's rows only).
inline int subset_blocks_per_group(int rpc) { return (rpc + kSubsetRows - 1) / kSubsetRows; }

// The table of `rows` rows of deviations qdev[r * stride + col] (col < cols) in row groups of rpc,
// in tiles of kGridTileCols columns (a tile's entries contiguous: the lines one block of columns
// reads lie together, in few pages, rather than one per 4 KB row): block j of group g (rows
// g * rpc + kSubsetRows * j .. within the group) is entry e = (g * blocks_per_group + j) *
// kSubsetMasks + m - 1 for each non-empty subset mask m of its rows (bit i: row i of the block),
// the sum of those rows' deviations, column col at table[(col / kGridTileCols) * subset_tile +
// e * kGridTileCols + col % kGridTileCols]. Resizes `table`; returns the largest |sum|, or -1 if a
// sum leaves int16 or an offset int32 (then the table is not usable: fixed_columns adds the rows).
inline size_t subset_tile(int rows, int rpc) {
  return static_cast<size_t>((rows + rpc - 1) / rpc) * subset_blocks_per_group(rpc) * kSubsetMasks * kGridTileCols;
}
int32_t subset_sums(const int16_t* qdev, size_t stride, int rows, int cols, int rpc,
                    std::vector<int16_t, LineAllocator<int16_t>>& table);

// A table of subset_sums and what it was built from. A thread keeps one, built for a macro it
// computes twice in a row (Macro::subset_table): 1.5 times the deviations' memory, which kept per
// macro was 2.6 GB of a 110M model's run with cell noise; an evaluation's batch computes 128
// tokens on a macro, one build (a few us) for all of them.
struct SubsetTable {
  uint64_t version = 0;  // the contents' version (Macro::grid_version_); 0: none built
  int32_t top = -1;      // subset_sums' result: the largest |sum|, or -1 (not usable)
  std::vector<int16_t, LineAllocator<int16_t>> sums;
};

// fixed_columns' lists for the table, from the inputs' code bit-planes (compute_analog_fast's cb:
// bit r % 64 of cb[c * bit_stride + r / 64] = bit c of row r's B-bit code; bit a of cycle k's
// level is bit pieces[k].offset + a of the code): for each step s = k * G + g (input cycle k < T,
// row group g < G) and level bit b < bits (the width of the largest level of rows < n_rows), the
// offsets e * kGridTileCols into a tile of the table of the subset each block of group g drives
// (blocks with no driven row skipped), at row_off[row_begin[s * bits + b] ..]. Returns bits.
int list_fixed_subsets(const uint64_t* cb, size_t bit_stride, int B, const Piece* pieces, int T, int n_rows,
                       int G, int rpc, std::vector<int>& row_begin, std::vector<int32_t>& row_off);

// fixed_columns' lists for the rows themselves (where no table is used), from the same bit-planes:
// for each step s = k * G + g and level bit b < bits, the offsets r * stride of the rows of group
// g whose level has bit b set, ascending, at row_off[row_begin[s * bits + b] ..]. Returns bits.
int list_fixed_rows(const uint64_t* cb, size_t bit_stride, int B, const Piece* pieces, int T, int n_rows, int G,
                    int rpc, size_t stride, std::vector<int>& row_begin, std::vector<int32_t>& row_off);

}  // namespace kvcim::cmodel::cim::detail
