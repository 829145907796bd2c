// Directed corner problems for the tile, at any TileParams: the cases random data rarely reaches
// but a designer easily gets wrong. `kvcim cosim` runs them in every configuration.
//   - rounding ties: logits whose rescale lands exactly on .5 (odd scores shifted by one bit, both
//     signs), probabilities whose V-exponent fold lands exactly on .5 (odd quotients shifted by 1,
//     even ones by 2);
//   - exact divisions: n equal tokens with n dividing 2^P - 1 (remainder 0 at every quotient bit),
//     and one token (p = 2^P - 1);
//   - sizes: a full tile, one short of full, and token counts that are not powers of two;
//   - extremes: every value at the K/V range's ends.
#pragma once
#include <string>
#include <vector>

#include "kvcim/rtl/rtl_tile.hpp"

namespace kvcim::rtl {

struct CornerProblem {
  std::string name;
  TileProblem problem;
};

std::vector<CornerProblem> corner_problems(const cmodel::cim::TileParams& p);

// n tokens whose every K element is k and every V element v, exponents ek and ev, query q at
// every element, scale s: the building block of the corners and of the directed tests.
TileProblem uniform_problem(const cmodel::cim::TileParams& p, int n, int8_t k, int8_t v, int8_t q,
                            int ek, int ev, cmodel::cim::QueryScale s);

}  // namespace kvcim::rtl
