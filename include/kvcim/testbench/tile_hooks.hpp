// Harness hooks: port-level corners of the Verilated tile that the AttentionTile interface refuses
// or never produces, for the directed, coverage and X-randomisation suites. Each drives the model's
// ports directly; a test program compiles testbench/harness/tile_hooks.cpp against the model it
// tests.
#pragma once
#include <cstdint>
#include <span>

#include "kvcim/rtl/rtl_tile.hpp"

namespace kvcim::testbench {

// Starts a query, runs `cycles` more clock cycles, then asserts reset in the middle of it.
void query_then_reset(rtl::RtlTile& tile, std::span<const int8_t> q, uint16_t qmul, int qexp, int cycles);
// Transfers a token, runs `cycles` more clock cycles (the K column group is still being written
// for head_dim - 1 of them), then asserts reset. (append() itself returns only when the tile is
// idle again, so that events() then includes the whole append.)
void append_then_reset(rtl::RtlTile& tile, std::span<const int8_t> k, std::span<const int8_t> v,
                       int ek, int ev, int cycles);
// A query on an empty tile without the argument checks (the RTL answers o = 0, sum = 0).
cmodel::cim::TileResult query_unchecked(rtl::RtlTile& tile, std::span<const int8_t> q, uint16_t qmul,
                                        int qexp);
// Two appends back to back, the second offered while the first's K column write keeps the tile busy.
void append_back_to_back(rtl::RtlTile& tile, std::span<const int8_t> k, std::span<const int8_t> v);
// An append offered to a full tile for `cycles` cycles (never accepted), then a reset.
void offer_append_to_full_tile_then_reset(rtl::RtlTile& tile, std::span<const int8_t> k,
                                          std::span<const int8_t> v, int cycles);
// Breaks the valid/ready protocol on purpose (the assertions test): an append's K column write keeps
// the tile busy, an append or a query is offered and waits a cycle, then its valid drops or one
// field of its payload changes before the tile is ready. With the assertions compiled in
// (Verilator --assert), throws kvcim::Error naming "assertion" at that edge; returns if none fired.
enum class Broken { app_valid, app_k, app_v, app_ek, app_ev, q_valid, q_q, q_qmul, q_qexp };
void break_handshake(rtl::RtlTile& tile, Broken what);

}  // namespace kvcim::testbench
