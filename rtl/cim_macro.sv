// cim_macro: a digital SRAM compute-in-memory macro. Its C model is kvcim::cmodel::cim::Macro with
// kind digital, cell_bits 1, twos_complement encoding, input_bits_per_cycle 1 and
// rows_per_cycle = ROWS; the event counters follow compute_events() / write_events() of
// cmodel/cim/macro_spec.cpp exactly (the co-simulation suites compare them).
//
// ROWS wordlines x N_W*W_BITS bitlines of 1-bit cells. The signed W_BITS weight W[r][g] is stored
// bit-sliced across the W_BITS columns of column group g, least significant slice first; the last
// slice (the sign bit) weighs -2^(W_BITS-1). Inputs enter bit-serially, least significant bit
// first, one bit of every row per cycle; with IN_SIGNED the last bit weighs -2^(IN_BITS-1). Each
// column's partial sum over the driven rows comes from an exact adder tree (the popcount of cell AND
// input bit); shift-and-add combines the slices and the input bits into one accumulator per column
// group. ACC_BITS is the exact width of the worst-case sum.
//
// Ports: a single-cycle row write (all column groups of one row), a column-group write written one
// wordline per cycle (ROWS cycles, valid/ready), and a compute port (valid/ready in, valid/ready
// out). Compute latency: IN_BITS cycles after the accept edge (none if n_rows or n_out is 0); the
// result y_o stays valid until y_ready_i.
module cim_macro #(
  parameter int ROWS = 8,
  parameter int N_W = 64,
  parameter int W_BITS = 8,
  parameter int IN_BITS = 8,
  parameter bit IN_SIGNED = 1'b1,
  parameter int ACC_BITS = IN_BITS + W_BITS + $clog2(ROWS),
  localparam int RA_BITS = (ROWS > 1) ? $clog2(ROWS) : 1,
  localparam int GA_BITS = (N_W > 1) ? $clog2(N_W) : 1,
  localparam int NR_BITS = $clog2(ROWS + 1),
  localparam int NO_BITS = $clog2(N_W + 1)
) (
  input  logic                    clk,
  input  logic                    rst,
  input  logic                    evt_clear_i,   // zero the event counters
  // row write: W[row_addr_i][g] = row_data_i[g] for every column group g, in one cycle
  input  logic                    row_we_i,
  input  logic [RA_BITS-1:0]      row_addr_i,
  input  logic [N_W*W_BITS-1:0]   row_data_i,
  // column-group write: W[r][col_addr_i] = col_data_i[r] for every row r, row r in the r-th cycle
  input  logic                    col_valid_i,
  output logic                    col_ready_o,
  output logic                    col_busy_o,    // rows 1..ROWS-1 still being written
  input  logic [GA_BITS-1:0]      col_addr_i,
  input  logic [ROWS*W_BITS-1:0]  col_data_i,
  // compute: y[g] = sum_{r < n_rows} x[r] W[r][g] for g < n_out
  input  logic                    cmp_valid_i,
  output logic                    cmp_ready_o,
  input  logic [ROWS*IN_BITS-1:0] x_i,
  input  logic [NR_BITS-1:0]      n_rows_i,
  input  logic [NO_BITS-1:0]      n_out_i,
  output logic                    y_valid_o,
  input  logic                    y_ready_i,
  output logic [N_W*ACC_BITS-1:0] y_o,
  // events, as kvcim::cmodel::cim::MacroEvents (a digital macro has no ADC conversions)
  output logic [63:0]             ev_row_activations_o,
  output logic [63:0]             ev_column_reads_o,
  output logic [63:0]             ev_adder_ops_o,
  output logic [63:0]             ev_shift_add_ops_o,
  output logic [63:0]             ev_cell_writes_o,
  output logic [63:0]             ev_cycles_o
);
  localparam int COLS = N_W * W_BITS;  // bitlines
  localparam int BIT_BITS = (IN_BITS > 1) ? $clog2(IN_BITS) : 1;
  // One column group's slice combination, before the input-bit shift: |part| <= ROWS 2^(W_BITS-1).
  localparam int PART_BITS = W_BITS + $clog2(ROWS + 1) + 1;

  typedef enum logic [1:0] {IDLE, BUSY, DONE} state_t;
  state_t state;

  logic [ROWS*IN_BITS-1:0] x_q;
  logic [NR_BITS-1:0] nr_q;
  logic [NO_BITS-1:0] no_q;
  logic [BIT_BITS-1:0] bit_q;

  logic wr_busy;
  logic [RA_BITS-1:0] wr_row;
  logic [GA_BITS-1:0] wr_col;
  logic [ROWS*W_BITS-1:0] wr_data;

  assign col_ready_o = (state == IDLE) && !wr_busy;
  assign col_busy_o = wr_busy;
  assign cmp_ready_o = (state == IDLE) && !wr_busy;
  assign y_valid_o = (state == DONE);

  wire col_fire = col_valid_i && col_ready_o;
  wire cmp_fire = cmp_valid_i && cmp_ready_o;
  wire last_bit = (32'(bit_q) == IN_BITS - 1);

  // The wordline being written by the column-group write: row 0 in the accept cycle, then 1, 2, ..
  wire col_we = col_fire || wr_busy;
  wire [RA_BITS-1:0] col_row = col_fire ? '0 : wr_row;
  wire [GA_BITS-1:0] col_grp = col_fire ? col_addr_i : wr_col;
  wire [W_BITS-1:0] col_bits = col_fire ? col_data_i[0 +: W_BITS] : wr_data[32'(wr_row)*W_BITS +: W_BITS];

  // Wordlines driven in this input cycle: bit bit_q of each row's input, rows below n_rows only.
  // The bit is selected within the row's own input (a constant slice, then an IN_BITS-to-1
  // multiplexer): an index into the whole x_q would be a shifter over ROWS x IN_BITS bits per row,
  // which made the V macro's synthesis take a minute and 3 GB at two column groups.
  logic [ROWS-1:0] xb;
  always_comb begin
    for (int r = 0; r < ROWS; r++) begin
      logic [IN_BITS-1:0] xr;
      xr = x_q[r*IN_BITS +: IN_BITS];
      xb[r] = xr[bit_q] && (r < 32'(nr_q));
    end
  end

  // ---- the cell array: one word per column group, in one flat vector ------------------------
  // cells[g*WORD + s*ROWS + r]: the cell of slice s (bitline g*W_BITS + s) on wordline r. A
  // column-group write replaces one bit of each slice of one word per cycle; a row write one bit
  // in every word. The tile never does both in one cycle on the same macro. Written through
  // one-hot wordline masks and one decoded enable per word, every part-select constant (not an
  // unpacked array, not a variable index: Yosys orders every pair of writes to an array, expands
  // a variable bit index into a case over every bit and a variable part-select into a shifter
  // over the whole array, which made the macro's synthesis take minutes and grow faster than its
  // size).
  localparam int WORD = W_BITS * ROWS;
  logic [N_W*WORD-1:0] cells;
  wire [ROWS-1:0] col_sel = ROWS'(1) << col_row;
  wire [ROWS-1:0] row_sel = ROWS'(1) << row_addr_i;
  wire [WORD-1:0] col_mask = {W_BITS{col_sel}};
  wire [WORD-1:0] row_mask = {W_BITS{row_sel}};
  logic [WORD-1:0] col_word;
  always_comb begin
    for (int s = 0; s < W_BITS; s++) col_word[s*ROWS +: ROWS] = {ROWS{col_bits[s]}};
  end
  for (genvar g = 0; g < N_W; g++) begin : g_word
    logic [WORD-1:0] row_word;  // word g's slice bits of the written row, on every wordline
    always_comb begin
      for (int s = 0; s < W_BITS; s++) row_word[s*ROWS +: ROWS] = {ROWS{row_data_i[g*W_BITS + s]}};
    end
    wire col_hit = col_we && (32'(col_grp) == g);
    always_ff @(posedge clk) begin
      if (col_hit) begin
        cells[g*WORD +: WORD] <= (cells[g*WORD +: WORD] & ~col_mask) | (col_word & col_mask);
      end else if (!col_we && row_we_i) begin
        cells[g*WORD +: WORD] <= (cells[g*WORD +: WORD] & ~row_mask) | (row_word & row_mask);
      end
    end
  end

  // ---- adder trees and shift-and-add: one accumulator per column group ----------------------
  logic [N_W*ACC_BITS-1:0] acc;
  assign y_o = acc;
  always_ff @(posedge clk) begin
    if (state == IDLE && cmp_fire) begin
      acc <= '0;
    end else if (state == BUSY) begin
      logic [N_W*ACC_BITS-1:0] next;
      next = acc;
      for (int g = 0; g < N_W; g++) begin
        if (g < 32'(no_q)) begin
          logic signed [PART_BITS-1:0] part;
          logic signed [ACC_BITS-1:0] term;
          part = '0;
          for (int s = 0; s < W_BITS; s++) begin
            // adder tree of one bitline: the rows whose cell and input bit are both 1
            logic signed [PART_BITS-1:0] cnt;
            cnt = PART_BITS'($countones(cells[g*WORD + s*ROWS +: ROWS] & xb));
            if (s == W_BITS - 1) part = part - (cnt <<< s);  // sign slice: -2^(W_BITS-1)
            else part = part + (cnt <<< s);
          end
          term = ACC_BITS'(part) <<< bit_q;
          if (IN_SIGNED && last_bit) term = -term;  // sign bit of the input: -2^(IN_BITS-1)
          next[g*ACC_BITS +: ACC_BITS] = next[g*ACC_BITS +: ACC_BITS] + term;
        end
      end
      acc <= next;
    end
  end

  // ---- column-group write sequencing --------------------------------------------------------
  always_ff @(posedge clk) begin
    if (rst) begin
      wr_busy <= 1'b0;
      wr_row <= '0;
      wr_col <= '0;
      wr_data <= '0;
    end else if (col_fire) begin
      wr_busy <= (ROWS > 1);
      wr_row <= RA_BITS'(1 % ROWS);
      wr_col <= col_addr_i;
      wr_data <= col_data_i;
    end else if (wr_busy) begin
      if (32'(wr_row) == ROWS - 1) wr_busy <= 1'b0;
      else wr_row <= wr_row + 1'b1;
    end
  end

  // ---- bit-serial compute sequencing --------------------------------------------------------
  always_ff @(posedge clk) begin
    if (rst) begin
      state <= IDLE;
      bit_q <= '0;
      nr_q <= '0;
      no_q <= '0;
      x_q <= '0;
    end else begin
      case (state)
        IDLE: if (cmp_fire) begin
          x_q <= x_i;
          nr_q <= n_rows_i;
          no_q <= n_out_i;
          bit_q <= '0;
          state <= (n_rows_i == 0 || n_out_i == 0) ? DONE : BUSY;
        end
        BUSY: begin
          if (last_bit) state <= DONE;
          else bit_q <= bit_q + 1'b1;
        end
        DONE: if (y_ready_i) state <= IDLE;
        // (unreachable: every encoding is a state or reset leaves none; excluded from coverage)
        /* verilator coverage_off */
        default: state <= IDLE;
        /* verilator coverage_on */
      endcase
    end
  end

  // ---- event counters (MacroEvents) --------------------------------------------------------
  // n_out (n_rows - 1): a narrow product (nr_q >= 1 while BUSY); a 64 x 64 multiplier would
  // dominate synthesis.
  wire [NR_BITS-1:0] nr_m1 = nr_q - 1'b1;
  wire [NO_BITS+NR_BITS-1:0] adds_per_slice = (NO_BITS+NR_BITS)'(no_q) * (NO_BITS+NR_BITS)'(nr_m1);
  always_ff @(posedge clk) begin
    if (rst || evt_clear_i) begin
      ev_row_activations_o <= '0;
      ev_column_reads_o <= '0;
      ev_adder_ops_o <= '0;
      ev_shift_add_ops_o <= '0;
      ev_cell_writes_o <= '0;
      ev_cycles_o <= '0;
    end else begin
      logic [63:0] writes;
      logic [63:0] wcycles;
      writes = '0;
      wcycles = '0;
      if (row_we_i) begin
        writes = writes + 64'(COLS);
        wcycles = wcycles + 64'd1;
      end
      if (col_we) begin  // one wordline of W_BITS cells per cycle
        writes = writes + 64'(W_BITS);
        wcycles = wcycles + 64'd1;
      end
      ev_cell_writes_o <= ev_cell_writes_o + writes;
      if (state == BUSY) begin
        // per input cycle: n_rows wordlines, n_out*W_BITS bitlines each summing n_rows cells
        // (n_rows - 1 adds), n_out*W_BITS shift-adds less the first one of each group.
        ev_row_activations_o <= ev_row_activations_o + 64'(nr_q);
        ev_column_reads_o <= ev_column_reads_o + 64'(no_q) * W_BITS;
        ev_adder_ops_o <= ev_adder_ops_o + 64'(adds_per_slice) * W_BITS;
        ev_shift_add_ops_o <= ev_shift_add_ops_o + 64'(no_q) * W_BITS - (bit_q == 0 ? 64'(no_q) : 64'd0);
        ev_cycles_o <= ev_cycles_o + wcycles + 64'd1;
      end else begin
        ev_cycles_o <= ev_cycles_o + wcycles;
      end
    end
  end
endmodule
