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
// Breaks the valid/ready protocol on purpose (the assertions test): offers a query while the tile
// is busy, then drops its valid (drop_valid) or changes its payload (change_payload) before the
// tile is ready. With the assertions compiled in (Verilator --assert), throws kvcim::Error
// naming "assertion"; a failing assertion anywhere else throws the same.
enum class ProtocolBreak { drop_valid, change_payload };
void break_protocol(rtl::RtlTile& tile, ProtocolBreak how, std::span<const int8_t> k,
                    std::span<const int8_t> v);

}  // namespace kvcim::testbench
