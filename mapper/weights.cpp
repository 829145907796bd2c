// Weight placement: row tiles over inputs x column tiles over outputs, one block per macro, on
// consecutive macros in token order (see placement.hpp).
#include <algorithm>
#include <array>

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
  // every layer has the same seven shapes
  const int64_t R = spec.rows, W = spec.weights_per_row();
  auto blocks = [&](int64_t n_in, int64_t n_out) { return ((n_in + R - 1) / R) * ((n_out + W - 1) / W); };
  int64_t per_layer = 0;
  for (const auto& m : cmodel::energy::layer_matrices(c, 0)) per_layer += blocks(m.n_in, m.n_out);
  return (per_layer * c.n_layers + blocks(c.dim, c.vocab_size)) * replicas;
}

WeightPlacement place_weights(const cmodel::Config& c, const MacroSpec& spec, int replicas,
                              int64_t macros_available) {
  spec.validate("placement: macro");
  if (replicas < 1) fail("placement", "replicas", std::to_string(replicas), "expected >= 1");
  if (macros_available < 0)
    fail("placement", "macros_available", std::to_string(macros_available), "expected >= 0");
  if ((7.0 * c.n_layers + 1) * replicas > double(1 << 24))
    fail("placement", "replicas", std::to_string(replicas),
         "more than 2^24 matrices to place (layers x 7 x replicas)");
  WeightPlacement wp;
  wp.macros_available = macros_available;
  wp.matrices.reserve((7 * static_cast<size_t>(c.n_layers) + 1) * replicas);
  const int64_t slices = spec.slices_per_weight();
  const int64_t R = spec.rows, W = spec.weights_per_row();
  // The seven shapes of a layer, tiled once (every layer is the same), and the classifier.
  std::array<cmodel::energy::MatrixShape, 8> shapes{};
  const auto layer = cmodel::energy::layer_matrices(c, 0);
  std::copy(layer.begin(), layer.end(), shapes.begin());
  shapes[7] = {Op::classifier, cmodel::energy::kModelLevel, c.dim, c.vocab_size};
  std::array<int, 8> rt{}, ct{};
  for (int i = 0; i < 8; ++i) {
    rt[i] = static_cast<int>((shapes[i].n_in + R - 1) / R);
    ct[i] = static_cast<int>((shapes[i].n_out + W - 1) / W);
  }
  int64_t next = 0;
  auto add = [&](int i, int layer_index, int r) {
    const auto& s = shapes[i];
    MatrixPlacement m{s.op, layer_index, r, s.n_in, s.n_out, rt[i], ct[i], -1, 0};
    m.onchip_blocks = std::max<int64_t>(0, std::min(m.blocks(), macros_available - next));
    if (m.onchip_blocks > 0) {
      m.first_macro = next;
      next += m.onchip_blocks;
      // elements of the on-chip blocks: whole row tiles of blocks plus a partial one
      const int64_t full_rows = m.onchip_blocks / m.col_tiles, rem = m.onchip_blocks % m.col_tiles;
      int64_t elems = std::min(full_rows * R, s.n_in) * s.n_out;
      if (rem > 0) elems += std::min(R, s.n_in - full_rows * R) * std::min(rem * W, s.n_out);
      wp.elements_onchip += elems;
      wp.cells_used += elems * slices;
    }
    wp.blocks_offchip += m.blocks() - m.onchip_blocks;
    wp.elements_total += s.n_in * s.n_out;
    wp.matrices.push_back(m);
  };
  for (int r = 0; r < replicas; ++r) {
    for (int l = 0; l < c.n_layers; ++l)
      for (int i = 0; i < 7; ++i) add(i, l, r);
    add(7, cmodel::energy::kModelLevel, r);
  }
  wp.macros_used = next;
  return wp;
}

}  // namespace kvcim::mapper
