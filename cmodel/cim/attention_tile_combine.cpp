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

namespace {
// The largest ymax of the parts, after checking them (combine_tiles' and tile_shares' input).
int64_t checked_ymax(std::span<const TileResult> parts, const char* where) {
  if (parts.empty()) fail(where, "tiles", "0", "expected at least one tile result");
  int64_t ymax = parts[0].ymax;
  for (const TileResult& r : parts) {
    if (r.o.size() != parts[0].o.size())
      fail(where, "o length", std::to_string(r.o.size()),
           "expected " + std::to_string(parts[0].o.size()) + " as in the first tile");
    if (r.sum <= 0) fail(where, "sum", std::to_string(r.sum), "expected > 0");
    ymax = std::max(ymax, r.ymax);
  }
  return ymax;
}
// The tile's sum_t 2^(Y_t / 2^F) relative to the global max.
double tile_weight(const TileResult& r, int64_t ymax, const TileParams& p) {
  return static_cast<double>(r.sum) * std::exp2(static_cast<double>(r.ymax - ymax) / std::ldexp(1.0, p.exp_frac));
}
}  // namespace

std::vector<double> tile_shares(std::span<const TileResult> parts, const TileParams& p) {
  const int64_t ymax = checked_ymax(parts, "tile_shares");
  std::vector<double> w;
  double wsum = 0.0;
  for (const TileResult& r : parts) wsum += w.emplace_back(tile_weight(r, ymax, p));
  for (double& x : w) x /= wsum;
  return w;
}

std::vector<double> combine_tiles(std::span<const TileResult> parts, const TileParams& p) {
  const int64_t ymax = checked_ymax(parts, "combine_tiles");
  std::vector<double> acc(parts[0].o.size(), 0.0);
  double wsum = 0.0;
  for (const TileResult& r : parts) {
    const double w = tile_weight(r, ymax, p);
    const std::vector<double> o = dequantize(r, p);
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += w * o[i];
    wsum += w;
  }
  for (double& a : acc) a /= wsum;
  return acc;
}

}  // namespace kvcim::cmodel::cim
