// CimLinear shares its blocks with the float GEMV's helper thread: the outputs and every event
// count must be the same on one thread and two, noise included (each macro draws from its own
// generator).
#include <gtest/gtest.h>

#include <random>

#include "kvcim/cmodel/gemv.hpp"
#include "kvcim/runtime/cim_linear.hpp"

using namespace kvcim;
using namespace kvcim::runtime;

namespace {

struct Restore {  // the process-wide threading settings, put back after the test
  int threads = cmodel::gemv_threads();
  int64_t min = cmodel::gemv_parallel_min();
  ~Restore() {
    cmodel::set_gemv_threads(threads);
    cmodel::set_gemv_parallel_min(min);
  }
};

cmodel::Matrix random_matrix(int rows, int cols, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> d(0.0f, 0.1f);
  cmodel::Matrix w(rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) w(r, c) = d(g);
  return w;
}

struct Out {
  std::vector<float> y;
  LinearEvents ev;
  std::vector<float> batch;  // the three tokens as one apply_batch (its blocks claimed one at a time)
};

// Three tokens through a fresh CimLinear of w; every fourth block left to the digital engine.
Out run(const cmodel::Matrix& w, const cmodel::cim::MacroSpec& spec, int threads) {
  cmodel::set_gemv_threads(threads);
  std::vector<Block> blocks = tile_blocks(static_cast<int>(w.cols()), static_cast<int>(w.rows()), spec);
  for (size_t b = 3; b < blocks.size(); b += 4) blocks[b].onchip = false;
  CimLinear lin(w, spec, blocks);
  Out out;
  std::mt19937_64 g(7);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> xs;
  for (int t = 0; t < 3; ++t) {
    std::vector<float> x(w.cols()), y(w.rows());
    for (auto& v : x) v = d(g);
    lin.apply(x.data(), y.data(), out.ev);
    out.y.insert(out.y.end(), y.begin(), y.end());
    xs.insert(xs.end(), x.begin(), x.end());
  }
  const std::vector<uint64_t> keys{4, 5, 6};
  out.batch.resize(out.y.size());
  LinearEvents batch_events;
  lin.apply_batch(xs.data(), 3, out.batch.data(), batch_events, keys.data());
  return out;
}

}  // namespace

TEST(CimLinear, SameOnOneThreadAndTwo) {
  Restore restore;
  cmodel::set_gemv_parallel_min(0);  // split even this small matrix
  const cmodel::Matrix w = random_matrix(600, 200, 3);  // 4 row tiles x 19 column tiles
  for (auto kind : {cmodel::cim::MacroKind::digital, cmodel::cim::MacroKind::analog}) {
    cmodel::cim::MacroSpec spec;
    spec.kind = kind;
    spec.rows = 64, spec.cols = 256, spec.rows_per_cycle = 16;
    if (kind == cmodel::cim::MacroKind::analog) {
      spec.adc_bits = 5;
      spec.cell_noise_sigma = 0.2;
      spec.read_noise_sigma = 0.5;
    }
    const Out one = run(w, spec, 1), two = run(w, spec, 2);
    EXPECT_EQ(one.y, two.y);
    EXPECT_EQ(one.batch, two.batch);
    EXPECT_EQ(one.ev.macro, two.ev.macro);
    EXPECT_EQ(one.ev.partial_sum_adds, two.ev.partial_sum_adds);
    EXPECT_EQ(one.ev.offchip_macs, two.ev.offchip_macs);
    // 600 outputs in 4 row tiles: 3 joining adds per output per token
    EXPECT_EQ(two.ev.partial_sum_adds, 3 * 600 * 3);
    int64_t offchip = 0;
    const auto blocks = tile_blocks(200, 600, spec);
    for (size_t b = 3; b < blocks.size(); b += 4) offchip += int64_t{blocks[b].rows} * blocks[b].outs;
    EXPECT_EQ(two.ev.offchip_macs, 3 * offchip);
  }
}
