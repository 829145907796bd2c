// Weight placement: row tiles over inputs x column tiles over outputs, one block per macro, on
// consecutive macros in token order (see placement.hpp).
#include <algorithm>

#include "kvcim/cmodel/energy/workload.hpp"
#include "kvcim/error.hpp"
#include "kvcim/mapper/placement.hpp"

namespace kvcim::mapper {

using cmodel::cim::MacroSpec;

int row_tiles(int64_t n_in, const MacroSpec& spec) {
  return static_cast<int>((n_in + spec.rows - 1) / spec.rows);
}

int col_tiles(int64_t n_out, const MacroSpec& spec) {
  const int per_row = spec.weights_per_row();
  return static_cast<int>((n_out + per_row - 1) / per_row);
}

WeightBlock MatrixPlacement::block(int64_t b, const MacroSpec& spec) const {
  if (b < 0 || b >= blocks())
    fail("placement", "block", std::to_string(b), "expected 0.." + std::to_string(blocks() - 1));
  const int i = static_cast<int>(b / col_tiles), j = static_cast<int>(b % col_tiles);
  const int per_row = spec.weights_per_row();
  WeightBlock w;
  w.row0 = i * spec.rows;
  w.rows = static_cast<int>(std::min<int64_t>(spec.rows, n_in - w.row0));
  w.out0 = j * per_row;
  w.outs = static_cast<int>(std::min<int64_t>(per_row, n_out - w.out0));
  w.macro = b < onchip_blocks ? first_macro + b : -1;
  return w;
}

int64_t MatrixPlacement::block_cells(int64_t b, const MacroSpec& spec) const {
  const WeightBlock w = block(b, spec);
  return int64_t{w.rows} * w.outs * spec.slices_per_weight();
}

std::optional<std::pair<int, int64_t>> WeightPlacement::macro_contents(int64_t macro) const {
  // Matrices occupy increasing, disjoint macro ranges: binary search on first_macro.
  int lo = 0, hi = static_cast<int>(matrices.size()) - 1, found = -1;
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    const auto& m = matrices[mid];
    if (m.onchip_blocks == 0 || m.first_macro > macro) {
      // matrices without on-chip blocks come after every placed one
      hi = mid - 1;
    } else {
      found = mid;
      lo = mid + 1;
    }
  }
  if (found < 0) return std::nullopt;
  const auto& m = matrices[found];
  if (macro >= m.first_macro + m.onchip_blocks) return std::nullopt;
  return std::make_pair(found, macro - m.first_macro);
}

int WeightPlacement::find(Op op, int layer, int replica) const {
  for (size_t i = 0; i < matrices.size(); ++i)
    if (matrices[i].op == op && matrices[i].layer == layer && matrices[i].replica == replica)
      return static_cast<int>(i);
  fail("placement", "matrix", std::string(cmodel::energy::name(op)) + " of layer " +
                                  std::to_string(layer) + " replica " + std::to_string(replica),
       "not in the placement");
}

int64_t weight_macros_needed(const cmodel::Config& c, const MacroSpec& spec, int replicas) {
  int64_t n = 0;
  for (const auto& m : cmodel::energy::token_matrices(c))
    n += int64_t{row_tiles(m.n_in, spec)} * col_tiles(m.n_out, spec);
  return n * replicas;
}

WeightPlacement place_weights(const cmodel::Config& c, const MacroSpec& spec, int replicas,
                              int64_t macros_available) {
  spec.validate("placement: macro");
  if (replicas < 1) fail("placement", "replicas", std::to_string(replicas), "expected >= 1");
  if (macros_available < 0)
    fail("placement", "macros_available", std::to_string(macros_available), "expected >= 0");
  WeightPlacement wp;
  wp.macros_available = macros_available;
  const auto shapes = cmodel::energy::token_matrices(c);
  const int64_t slices = spec.slices_per_weight();
  int64_t next = 0;
  for (int r = 0; r < replicas; ++r)
    for (const auto& s : shapes) {
      MatrixPlacement m{s.op, s.layer, r, s.n_in, s.n_out, row_tiles(s.n_in, spec),
                        col_tiles(s.n_out, spec), -1, 0};
      m.onchip_blocks = std::min(m.blocks(), macros_available - next);
      if (m.onchip_blocks > 0) {
        m.first_macro = next;
        next += m.onchip_blocks;
        // Cells of the on-chip blocks: whole row tiles of blocks plus a partial one.
        const int64_t full_rows = m.onchip_blocks / m.col_tiles, rem = m.onchip_blocks % m.col_tiles;
        int64_t elems = 0;
        const int per_row = spec.weights_per_row();
        const int64_t rows_before = std::min<int64_t>(full_rows * spec.rows, s.n_in);
        elems += rows_before * s.n_out;
        if (rem > 0) {
          const int64_t rows_here = std::min<int64_t>(spec.rows, s.n_in - full_rows * spec.rows);
          elems += rows_here * std::min<int64_t>(rem * per_row, s.n_out);
        }
        wp.elements_onchip += elems;
        wp.cells_used += elems * slices;
      }
      wp.blocks_offchip += m.blocks() - m.onchip_blocks;
      wp.elements_total += s.n_in * s.n_out;
      wp.matrices.push_back(m);
    }
  wp.macros_used = next;
  return wp;
}

}  // namespace kvcim::mapper
