// Dequantising one tile's result and combining tiles that each saw part of the tokens (a running
// max with rescaling, as flash-attention does; the tiles themselves stay integer).
#include <algorithm>
#include <cmath>
#include <string>

#include "kvcim/cmodel/cim/attention_tile.hpp"
#include "kvcim/error.hpp"

namespace kvcim::cmodel::cim {

std::vector<double> dequantize(const TileResult& r, const TileParams& p) {
  const double scale = std::ldexp(1.0, r.evmax) / static_cast<double>((int64_t{1} << p.prob_bits) - 1);
  std::vector<double> out(r.o.size());
  for (size_t i = 0; i < r.o.size(); ++i) out[i] = r.o[i] * scale;
  return out;
}

std::vector<double> combine_tiles(std::span<const TileResult> parts, const TileParams& p) {
  if (parts.empty()) fail("combine_tiles", "tiles", "0", "expected at least one tile result");
  int64_t ymax = parts[0].ymax;
  for (const TileResult& r : parts) {
    if (r.o.size() != parts[0].o.size())
      fail("combine_tiles", "o length", std::to_string(r.o.size()),
           "expected " + std::to_string(parts[0].o.size()) + " as in the first tile");
    if (r.sum <= 0) fail("combine_tiles", "sum", std::to_string(r.sum), "expected > 0");
    ymax = std::max(ymax, r.ymax);
  }
  std::vector<double> acc(parts[0].o.size(), 0.0);
  double wsum = 0.0;
  for (const TileResult& r : parts) {
    // The tile's share of sum_t 2^(Y_t / 2^F) relative to the global max.
    const double w = static_cast<double>(r.sum) *
                     std::exp2(static_cast<double>(r.ymax - ymax) / std::ldexp(1.0, p.exp_frac));
    const std::vector<double> o = dequantize(r, p);
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += w * o[i];
    wsum += w;
  }
  for (double& a : acc) a /= wsum;
  return acc;
}

}  // namespace kvcim::cmodel::cim
