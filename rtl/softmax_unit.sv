// softmax_unit: the tile's fixed-point softmax, steps 2-5 of docs/attention_tile.md, bit for bit
// with kvcim::cmodel::cim::softmax_fixed (cmodel/cim/softmax_fixed.cpp).
//
// Three passes over the n valid tokens, one token per cycle each (3n cycles after the start
// handshake; n = 0 finishes at once):
//   SCALE  Y_t = round_half_up(s_t qmul 2^(qexp + ek_t + F)), shift clamped to [0, 62];
//          running maxima Ymax and evmax.
//   EXP    d_t = Ymax - Y_t; e_t = (d_t >> F) >= 17 ? 0 : LUT[d_t mod 2^F] >> (d_t >> F); sum += e_t.
//   NORM   p_t = floor(e_t (2^P - 1) / sum) by a P-step restoring divider;
//          p'_t = round_half_up(p_t / 2^min(evmax - ev_t, 31)).
// The results (prob_o, evmax_o, ymax_o, sum_o) stay valid until the next start.
module softmax_unit #(
  parameter int T = kvcim_tile_pkg::TOKENS,
  parameter int S_BITS = 19,                         // score width (the K macro's accumulator)
  parameter int EXP_FRAC = kvcim_tile_pkg::EXP_FRAC,
  parameter int PROB_BITS = kvcim_tile_pkg::PROB_BITS,
  parameter logic [(2**EXP_FRAC)*(kvcim_tile_pkg::EXP_ONE_BITS+1)-1:0] EXP_LUT = kvcim_tile_pkg::EXP_LUT,
  // fixed
  localparam int XB = kvcim_tile_pkg::SCALE_EXP_BITS,
  localparam int QMUL_BITS = kvcim_tile_pkg::QMUL_BITS,
  localparam int EXP_ONE_BITS = kvcim_tile_pkg::EXP_ONE_BITS,
  localparam int N_BITS = $clog2(T + 1),
  localparam int E_BITS = EXP_ONE_BITS + 1,          // e_t <= 2^16
  localparam int SUM_BITS = E_BITS + $clog2(T),      // sum_t e_t <= T 2^16
  localparam int Y_BITS = S_BITS + QMUL_BITS + 1     // |Y_t| <= |s_t| qmul + 1
) (
  input  logic                  clk,
  input  logic                  rst,
  input  logic                  evt_clear_i,
  input  logic                  start_valid_i,
  output logic                  start_ready_o,
  input  logic [T*S_BITS-1:0]   scores_i,      // s_t, signed, stable while busy (the K macro's
                                               // result registers serve as the score buffer)
  input  logic [T*XB-1:0]       ek_i,          // per-token exponents, stable while busy
  input  logic [T*XB-1:0]       ev_i,
  input  logic [QMUL_BITS-1:0]  qmul_i,        // stable while busy
  input  logic [XB-1:0]         qexp_i,
  input  logic [N_BITS-1:0]     n_i,           // valid tokens, latched at the start handshake
  output logic                  done_valid_o,
  input  logic                  done_ready_i,
  output logic [T*PROB_BITS-1:0] prob_o,       // p'_t
  output logic [XB-1:0]         evmax_o,
  output logic [Y_BITS-1:0]     ymax_o,
  output logic [SUM_BITS-1:0]   sum_o,
  // events, as kvcim::cmodel::cim::SoftmaxEvents
  output logic [63:0]           ev_multiplies_o,
  output logic [63:0]           ev_shifts_o,
  output logic [63:0]           ev_adds_o,
  output logic [63:0]           ev_comparisons_o,
  output logic [63:0]           ev_exp_lookups_o,
  output logic [63:0]           ev_divisions_o,
  output logic [63:0]           ev_cycles_o
);
  // (Package names are qualified, not imported: the subset Yosys 0.23 reads.)
  localparam int EXP_ZERO_SHIFT = kvcim_tile_pkg::EXP_ZERO_SHIFT;
  localparam int SCALE_MAX_SHIFT = kvcim_tile_pkg::SCALE_MAX_SHIFT;
  localparam int FOLD_MAX_SHIFT = kvcim_tile_pkg::FOLD_MAX_SHIFT;
  localparam int T_BITS = (T > 1) ? $clog2(T) : 1;
  localparam int D_BITS = Y_BITS + 1;              // 0 <= Ymax - Y_t < 2^Y_BITS
  localparam int NUM_BITS = E_BITS + PROB_BITS;
  localparam int P_BITS = S_BITS + QMUL_BITS + 1;    // s_t qmul, signed

  typedef enum logic [2:0] {IDLE, SCALE, EXP, NORM, DONE} phase_t;
  phase_t phase;
  logic [T_BITS-1:0] t_q;
  logic [N_BITS-1:0] n_q;
  logic signed [Y_BITS-1:0] y [T];    // Y_t, written in SCALE
  logic [E_BITS-1:0] e [T];
  logic [PROB_BITS-1:0] p [T];
  logic signed [Y_BITS-1:0] ymax;
  logic signed [XB-1:0] evmax;
  logic [SUM_BITS-1:0] sum;

  assign start_ready_o = (phase == IDLE);
  assign done_valid_o = (phase == DONE);
  assign evmax_o = evmax;
  assign ymax_o = ymax;
  assign sum_o = sum;
  always_comb begin
    for (int t = 0; t < T; t++) prob_o[t*PROB_BITS +: PROB_BITS] = p[t];
  end

  // ---- the datapath of token t_q (one of each unit) ---------------------------------------------
  wire signed [XB-1:0] ek_t = ek_i[32'(t_q)*XB +: XB];
  wire signed [XB-1:0] ev_t = ev_i[32'(t_q)*XB +: XB];
  wire signed [S_BITS-1:0] s_t = scores_i[32'(t_q)*S_BITS +: S_BITS];

  // Where each clamp or cut-off is active for the token in the datapath: for the functional cover
  // points of the coverage build (testbench/coverage); nothing depends on them.
  /* verilator lint_off UNUSEDSIGNAL */
  logic cov_scale_clamp_hi, cov_scale_clamp_lo, cov_exp_zero_shift, cov_fold_clamp;
  /* verilator lint_on UNUSEDSIGNAL */

  // SCALE: Y = (s qmul + 2^(sh-1)) >>> sh, sh = clamp(-(qexp + ek + F), 0, 62)
  logic signed [Y_BITS-1:0] y_scaled;
  always_comb begin
    logic signed [63:0] prod;
    logic signed [XB+2:0] e2;
    logic signed [XB+2:0] neg;
    int sh;
    logic signed [63:0] rnd;
    // an (S_BITS + QMUL_BITS + 1)-bit product, exact, sign-extended (not a 64 x 64 multiplier)
    prod = 64'(P_BITS'(s_t) * $signed({1'b0, qmul_i}));
    e2 = (XB+3)'($signed(qexp_i)) + (XB+3)'(ek_t) + (XB+3)'(EXP_FRAC);
    neg = -e2;
    sh = (neg < 0) ? 0 : (32'(neg) > SCALE_MAX_SHIFT) ? SCALE_MAX_SHIFT : 32'(neg);
    rnd = (sh == 0) ? 64'sd0 : (64'sd1 <<< (sh - 1));
    y_scaled = Y_BITS'((prod + rnd) >>> sh);  // fits: |Y| <= |prod| + 1
    cov_scale_clamp_hi = (neg >= 0) && (32'(neg) > SCALE_MAX_SHIFT);
    cov_scale_clamp_lo = (neg < 0);
  end

  // EXP: e = n >= 17 ? 0 : LUT[d mod 2^F] >> n, n = d >> F
  logic [E_BITS-1:0] e_t;
  always_comb begin
    logic [D_BITS-1:0] d;
    logic [D_BITS-1:0] oct;
    logic [EXP_FRAC-1:0] frac;
    d = D_BITS'(ymax) - D_BITS'(y[t_q]);
    oct = d >> EXP_FRAC;
    frac = d[EXP_FRAC-1:0];
    e_t = (oct >= D_BITS'(EXP_ZERO_SHIFT)) ? '0 : E_BITS'(EXP_LUT[32'(frac)*E_BITS +: E_BITS] >> oct);
    cov_exp_zero_shift = (oct >= D_BITS'(EXP_ZERO_SHIFT));
  end

  // NORM: restoring division, one quotient bit per step; the quotient is < 2^P because e_t <= sum.
  logic [PROB_BITS-1:0] p_t;
  always_comb begin
    logic [NUM_BITS-1:0] num;
    logic [SUM_BITS:0] rem;
    logic [PROB_BITS-1:0] quo;
    logic [XB:0] fsh_full;
    int fsh;
    num = (NUM_BITS'(e[t_q]) << PROB_BITS) - NUM_BITS'(e[t_q]);
    rem = (SUM_BITS+1)'(num >> PROB_BITS);
    quo = '0;
    fsh_full = (XB+1)'(evmax) - (XB+1)'(ev_t);  // 0 .. 2^XB - 1
    fsh = (fsh_full > (XB+1)'(FOLD_MAX_SHIFT)) ? FOLD_MAX_SHIFT : 32'(fsh_full);
    for (int i = PROB_BITS - 1; i >= 0; i--) begin
      rem = {rem[SUM_BITS-1:0], num[i]};
      if (rem >= {1'b0, sum}) begin
        rem = rem - {1'b0, sum};
        quo[i] = 1'b1;
      end
    end
    // V-exponent fold: round half up
    p_t = PROB_BITS'((fsh == 0) ? 32'(quo) : ((32'(quo) + (32'd1 << (fsh - 1))) >> fsh));
    cov_fold_clamp = (fsh_full > (XB+1)'(FOLD_MAX_SHIFT));
  end

  // ---- sequencing ---------------------------------------------------------------------------
  wire last = (32'(t_q) == 32'(n_q) - 1);
  always_ff @(posedge clk) begin
    if (rst) begin
      phase <= IDLE;
      t_q <= '0;
      n_q <= '0;
      ymax <= '0;
      evmax <= '0;
      sum <= '0;
    end else begin
      case (phase)
        IDLE: if (start_valid_i) begin
          n_q <= n_i;
          t_q <= '0;
          ymax <= {1'b1, {(Y_BITS-1){1'b0}}};  // most negative: the first token always wins
          evmax <= {1'b1, {(XB-1){1'b0}}};
          sum <= '0;
          phase <= (n_i == 0) ? DONE : SCALE;
        end
        SCALE: begin
          y[t_q] <= y_scaled;
          if (y_scaled > ymax) ymax <= y_scaled;
          if (ev_t > evmax) evmax <= ev_t;
          t_q <= last ? '0 : t_q + 1'b1;
          if (last) phase <= EXP;
        end
        EXP: begin
          e[t_q] <= e_t;
          sum <= sum + SUM_BITS'(e_t);
          t_q <= last ? '0 : t_q + 1'b1;
          if (last) phase <= NORM;
        end
        NORM: begin
          p[t_q] <= p_t;
          t_q <= last ? '0 : t_q + 1'b1;
          if (last) phase <= DONE;
        end
        // (Excluded from line coverage: in the tile the V macro is idle whenever the softmax is done,
        // so done_ready_i is never low here; the unused encodings 5..7 are unreachable.)
        /* verilator coverage_off */
        DONE: if (done_ready_i) phase <= IDLE;
        default: phase <= IDLE;
        /* verilator coverage_on */
      endcase
    end
  end

  // ---- event counters: every unit used once per token and pass --------------------------------
  always_ff @(posedge clk) begin
    if (rst || evt_clear_i) begin
      ev_multiplies_o <= '0;
      ev_shifts_o <= '0;
      ev_adds_o <= '0;
      ev_comparisons_o <= '0;
      ev_exp_lookups_o <= '0;
      ev_divisions_o <= '0;
      ev_cycles_o <= '0;
    end else begin
      case (phase)
        SCALE: begin  // multiplier, rounding adder, barrel shifter, two comparators
          ev_multiplies_o <= ev_multiplies_o + 64'd1;
          ev_adds_o <= ev_adds_o + 64'd1;
          ev_shifts_o <= ev_shifts_o + 64'd1;
          ev_comparisons_o <= ev_comparisons_o + 64'd2;
          ev_cycles_o <= ev_cycles_o + 64'd1;
        end
        EXP: begin  // max subtractor, table, octave shifter, sum adder
          ev_adds_o <= ev_adds_o + 64'd2;
          ev_exp_lookups_o <= ev_exp_lookups_o + 64'd1;
          ev_shifts_o <= ev_shifts_o + 64'd1;
          ev_cycles_o <= ev_cycles_o + 64'd1;
        end
        NORM: begin  // divider, fold shifter and its rounding adder
          ev_divisions_o <= ev_divisions_o + 64'd1;
          ev_shifts_o <= ev_shifts_o + 64'd1;
          ev_adds_o <= ev_adds_o + 64'd1;
          ev_cycles_o <= ev_cycles_o + 64'd1;
        end
        default: ;
      endcase
    end
  end
endmodule
