// Port-level corners of the RTL tile that the AttentionTile interface refuses or never produces,
// for the directed, coverage and X-randomisation suites: they drive the Verilated model's ports
// directly (RtlTile::impl()). Compiled into each test program against the model it tests.
#include "kvcim/testbench/tile_hooks.hpp"

// (Verilator's headers are not written for -Wextra; the Verilated libraries compile with
// -Wno-unused-parameter, a test program does not)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../../rtl/sim/rtl_tile_impl.hpp"
#pragma GCC diagnostic pop

namespace kvcim::testbench {

using cmodel::cim::TileResult;
using rtl::RtlTile;
using rtl::detail::put_vector;

void query_then_reset(RtlTile& tile, std::span<const int8_t> q, uint16_t qmul, int qexp, int cycles) {
  cmodel::cim::check_query(tile.impl().params, tile.tokens(), q, qmul, qexp, "rtl tile query");
  tile.impl().start_query(q, qmul, qexp);
  for (int i = 0; i < cycles; ++i) {
    tile.impl().settle();
    tile.impl().tick();
  }
  tile.hard_reset();
}

void append_then_reset(RtlTile& tile, std::span<const int8_t> k, std::span<const int8_t> v, int ek,
                       int ev, int cycles) {
  cmodel::cim::check_append(tile.impl().params, tile.tokens(), k, v, ek, ev, "rtl tile append");
  tile.impl().append(k, v, ek, ev, false);
  for (int i = 0; i < cycles; ++i) {
    tile.impl().settle();
    tile.impl().tick();
  }
  tile.hard_reset();
}

TileResult query_unchecked(RtlTile& tile, std::span<const int8_t> q, uint16_t qmul, int qexp) {
  tile.impl().start_query(q, qmul, qexp);
  return tile.impl().finish_query();
}

void append_back_to_back(RtlTile& tile, std::span<const int8_t> k, std::span<const int8_t> v) {
  cmodel::cim::check_append(tile.impl().params, tile.tokens() + 1, k, v, 0, 0, "rtl tile append");
  tile.impl().append(k, v, 0, 0, false);  // returns right after the transfer: the K write is running
  tile.impl().append(k, v, 0, 0, true);   // valid waits (app_ready_o low) until the write is done
}

void offer_append_to_full_tile_then_reset(RtlTile& tile, std::span<const int8_t> k,
                                          std::span<const int8_t> v, int cycles) {
  RtlTile::Impl& m = tile.impl();
  if (tile.tokens() != m.params.tokens)
    fail("RtlTile", "tokens", std::to_string(tile.tokens()), "a full tile");
  put_vector(m.top->app_k_i, k, m.params.kv_bits);
  put_vector(m.top->app_v_i, v, m.params.kv_bits);
  if (m.offer_append_then_reset(cycles)) fail("RtlTile", "app_ready_o", "1", "0 on a full tile");
}

void break_handshake(RtlTile& tile, Broken what) {
  RtlTile::Impl& m = tile.impl();
  const int d = m.params.head_dim;
  const std::vector<int8_t> ones(d, 1), twos(d, 2), other(d, -1);
  cmodel::cim::check_append(m.params, tile.tokens() + 1, ones, twos, 0, 0, "rtl tile append");
  // An append without waiting: the K column write keeps the tile busy (both readies low) for
  // head_dim - 1 cycles, long enough to offer, wait and break.
  m.append(ones, twos, 0, 0, false);
  const bool app = what <= Broken::app_ev;
  put_vector(m.top->app_k_i, ones, m.params.kv_bits);
  put_vector(m.top->app_v_i, twos, m.params.kv_bits);
  m.top->app_ek_i = 0;
  m.top->app_ev_i = 0;
  put_vector(m.top->q_i, ones, m.params.kv_bits);
  m.top->qmul_i = 1u << 15;
  m.top->qexp_i = 0;
  (app ? m.top->app_valid_i : m.top->q_valid_i) = 1;
  m.settle();
  if (app ? m.top->app_ready_o : m.top->q_ready_o)
    fail("break_handshake", "ready", "1", "0 while the K column write runs");
  m.tick();  // not accepted: the tile is busy
  switch (what) {
    case Broken::app_valid: m.top->app_valid_i = 0; break;
    case Broken::app_k: put_vector(m.top->app_k_i, other, m.params.kv_bits); break;
    case Broken::app_v: put_vector(m.top->app_v_i, other, m.params.kv_bits); break;
    case Broken::app_ek: m.top->app_ek_i = 1; break;
    case Broken::app_ev: m.top->app_ev_i = 1; break;
    case Broken::q_valid: m.top->q_valid_i = 0; break;
    case Broken::q_q: put_vector(m.top->q_i, other, m.params.kv_bits); break;
    case Broken::q_qmul: m.top->qmul_i = (1u << 15) + 1; break;
    case Broken::q_qexp: m.top->qexp_i = 1; break;
  }
  m.settle();
  m.tick();  // the assertion fires at this edge and tick() throws
  m.top->app_valid_i = 0;
  m.top->q_valid_i = 0;
  m.settle();
}

}  // namespace kvcim::testbench
