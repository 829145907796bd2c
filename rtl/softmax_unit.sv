// softmax_unit: the tile's fixed-point softmax, steps 2-5 of docs/attention_tile.md, bit for bit
// with kvcim::cmodel::cim::softmax_fixed (cmodel/cim/softmax_fixed.cpp).
//
// Three passes over the n valid tokens, one token per cycle each (3n + DIV_STAGES - 1 cycles after
// the start handshake; n = 0 finishes at once):
//   SCALE  Y_t = round_half_up(s_t qmul 2^(qexp + ek_t + F)), shift clamped to [0, 62];
//          running maxima Ymax and evmax.
//   EXP    d_t = Ymax - Y_t; e_t = (d_t >> F) >= 17 ? 0 : LUT[d_t mod 2^F] >> (d_t >> F); sum += e_t.
//   NORM   p_t = floor(e_t (2^P - 1) / sum) by a P-step restoring divider, pipelined in
//          DIV_STAGES = ceil(P / DIV_BITS_PER_STAGE) stages (one token entering per cycle, so the
//          pass takes n + DIV_STAGES - 1 cycles); p'_t = round_half_up(p_t / 2^min(evmax - ev_t, 31))
//          after the last stage. (Unpipelined, the P-step divider was the unit's longest path:
//          195 gate levels at P = 12.)
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
  localparam int DIV_STEP = kvcim_tile_pkg::DIV_BITS_PER_STAGE;
  localparam int DIV_STAGES = (PROB_BITS + DIV_STEP - 1) / DIV_STEP;
  localparam int FSH_BITS = XB + 1;                  // evmax - ev_t: 0 .. 2^XB - 1
  localparam int REM_BITS = SUM_BITS + 1;

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

  // NORM: restoring division, one quotient bit per step (the quotient is < 2^P because e_t <= sum),
  // pipelined: stage k takes the quotient bits P-1-k*DIV_STEP down to max(0, P-(k+1)*DIV_STEP).
  // Stage 0 reads the token at t_q; stage k > 0 reads the registers stage k-1 wrote a cycle
  // earlier (index 0 of the register arrays is unused). `sum` is constant through the pass.
  logic issuing;                                 // NORM: tokens still to enter the divider
  logic [REM_BITS-1:0]  rem0;                    // stage 0's inputs, from the token at t_q
  logic [PROB_BITS-1:0] low0;
  logic [FSH_BITS-1:0]  fsh0;
  always_comb begin
    logic [NUM_BITS-1:0] num;
    num = (NUM_BITS'(e[t_q]) << PROB_BITS) - NUM_BITS'(e[t_q]);
    rem0 = REM_BITS'(num >> PROB_BITS);
    low0 = num[PROB_BITS-1:0];
    fsh0 = FSH_BITS'(evmax) - FSH_BITS'(ev_t);
  end
  wire enter = (phase == NORM) && issuing;       // a token enters stage 0 this cycle
  // What each stage holds (slice k: the token in stage k, stage 0 combinational from t_q) and
  // computes; the last stage's token leaves with its quotient. (Flat vectors of per-stage slices:
  // the subset Yosys 0.23 reads has no multi-dimensional packed arrays.)
  logic [DIV_STAGES-1:0]             sv;      // a token in stage k
  logic [DIV_STAGES*T_BITS-1:0]      st;      // its index
  logic [DIV_STAGES*PROB_BITS-1:0]   slow;    // the numerator's low P bits, consumed MSB first
  logic [DIV_STAGES*FSH_BITS-1:0]    sfsh;    // evmax - ev_t
  logic [DIV_STAGES*PROB_BITS-1:0]   squo;    // the quotient bits after stage k
  /* verilator lint_off UNUSEDSIGNAL */       // (the last stage's remainder is not needed)
  logic [DIV_STAGES*REM_BITS-1:0]    srem;    // the partial remainder after stage k
  /* verilator lint_on UNUSEDSIGNAL */
  for (genvar k = 0; k < DIV_STAGES; k++) begin : g_div
    localparam int HI = PROB_BITS - 1 - k * DIV_STEP;
    localparam int LO = (HI - DIV_STEP + 1 < 0) ? 0 : HI - DIV_STEP + 1;
    logic [REM_BITS-1:0] rem_in, rem_out;
    logic [PROB_BITS-1:0] quo_in, quo_out;
    if (k == 0) begin : g_first
      assign sv[0] = enter;
      assign st[0 +: T_BITS] = t_q;
      assign slow[0 +: PROB_BITS] = low0;
      assign sfsh[0 +: FSH_BITS] = fsh0;
      assign rem_in = rem0;
      assign quo_in = '0;
    end else begin : g_reg
      // the pipeline register between stage k-1 and stage k
      logic v_q;
      logic [T_BITS-1:0] t_k;
      logic [REM_BITS-1:0] rem_q;
      logic [PROB_BITS-1:0] quo_q, low_q;
      logic [FSH_BITS-1:0] fsh_q;
      always_ff @(posedge clk) begin
        if (rst) v_q <= 1'b0;
        else v_q <= sv[k-1];
        t_k <= st[(k-1)*T_BITS +: T_BITS];
        rem_q <= srem[(k-1)*REM_BITS +: REM_BITS];
        quo_q <= squo[(k-1)*PROB_BITS +: PROB_BITS];
        low_q <= slow[(k-1)*PROB_BITS +: PROB_BITS];
        fsh_q <= sfsh[(k-1)*FSH_BITS +: FSH_BITS];
      end
      assign sv[k] = v_q;
      assign st[k*T_BITS +: T_BITS] = t_k;
      assign slow[k*PROB_BITS +: PROB_BITS] = low_q;
      assign sfsh[k*FSH_BITS +: FSH_BITS] = fsh_q;
      assign rem_in = rem_q;
      assign quo_in = quo_q;
    end
    always_comb begin
      logic [REM_BITS-1:0] rem;
      logic [PROB_BITS-1:0] quo;
      logic [PROB_BITS-1:0] low;
      rem = rem_in;
      quo = quo_in;
      low = slow[k*PROB_BITS +: PROB_BITS];
      for (int i = HI; i >= LO; i--) begin
        rem = {rem[REM_BITS-2:0], low[i]};
        if (rem >= {1'b0, sum}) begin
          rem = rem - {1'b0, sum};
          quo[i] = 1'b1;
        end
      end
      rem_out = rem;
      quo_out = quo;
    end
    assign srem[k*REM_BITS +: REM_BITS] = rem_out;
    assign squo[k*PROB_BITS +: PROB_BITS] = quo_out;
  end
  // the last stage: its token's quotient, the V-exponent fold (round half up)
  localparam int LAST = DIV_STAGES - 1;
  wire                   out_v = sv[LAST];
  wire [T_BITS-1:0]      out_t = st[LAST*T_BITS +: T_BITS];
  wire [FSH_BITS-1:0]    out_fsh = sfsh[LAST*FSH_BITS +: FSH_BITS];
  wire [PROB_BITS-1:0]   out_quo = squo[LAST*PROB_BITS +: PROB_BITS];
  logic [PROB_BITS-1:0] p_t;
  always_comb begin
    int fsh;
    fsh = (out_fsh > FSH_BITS'(FOLD_MAX_SHIFT)) ? FOLD_MAX_SHIFT : 32'(out_fsh);
    p_t = PROB_BITS'((fsh == 0) ? 32'(out_quo) : ((32'(out_quo) + (32'd1 << (fsh - 1))) >> fsh));
    cov_fold_clamp = out_v && (out_fsh > FSH_BITS'(FOLD_MAX_SHIFT));
  end

  // ---- sequencing ---------------------------------------------------------------------------
  wire last = (32'(t_q) == 32'(n_q) - 1);
  always_ff @(posedge clk) begin
    if (rst) begin
      phase <= IDLE;
      t_q <= '0;
      n_q <= '0;
      issuing <= 1'b0;
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
          if (last) begin
            phase <= NORM;
            issuing <= 1'b1;
          end
        end
        NORM: begin
          // tokens enter the divider one per cycle; each leaves DIV_STAGES - 1 cycles later
          if (issuing) begin
            t_q <= last ? '0 : t_q + 1'b1;
            if (last) issuing <= 1'b0;
          end
          if (out_v) p[out_t] <= p_t;
          if (out_v && 32'(out_t) == 32'(n_q) - 1) phase <= DONE;
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
        NORM: begin  // divider (per token leaving it), fold shifter and its rounding adder
          if (out_v) begin
            ev_divisions_o <= ev_divisions_o + 64'd1;
            ev_shifts_o <= ev_shifts_o + 64'd1;
            ev_adds_o <= ev_adds_o + 64'd1;
          end
          ev_cycles_o <= ev_cycles_o + 64'd1;
        end
        default: ;
      endcase
    end
  end
endmodule
