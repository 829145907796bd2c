// cim_attention_tile: integer attention of one query head over up to TOKENS tokens of one KV head,
// built from two digital CIM macros and the fixed-point softmax unit. Its C model is
// kvcim::cmodel::cim::CModelTile; docs/attention_tile.md states the contract both meet bit for bit.
//
//   K macro: HEAD_DIM rows x TOKENS column groups; token t's k is column group t. q (signed) enters
//            on the rows bit-serially and column group t returns s_t = q . k_t.
//   V macro: TOKENS rows x HEAD_DIM column groups; token t's v is row t. The folded probabilities
//            p'_t (unsigned) enter on the rows bit-serially; column group i returns o_i.
//
// Handshakes (valid/ready; a transfer happens on a rising edge where both are high):
//   append  app_*: one token's k, v (HEAD_DIM x KV_BITS each), ek, ev. Writes V row `count` in the
//           transfer cycle and K column group `count` one wordline per cycle (HEAD_DIM cycles).
//   query   q_*: q, qmul, qexp. The tile accepts it when idle and no append is offered (also with
//           0 tokens: o = 0, sum = 0).
//   result  res_*: o (HEAD_DIM x int32), evmax, ymax (sign-extended to 64 bits), sum. Held until
//           res_ready_i.
// Latency, nothing stalling: an append takes HEAD_DIM cycles; a query over n tokens takes
// KV_BITS + PROB_BITS + 3n + (S - 1) + 4 cycles from the query transfer to the result transfer,
// both included (1 transfer + KV_BITS K-macro bits + 1 hand-over + 3n + S - 1 softmax, S =
// ceil(PROB_BITS / DIV_BITS_PER_STAGE) the divider's pipeline stages, 0 for n = 0 + 1 hand-over
// + PROB_BITS V-macro bits + 1 result transfer).
// clear_i (honoured when idle) drops the tokens; evt_clear_i zeroes the counters; rst does both and
// aborts whatever is running. counters_o holds NUM_COUNTERS 64-bit event counters (CNT_* indices
// of kvcim_tile_pkg); tile_cycles counts the cycles the tile works, i.e. excluding those where it
// only waits for res_ready_i.
module cim_attention_tile #(
  // The geometry (defaults: the generated package, i.e. TileParams{}). EXP_LUT must be the table
  // for EXP_FRAC (rtl/gen_tile_pkg.cpp writes one package per configuration).
  parameter int HEAD_DIM = kvcim_tile_pkg::HEAD_DIM,
  parameter int TOKENS = kvcim_tile_pkg::TOKENS,
  parameter int KV_BITS = kvcim_tile_pkg::KV_BITS,
  parameter int EXP_FRAC = kvcim_tile_pkg::EXP_FRAC,
  parameter int PROB_BITS = kvcim_tile_pkg::PROB_BITS,
  parameter logic [(2**EXP_FRAC)*(kvcim_tile_pkg::EXP_ONE_BITS+1)-1:0] EXP_LUT = kvcim_tile_pkg::EXP_LUT,
  // The K (score) accumulator width: exact for KV_BITS x KV_BITS products over HEAD_DIM rows.
  parameter int K_ACC_BITS = 2 * KV_BITS + $clog2(HEAD_DIM),
  parameter int V_ACC_BITS = PROB_BITS + KV_BITS + $clog2(TOKENS),
  // fixed (not parameters of TileParams)
  localparam int XB = kvcim_tile_pkg::SCALE_EXP_BITS,
  localparam int QMUL_BITS = kvcim_tile_pkg::QMUL_BITS,
  localparam int NUM_COUNTERS = kvcim_tile_pkg::NUM_COUNTERS,
  localparam int VEC_BITS = HEAD_DIM * KV_BITS,
  localparam int N_BITS = $clog2(TOKENS + 1),
  localparam int TA_BITS = (TOKENS > 1) ? $clog2(TOKENS) : 1
) (
  input  logic                       clk,
  input  logic                       rst,
  input  logic                       clear_i,
  input  logic                       evt_clear_i,
  // append one token
  input  logic                       app_valid_i,
  output logic                       app_ready_o,
  input  logic [VEC_BITS-1:0]        app_k_i,
  input  logic [VEC_BITS-1:0]        app_v_i,
  input  logic [XB-1:0]              app_ek_i,
  input  logic [XB-1:0]              app_ev_i,
  // run one query
  input  logic                       q_valid_i,
  output logic                       q_ready_o,
  input  logic [VEC_BITS-1:0]        q_i,
  input  logic [QMUL_BITS-1:0]       qmul_i,
  input  logic [XB-1:0]              qexp_i,
  // its result
  output logic                       res_valid_o,
  input  logic                       res_ready_i,
  output logic [HEAD_DIM*32-1:0]     o_o,
  output logic [XB-1:0]              evmax_o,
  output logic [63:0]                ymax_o,
  output logic [31:0]                sum_o,
  output logic [N_BITS-1:0]          count_o,
  output logic [NUM_COUNTERS*64-1:0] counters_o
);
  // (Package names are qualified, not imported: the subset Yosys 0.23 reads.)
  localparam int EXP_ONE_BITS = kvcim_tile_pkg::EXP_ONE_BITS;
  localparam int Y_BITS = K_ACC_BITS + QMUL_BITS + 1;
  localparam int SUM_BITS = EXP_ONE_BITS + 1 + $clog2(TOKENS);

  typedef enum logic [1:0] {IDLE, KCOMP, SOFTMAX, VCOMP} state_t;
  state_t state;
  logic [N_BITS-1:0] count;
  logic [TOKENS*XB-1:0] ek, ev;
  logic [QMUL_BITS-1:0] qmul_q;
  logic [XB-1:0] qexp_q;

  // ---- sub-units ------------------------------------------------------------------------------
  logic k_col_ready, k_col_busy, k_cmp_ready, k_y_valid, k_y_ready;
  logic [TOKENS*K_ACC_BITS-1:0] k_y;
  logic [63:0] k_ev [6];
  logic sm_start_ready, sm_done_valid, sm_done_ready;
  logic [TOKENS*PROB_BITS-1:0] sm_prob;
  logic [XB-1:0] sm_evmax;
  logic [Y_BITS-1:0] sm_ymax;
  logic [SUM_BITS-1:0] sm_sum;
  logic [63:0] sm_ev [7];
  logic v_cmp_ready, v_y_valid;
  logic [HEAD_DIM*V_ACC_BITS-1:0] v_y;
  logic [63:0] v_ev [6];

  wire idle = (state == IDLE) && !k_col_busy && !clear_i;
  assign app_ready_o = idle && k_col_ready && (count != N_BITS'(TOKENS));
  // An append offered in the same cycle goes first (the K macro cannot write and compute at once).
  assign q_ready_o = idle && k_cmp_ready && !app_valid_i;
  wire app_fire = app_valid_i && app_ready_o;
  wire q_fire = q_valid_i && q_ready_o;
  wire sm_start = (state == KCOMP) && k_y_valid && sm_start_ready;
  wire v_start = (state == SOFTMAX) && sm_done_valid && v_cmp_ready;
  assign res_valid_o = (state == VCOMP) && v_y_valid;
  wire res_fire = res_valid_o && res_ready_i;
  assign k_y_ready = (state == KCOMP) && sm_start_ready;
  assign sm_done_ready = (state == SOFTMAX) && v_cmp_ready;

  cim_macro #(
    .ROWS(HEAD_DIM), .N_W(TOKENS), .W_BITS(KV_BITS), .IN_BITS(KV_BITS), .IN_SIGNED(1'b1),
    .ACC_BITS(K_ACC_BITS)
  ) k_macro (
    .clk, .rst, .evt_clear_i,
    .row_we_i(1'b0), .row_addr_i('0), .row_data_i('0),
    .col_valid_i(app_valid_i && idle && (count != N_BITS'(TOKENS))), .col_ready_o(k_col_ready),
    .col_busy_o(k_col_busy), .col_addr_i(count[TA_BITS-1:0]), .col_data_i(app_k_i),
    .cmp_valid_i(q_valid_i && idle && !app_valid_i), .cmp_ready_o(k_cmp_ready), .x_i(q_i),
    .n_rows_i(($clog2(HEAD_DIM + 1))'(HEAD_DIM)), .n_out_i(count),
    .y_valid_o(k_y_valid), .y_ready_i(k_y_ready), .y_o(k_y),
    .ev_row_activations_o(k_ev[0]), .ev_column_reads_o(k_ev[1]), .ev_adder_ops_o(k_ev[2]),
    .ev_shift_add_ops_o(k_ev[3]), .ev_cell_writes_o(k_ev[4]), .ev_cycles_o(k_ev[5])
  );

  softmax_unit #(
    .T(TOKENS), .S_BITS(K_ACC_BITS), .EXP_FRAC(EXP_FRAC), .PROB_BITS(PROB_BITS), .EXP_LUT(EXP_LUT)
  ) softmax (
    .clk, .rst, .evt_clear_i,
    .start_valid_i((state == KCOMP) && k_y_valid), .start_ready_o(sm_start_ready),
    .scores_i(k_y), .ek_i(ek), .ev_i(ev), .qmul_i(qmul_q), .qexp_i(qexp_q), .n_i(count),
    .done_valid_o(sm_done_valid), .done_ready_i(sm_done_ready),
    .prob_o(sm_prob), .evmax_o(sm_evmax), .ymax_o(sm_ymax), .sum_o(sm_sum),
    .ev_multiplies_o(sm_ev[0]), .ev_shifts_o(sm_ev[1]), .ev_adds_o(sm_ev[2]),
    .ev_comparisons_o(sm_ev[3]), .ev_exp_lookups_o(sm_ev[4]), .ev_divisions_o(sm_ev[5]),
    .ev_cycles_o(sm_ev[6])
  );

  // The V macro's column-group write port is unused: V tokens arrive as rows.
  /* verilator lint_off PINCONNECTEMPTY */
  cim_macro #(
    .ROWS(TOKENS), .N_W(HEAD_DIM), .W_BITS(KV_BITS), .IN_BITS(PROB_BITS), .IN_SIGNED(1'b0),
    .ACC_BITS(V_ACC_BITS)
  ) v_macro (
    .clk, .rst, .evt_clear_i,
    .row_we_i(app_fire), .row_addr_i(count[TA_BITS-1:0]), .row_data_i(app_v_i),
    .col_valid_i(1'b0), .col_ready_o(), .col_busy_o(), .col_addr_i('0), .col_data_i('0),
    .cmp_valid_i((state == SOFTMAX) && sm_done_valid), .cmp_ready_o(v_cmp_ready), .x_i(sm_prob),
    .n_rows_i(count), .n_out_i(($clog2(HEAD_DIM + 1))'(HEAD_DIM)),
    .y_valid_o(v_y_valid), .y_ready_i((state == VCOMP) && res_ready_i), .y_o(v_y),
    .ev_row_activations_o(v_ev[0]), .ev_column_reads_o(v_ev[1]), .ev_adder_ops_o(v_ev[2]),
    .ev_shift_add_ops_o(v_ev[3]), .ev_cell_writes_o(v_ev[4]), .ev_cycles_o(v_ev[5])
  );
  /* verilator lint_on PINCONNECTEMPTY */

  // ---- outputs -------------------------------------------------------------------------------
  always_comb begin
    for (int i = 0; i < HEAD_DIM; i++)
      o_o[i*32 +: 32] = 32'($signed(v_y[i*V_ACC_BITS +: V_ACC_BITS]));
  end
  assign evmax_o = sm_evmax;
  assign ymax_o = 64'($signed(sm_ymax));
  assign sum_o = 32'(sm_sum);
  assign count_o = count;

  // ---- control -------------------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (rst) begin
      state <= IDLE;
      count <= '0;
      qmul_q <= '0;
      qexp_q <= '0;
    end else begin
      case (state)
        IDLE: begin
          if (clear_i && !k_col_busy) count <= '0;
          if (app_fire) count <= count + 1'b1;  // (and ek, ev of token `count`: below)
          if (q_fire) begin
            qmul_q <= qmul_i;
            qexp_q <= qexp_i;
            state <= KCOMP;
          end
        end
        KCOMP: if (sm_start) state <= SOFTMAX;
        SOFTMAX: if (v_start) state <= VCOMP;
        VCOMP: if (res_fire) state <= IDLE;
        // (unreachable: every encoding is a state or reset leaves none; excluded from coverage)
        /* verilator coverage_off */
        default: state <= IDLE;
        /* verilator coverage_on */
      endcase
    end
  end

  // The appended token's exponents: one decoded write enable per token, every part-select
  // constant (a variable part-select would be a shifter over TOKENS x XB bits, and Yosys's proc
  // expands it into a case over every token: a minute and 1 GB of the glue's synthesis at 128
  // tokens).
  wire exp_we = !rst && (state == IDLE) && app_fire;
  for (genvar t = 0; t < TOKENS; t++) begin : g_exp
    always_ff @(posedge clk) begin
      if (exp_we && 32'(count) == t) begin
        ek[t*XB +: XB] <= app_ek_i;
        ev[t*XB +: XB] <= app_ev_i;
      end
    end
  end

  // ---- tile-level counters -------------------------------------------------------------------
  logic [63:0] tile_cycles, appends, queries;
  wire stalled = res_valid_o && !res_ready_i;
  wire working = app_fire || q_fire || k_col_busy || ((state != IDLE) && !stalled);
  always_ff @(posedge clk) begin
    if (rst || evt_clear_i) begin
      tile_cycles <= '0;
      appends <= '0;
      queries <= '0;
    end else begin
      if (working) tile_cycles <= tile_cycles + 64'd1;
      if (app_fire) appends <= appends + 64'd1;
      if (q_fire) queries <= queries + 64'd1;
    end
  end

  always_comb begin
    counters_o = '0;
    counters_o[kvcim_tile_pkg::CNT_K_MACRO_ROW_ACTIVATIONS*64 +: 64] = k_ev[0];
    counters_o[kvcim_tile_pkg::CNT_K_MACRO_COLUMN_READS*64 +: 64] = k_ev[1];
    counters_o[kvcim_tile_pkg::CNT_K_MACRO_ADDER_OPS*64 +: 64] = k_ev[2];
    counters_o[kvcim_tile_pkg::CNT_K_MACRO_SHIFT_ADD_OPS*64 +: 64] = k_ev[3];
    counters_o[kvcim_tile_pkg::CNT_K_MACRO_CELL_WRITES*64 +: 64] = k_ev[4];
    counters_o[kvcim_tile_pkg::CNT_K_MACRO_CYCLES*64 +: 64] = k_ev[5];
    counters_o[kvcim_tile_pkg::CNT_V_MACRO_ROW_ACTIVATIONS*64 +: 64] = v_ev[0];
    counters_o[kvcim_tile_pkg::CNT_V_MACRO_COLUMN_READS*64 +: 64] = v_ev[1];
    counters_o[kvcim_tile_pkg::CNT_V_MACRO_ADDER_OPS*64 +: 64] = v_ev[2];
    counters_o[kvcim_tile_pkg::CNT_V_MACRO_SHIFT_ADD_OPS*64 +: 64] = v_ev[3];
    counters_o[kvcim_tile_pkg::CNT_V_MACRO_CELL_WRITES*64 +: 64] = v_ev[4];
    counters_o[kvcim_tile_pkg::CNT_V_MACRO_CYCLES*64 +: 64] = v_ev[5];
    counters_o[kvcim_tile_pkg::CNT_SOFTMAX_MULTIPLIES*64 +: 64] = sm_ev[0];
    counters_o[kvcim_tile_pkg::CNT_SOFTMAX_SHIFTS*64 +: 64] = sm_ev[1];
    counters_o[kvcim_tile_pkg::CNT_SOFTMAX_ADDS*64 +: 64] = sm_ev[2];
    counters_o[kvcim_tile_pkg::CNT_SOFTMAX_COMPARISONS*64 +: 64] = sm_ev[3];
    counters_o[kvcim_tile_pkg::CNT_SOFTMAX_EXP_LOOKUPS*64 +: 64] = sm_ev[4];
    counters_o[kvcim_tile_pkg::CNT_SOFTMAX_DIVISIONS*64 +: 64] = sm_ev[5];
    counters_o[kvcim_tile_pkg::CNT_SOFTMAX_CYCLES*64 +: 64] = sm_ev[6];
    counters_o[kvcim_tile_pkg::CNT_CYCLES*64 +: 64] = tile_cycles;
    counters_o[kvcim_tile_pkg::CNT_APPENDS*64 +: 64] = appends;
    counters_o[kvcim_tile_pkg::CNT_QUERIES*64 +: 64] = queries;
  end
endmodule
