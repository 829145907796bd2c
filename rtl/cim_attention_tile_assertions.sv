// Protocol and safety assertions of cim_attention_tile, bound into it (the `bind` at the end) in
// the Verilated test builds (Verilator --assert; rtl/rtl.cmake). Not read by synthesis.
//
//   valid/ready, every port: a valid that is not accepted stays high in the next cycle, and its
//                payload stays stable (app_*, q_* driven by the harness; res_* by the tile);
//   capacity:    the token count never exceeds TOKENS, no append is accepted when full;
//   no X:        the result is known whenever res_valid_o (meaningful in 4-state simulators; the
//                Verilated model is 2-state, where --x-assign/--x-initial unique randomise instead).
// A failure calls $error: the harness (rtl/sim/rtl_tile_impl.hpp) turns it into kvcim::Error.
//
// Functional cover points (counted in the coverage build, testbench/coverage/check_coverage.py
// requires each to be hit): every state of the tile's, the softmax unit's and the macros' state
// machines, back-pressure on every port, a full and an empty tile, each clamp at its limit and the
// exponent table's zero shift.
module cim_attention_tile_assertions #(
  parameter int TOKENS = 64,
  parameter int VEC_BITS = 64,
  parameter int N_BITS = 7,
  parameter int O_BITS = 256,
  parameter int XB = 8,
  parameter int QMUL_BITS = 16
) (
  input logic                clk,
  input logic                rst,
  input logic                app_valid_i,
  input logic                app_ready_o,
  input logic [VEC_BITS-1:0] app_k_i,
  input logic [VEC_BITS-1:0] app_v_i,
  input logic [XB-1:0]       app_ek_i,
  input logic [XB-1:0]       app_ev_i,
  input logic                q_valid_i,
  input logic                q_ready_o,
  input logic [VEC_BITS-1:0] q_i,
  input logic [QMUL_BITS-1:0] qmul_i,
  input logic [XB-1:0]       qexp_i,
  input logic                res_valid_o,
  input logic                res_ready_i,
  input logic [O_BITS-1:0]   o_o,
  input logic [XB-1:0]       evmax_o,
  input logic [63:0]         ymax_o,
  input logic [31:0]         sum_o,
  input logic [N_BITS-1:0]   count_o,
  input logic [1:0]          state
);
  // ---- valid held until ready, payload stable while waiting --------------------------------------
  app_valid_held: assert property (@(posedge clk) disable iff (rst)
      app_valid_i && !app_ready_o |=> app_valid_i)
    else $error("append valid dropped before ready");
  app_payload_stable: assert property (@(posedge clk) disable iff (rst)
      app_valid_i && !app_ready_o |=> $stable({app_k_i, app_v_i, app_ek_i, app_ev_i}))
    else $error("append payload changed while waiting for ready");
  q_valid_held: assert property (@(posedge clk) disable iff (rst)
      q_valid_i && !q_ready_o |=> q_valid_i)
    else $error("query valid dropped before ready");
  q_payload_stable: assert property (@(posedge clk) disable iff (rst)
      q_valid_i && !q_ready_o |=> $stable({q_i, qmul_i, qexp_i}))
    else $error("query payload changed while waiting for ready");
  res_valid_held: assert property (@(posedge clk) disable iff (rst)
      res_valid_o && !res_ready_i |=> res_valid_o)
    else $error("result valid dropped before ready");
  res_payload_stable: assert property (@(posedge clk) disable iff (rst)
      res_valid_o && !res_ready_i |=> $stable({o_o, evmax_o, ymax_o, sum_o}))
    else $error("result changed while waiting for ready");

  // ---- capacity -------------------------------------------------------------------------------
  count_in_range: assert property (@(posedge clk) disable iff (rst) 32'(count_o) <= TOKENS)
    else $error("token count above the tile's capacity");
  no_append_when_full: assert property (@(posedge clk) disable iff (rst)
      32'(count_o) == TOKENS |-> !app_ready_o)
    else $error("append accepted by a full tile");

  // ---- no X on the result -----------------------------------------------------------------------
  res_known: assert property (@(posedge clk) disable iff (rst)
      res_valid_o |-> !$isunknown({o_o, evmax_o, ymax_o, sum_o}))
    else $error("X on the result while res_valid_o");

  // ---- functional cover points ------------------------------------------------------------------
  cover_state_idle: cover property (@(posedge clk) disable iff (rst) state == 2'd0);
  cover_state_kcomp: cover property (@(posedge clk) disable iff (rst) state == 2'd1);
  cover_state_softmax: cover property (@(posedge clk) disable iff (rst) state == 2'd2);
  cover_state_vcomp: cover property (@(posedge clk) disable iff (rst) state == 2'd3);
  cover_app_backpressure: cover property (@(posedge clk) disable iff (rst) app_valid_i && !app_ready_o);
  cover_q_backpressure: cover property (@(posedge clk) disable iff (rst) q_valid_i && !q_ready_o);
  cover_res_backpressure: cover property (@(posedge clk) disable iff (rst) res_valid_o && !res_ready_i);
  cover_full_tile: cover property (@(posedge clk) disable iff (rst) 32'(count_o) == TOKENS);
  cover_full_tile_append_refused: cover property (@(posedge clk) disable iff (rst)
      32'(count_o) == TOKENS && app_valid_i);
  cover_empty_tile_query: cover property (@(posedge clk) disable iff (rst)
      count_o == '0 && q_valid_i && q_ready_o);
endmodule

// The softmax unit's state machine and datapath corners.
/* verilator lint_off DECLFILENAME */
module softmax_unit_cover (
  input logic       clk,
  input logic       rst,
  input logic [2:0] phase,
  input logic       cov_scale_clamp_hi,
  input logic       cov_scale_clamp_lo,
  input logic       cov_exp_zero_shift,
  input logic       cov_fold_clamp
);
  cover_phase_idle: cover property (@(posedge clk) disable iff (rst) phase == 3'd0);
  cover_phase_scale: cover property (@(posedge clk) disable iff (rst) phase == 3'd1);
  cover_phase_exp: cover property (@(posedge clk) disable iff (rst) phase == 3'd2);
  cover_phase_norm: cover property (@(posedge clk) disable iff (rst) phase == 3'd3);
  cover_phase_done: cover property (@(posedge clk) disable iff (rst) phase == 3'd4);
  cover_scale_shift_clamped_62: cover property (@(posedge clk) disable iff (rst)
      phase == 3'd1 && cov_scale_clamp_hi);
  cover_scale_shift_clamped_0: cover property (@(posedge clk) disable iff (rst)
      phase == 3'd1 && cov_scale_clamp_lo);
  cover_exp_zero_shift: cover property (@(posedge clk) disable iff (rst)
      phase == 3'd2 && cov_exp_zero_shift);
  cover_fold_shift_clamped_31: cover property (@(posedge clk) disable iff (rst)
      phase == 3'd3 && cov_fold_clamp);
endmodule

// The macros' state machines.
module cim_macro_cover (
  input logic       clk,
  input logic       rst,
  input logic [1:0] state,
  input logic       wr_busy
);
  cover_macro_idle: cover property (@(posedge clk) disable iff (rst) state == 2'd0);
  cover_macro_busy: cover property (@(posedge clk) disable iff (rst) state == 2'd1);
  cover_macro_done: cover property (@(posedge clk) disable iff (rst) state == 2'd2);
  cover_macro_column_write: cover property (@(posedge clk) disable iff (rst) wr_busy);
endmodule
/* verilator lint_on DECLFILENAME */

bind cim_attention_tile cim_attention_tile_assertions #(
  .TOKENS(TOKENS), .VEC_BITS(VEC_BITS), .N_BITS(N_BITS), .O_BITS(HEAD_DIM * 32), .XB(XB),
  .QMUL_BITS(QMUL_BITS)
) assertions (.*);
bind softmax_unit softmax_unit_cover covers (.*);
bind cim_macro cim_macro_cover covers (.*);
