// Shim seen by testbench/harness/rtl_tile.cpp when it is compiled into kvcim_rtl_xrand: the tile
// Verilated with --x-assign unique --x-initial unique (prefix Vcim_attention_tile_x), under the
// class name the harness expects. The context is told to randomise every uninitialised bit
// (randReset 2) with the seed of xrand_seed() before the model's variables are initialised:
// base classes are constructed in declaration order, so XSeed runs first.
#pragma once
#include "Vcim_attention_tile_x.h"
#include "xrand_seed.hpp"

struct KvcimXSeed {
  explicit KvcimXSeed(VerilatedContext* context) {
    context->randReset(2);
    context->randSeed(kvcim::reliability::xrand_seed());
  }
};

class Vcim_attention_tile : private KvcimXSeed, public Vcim_attention_tile_x {
 public:
  Vcim_attention_tile(VerilatedContext* context, const char* name)
      : KvcimXSeed(context), Vcim_attention_tile_x(context, name) {}
};
