// Bit-accurate C model of one CIM macro: `rows` wordlines x `cols` bitlines of cells holding
// `cell_bits` each. A signed weight of `weight_bits` is stored bit-sliced across
// slices_per_weight() adjacent columns (its column group). Inputs enter `input_bits_per_cycle`
// bits at a time (bit-serial by default); `rows_per_cycle` rows are summed per conversion; each
// column's partial sum is read by an exact adder tree (digital CIM) or an ADC (analog CIM);
// shift-and-add recombines slices and input bits. docs/cim_macro.md states the circuit model,
// the encodings, the ADC rules, the noise model and the event formulas.
//
// Signs, without negative cell levels or bipolar DACs: the sign bit of a two's-complement value
// always travels alone, as a 1-bit slice (weights) or a 1-bit input cycle (inputs), weighted
// negatively in the shift-and-add. The other W-1 (B-1) bits are cut into cell_bits
// (input_bits_per_cycle) wide pieces from the least significant bit up. Hence
//   slices_per_weight: twos_complement 1 + ceil((W-1)/c); offset ceil(W/c);
//                      differential 2 * ceil((W-1)/c)
//   input_cycles:      signed 1 + ceil((B-1)/d); unsigned ceil(B/d)
// (with 1-bit cells and bit-serial inputs these are the familiar W and B).
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "kvcim/cmodel/cim/macro_kinds.hpp"
#include "kvcim/fields.hpp"

namespace kvcim::cmodel::cim {

// MacroKind (digital, analog, ...) is declared by its table, macro_kinds.hpp; what
// a kind computes and counts is its MacroKindModel (macro_kind.hpp).
// twos_complement: slices of the two's-complement code, the most significant slice weighted
//   negatively. offset: w + 2^(weight_bits-1) stored unsigned, the offset removed digitally
//   (input sum x offset). differential: |w| split across a positive and a negative column group.
enum class WeightEncoding { twos_complement, offset, differential };
// full_scale: the ADC spans the largest possible column partial sum. calibrated: a clipped range
//   (adc_clip x full scale, rounded to a power of two), values above it saturate.
enum class AdcRange { full_scale, calibrated };
// How an analog macro sums its noise (docs/cim_macro.md, "Noise models"). exact: the stored
//   deviations and the read noise in floating point, the reference model. fixed: both on a grid of
//   2^-noise_grid_bits() levels, every conversion integer arithmetic end to end (the same law up
//   to that grid; tests hold the two models' code distributions and evaluation NLL equal).
enum class NoiseModel { exact, fixed };

struct MacroSpec {
  MacroKind kind = MacroKind::digital;
  int rows = 64;
  int cols = 64;
  int cell_bits = 1;             // SRAM 1; ReRAM 1..4
  int weight_bits = 8;           // stored weight width (signed)
  int input_bits = 8;            // input width
  bool input_signed = true;      // two's complement inputs (false: unsigned, e.g. probabilities)
  int input_bits_per_cycle = 1;  // DAC resolution; 1 = bit-serial
  int rows_per_cycle = 64;       // rows summed per conversion
  int adc_bits = 8;              // analog only
  int adc_share = 1;             // columns per ADC, time-multiplexed
  AdcRange adc_range = AdcRange::full_scale;
  double adc_clip = 1.0;         // calibrated range as a fraction of full scale
  WeightEncoding encoding = WeightEncoding::twos_complement;
  double cell_noise_sigma = 0.0; // Gaussian, in cell levels, drawn once per cell when written
  double read_noise_sigma = 0.0; // Gaussian, in cell levels, added to each column read
  uint64_t seed = 1;             // the counter-based generator of both noises (draw i = f(seed, i))
  NoiseModel noise_model = NoiseModel::fixed;  // analog only
  // Conductance drift of non-volatile cells (analog only): a cell programmed to G0 reads, a time
  // t after programming, G0 (t / t0)^-nu, nu drawn per cell ~ N(drift_nu, drift_nu_sigma) (a pure
  // function of (seed, cell): the cell's identity, not the write order). With drift_compensation
  // the reads are rescaled by the mean drift (t / t0)^drift_nu, as aihwkit's global compensation:
  // only the spread of nu is left. drift_time_s <= drift_t0_s: no drift.
  double drift_nu = 0.0;
  double drift_nu_sigma = 0.0;
  double drift_t0_s = 1.0;
  double drift_time_s = 0.0;
  bool drift_compensation = true;
  // Stuck-at faults (analog only): each cell, by its identity (seed, cell), is stuck with this
  // probability at its lowest or highest level (equally likely), whatever is written.
  double stuck_rate = 0.0;
  // The published macro these macros are (a configs/macros/*.yaml; "" for none): a hardware spec
  // prices the macro events by its circuit (mapper/hardware.hpp); the C model does not read it.
  std::string describes;
  bool drifts() const { return drift_time_s > drift_t0_s && (drift_nu != 0.0 || drift_nu_sigma != 0.0); }

  // Throws kvcim::Error naming `where`, the field and the value.
  void validate(const std::string& where) const;
  int slices_per_weight() const;   // columns of one weight (x2 for differential), see above
  int weights_per_row() const;     // cols / slices_per_weight()
  int input_cycles() const;        // see above; ceil(input_bits / input_bits_per_cycle) if unsigned
  int row_groups(int used_rows) const;  // ceil(used_rows / rows_per_cycle)

  // Range of one stored weight: [weight_min, weight_max] = [-2^(W-1), 2^(W-1)-1], except
  // differential: [-(2^(W-1)-1), 2^(W-1)-1] (a magnitude of W-1 bits per column group).
  int32_t weight_min() const;
  int32_t weight_max() const;
  // Range of one input: signed [-2^(B-1), 2^(B-1)-1], unsigned [0, 2^B-1].
  int32_t input_min() const;
  int32_t input_max() const;
  // Analog ADC (ignored in digital mode). Full scale = the largest noise-free column partial
  // sum: rows_per_cycle * (2^dmax - 1) * (2^cmax - 1), dmax/cmax the widest input piece / slice.
  // The step is 2^adc_shift(): the smallest shift s >= 0 with (2^adc_bits - 1) * 2^s >= range,
  // range = full scale (full_scale) or adc_clip * full scale (calibrated).
  // code = clamp(floor(p / 2^s + 1/2), 0, 2^adc_bits - 1); reconstructed partial sum code << s.
  // The kind decides both: a kind that merges weight slices before converting spans the merged
  // range with a bipolar converter (MacroKindModel::adc_full_scale, adc_low_code, adc_top_code).
  int64_t adc_full_scale() const;
  int adc_shift() const;
  int64_t adc_low_code() const;   // the converter's lowest code (0, or -2^(A-1) when bipolar)
  int64_t adc_top_code() const;   // its highest code (2^A - 1, or 2^(A-1) - 1 when bipolar)
  int64_t adc_count() const;      // converters per macro (0 for a kind without converters)
  // The fixed noise model's grid: deviations and read noise are integers times 2^-q levels,
  // q = min(10, 30 - adc_shift()) (the ADC's rounding then fits 32 bits); 0 when the model is
  // exact, the macro digital or noise-free, or q would fall below 8 (the exact model runs then).
  int noise_grid_bits() const;
};

namespace detail {
// Internal (cmodel/cim/macro_layout.hpp): one weight slice or one input cycle, bits
// [offset, offset + width) of its source value, weighted sign * 2^offset in the shift-and-add.
struct MacroAccess;  // a kind model's access to the macro's state (cmodel/cim/macro_access.hpp)
struct InputTerm;    // one popcount term of the analog fast path (cmodel/cim/macro_kernels.hpp)
struct SubsetTable;  // the fixed model's subset sums of a macro's deviations (cmodel/cim/macro_fixed_subsets.hpp)
// Storage on 64-byte boundaries (a cache line, an AVX-512 vector): the vector kernels' loads of a
// padded row (grid_row_stride) then never straddle two lines, which costs two loads.
template <class T>
struct LineAllocator {
  using value_type = T;
  LineAllocator() = default;
  template <class U>
  LineAllocator(const LineAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const LineAllocator<U>&) const noexcept { return true; }
};
struct Piece {
  int offset = 0;
  int width = 1;
  int sign = 1;                  // +1, or -1 for the sign bit / the negative differential group
  bool negative_source = false;  // differential: the slice holds bits of max(-w, 0)
};
// The analog fast path and the noise generator run vector kernels chosen at run time: the best
// level the CPU has (AVX-512 with VPOPCNTDQ, AVX-512 F/BW, AVX2, portable code), all giving the
// same bits. Tests cap the level to run each one the CPU supports against the portable kernels.
// (avx512_vpopcntdq also takes VNNI's vpdpwssd where the CPU has it.)
enum class KernelLevel : int { portable = 0, avx2 = 1, avx512 = 2, avx512_vpopcntdq = 3 };
KernelLevel cpu_kernel_level();  // the best level this CPU runs (with no cap)
KernelLevel kernel_level();      // the level in use: min(cpu_kernel_level(), the cap)
void cap_kernel_level(KernelLevel cap);
// cap_kernel_level(portable) with true, no cap with false.
void force_portable_kernels(bool on);
// The macros' Gaussian noise generator: counter-based, so draw i of a seed is a pure function of
// (seed, i), the same on every machine, vector width and thread count. Pair j (a 64-bit counter)
// is hashed into two 32-bit uniforms, u1 = (a >> 8) + 1 over 2^24 in (0, 1] and u2 = (b >> 8)
// over 2^24 in [0, 1), and turned into N(0, 1) by Box-Muller in float with fixed polynomials (no
// libm call) and explicit fused multiply-adds, so the portable and the AVX2 versions agree bit
// for bit. Draws come in blocks of 16: draw 16 m + l is r cos(t) of pair 8 m + l for l < 8 and
// r sin(t) of pair 8 m + l - 8 otherwise. |draw| <= sqrt(2 ln 2^24) < 5.8.
struct NoiseKey {
  uint32_t k0 = 0, k1 = 0, k2 = 0;
};
NoiseKey noise_key(uint64_t seed);
float normal_draw(const NoiseKey& key, uint64_t i);
// out[i] = normal_draw(key, first + i) for i < n.
void normal_draws(const NoiseKey& key, uint64_t first, int n, float* out);

// Read noise rounded, for an ADC whose step is one level reading an integer sum p (no cell
// deviations): round(p + n) = p + round(n), so the code needs only k = round(n), n ~ N(0, sigma^2),
// whose law is P(k = j) = Phi((j + 1/2) / sigma) - Phi((j - 1/2) / sigma). It is drawn by the
// inverse of its CDF from one 32-bit uniform per conversion: k = -k_max + #{j : u >= thr[j]},
// thr[j] = 2^32 P(k <= j - k_max) rounded, every probability exact to 2^-32 and the tails beyond
// +-k_max below 2^-33 (left out). One hash per conversion instead of a Gaussian: the exact law of
// the codes, not the same draws as the Gaussian path.
struct RoundedNoise {
  int k_max = 0;                   // 0: sigma too large for 2 * kRoundedNoiseMaxK thresholds
  uint32_t thr[16] = {};           // thr[0 .. 2 k_max), ascending
};
constexpr int kRoundedNoiseMaxK = 8;  // sigma up to about 1.26 levels
RoundedNoise rounded_noise_law(double sigma);
// The uniform of conversion i: a second stream of the seed's key, independent of normal_draw's.
uint32_t noise_uniform(const NoiseKey& key, uint64_t i);
// out[i] = k of noise_uniform(key, first + i) under `law` (law.k_max > 0), for i < n.
void rounded_noise(const NoiseKey& key, uint64_t first, int n, const RoundedNoise& law, int32_t* out);
// The same draws turned into ADC codes at a step of one level in the same pass:
// pk[i] += clamp(p[i] + k_i, 0, top) for i < n (p[i] + k_i and the sums within int32).
void rounded_noise_codes(const NoiseKey& key, uint64_t first, int n, const RoundedNoise& law,
                         const uint32_t* p, int32_t top, uint32_t* pk);

}  // namespace detail

// What one macro did. Energy and latency come from these counts times a technology table.
#define KVCIM_MACRO_EVENTS(X)                                                                   \
  X(int64_t, row_activations, "wordline/DAC drives: (row, input cycle) pairs driven")             \
  X(int64_t, column_reads, "bitline reads: (column, input cycle, row group) triples")             \
  X(int64_t, adc_conversions, "analog: one per column read")                                      \
  X(int64_t, adder_ops, "digital: adder-tree additions; both: partial-sum accumulation adds")     \
  X(int64_t, shift_add_ops, "shift-and-add steps recombining slices and input bits")              \
  X(int64_t, cell_writes, "bits written into cells")                                              \
  X(int64_t, cycles, "macro clock cycles (ADC time-multiplexing included)")
struct MacroEvents {
  KVCIM_FIELDS(MacroEvents, KVCIM_MACRO_EVENTS)
};

// The events of one compute() call on n_rows x n_out, and of writing n_rows x n_out weights,
// derived analytically. The simulation must count exactly these (tested); the mapper and the
// energy model use them to count events without simulating.
MacroEvents compute_events(const MacroSpec& spec, int n_rows, int n_out);
MacroEvents write_events(const MacroSpec& spec, int n_rows, int n_out);

class Macro {
 public:
  explicit Macro(const MacroSpec& spec);
  const MacroSpec& spec() const { return spec_; }

  // Writes one signed weight W[row][out] in [spec.weight_min(), spec.weight_max()] (else throws);
  // counts cell writes. Cells start holding weight 0 (not counted as writes, no cell noise).
  void write(int row, int out, int32_t w);
  // A whole block: W[r][o] = w[r * n_out + o] for r < n_rows, o < n_out, at the origin.
  void write_block(const int8_t* w, int n_rows, int n_out);
  // One row (e.g. a V token) and one column group (e.g. a K token).
  void write_row(int row, const int8_t* w, int n_out);
  void write_column_group(int out, const int8_t* w, int n_rows);

  // y[o] = sum_{r < n_rows} x[r] * W[r][o] for o < n_out, as the circuit computes it: exact in
  // digital mode (and in analog mode when the ADC is lossless and there is no noise).
  // Inputs outside [spec.input_min(), spec.input_max()] or sizes beyond the macro throw.
  // Fast path: digital = the exact integer product, events added by compute_events(); analog =
  // popcounts over packed bit-planes, noise added in the reference's order (bit-identical).
  void compute(const int32_t* x, int n_rows, int64_t* y, int n_out);
  // The same function computed the slow, literal way: every (column, input cycle, row group)
  // partial sum formed from the stored cell levels and input bits, read by the adder tree or the
  // ADC, recombined by shift-and-add, each event counted as it happens. Tests prove that
  // compute() == compute_reference() (results, events and the noise generator's state).
  void compute_reference(const int32_t* x, int n_rows, int64_t* y, int n_out);
  // The weight that the cells of (row, out) encode (decoded from the stored levels).
  int32_t read(int row, int out) const;

  // Keyed read noise: the read-noise draws of a compute come from a counter range fixed by a
  // token key (read_noise_base(key)) instead of the generator's running count, and the generator
  // is left as it was, so a token's result depends on the stored state, its inputs and its key
  // only, whichever tokens ran before it and in whatever order (keys < 2^37; each token's
  // T x G x C draws < 2^26). compute_batch runs n_tokens inputs x[t * x_stride + r] (x_stride 0:
  // n_rows, the inputs side by side) through the stationary weights into y[t * n_out + o], token t
  // keyed keys[t]: bit for bit compute_keyed() of each token in turn (macro_batch.cpp), its events
  // those of n_tokens calls. A stride lets a matrix's block read its rows of every token's whole
  // input in place (CimLinear), not a copy per block.
  // `planes` (optional): the tokens' input codes as bit-planes already formed for these rows
  // (form_input_planes), shared by every macro that reads the same rows of the same tokens; the
  // analog kind then reads them instead of forming its own per token (the results are the same).
  struct InputPlanes {
    const uint64_t* words = nullptr;  // token t, code bit b, rows [64 w, 64 w + 64): words[t * token_stride + b * bit_stride + w]
    size_t token_stride = 0, bit_stride = 0;
    int input_bits = 0;               // the codes' width (the spec's input_bits)
    // Nonzero: names these planes' contents (one formation of them). The analog macros of one
    // spec that read the same rows of planes of the same id then share each token's popcount
    // terms, listed by the first of them on this thread, instead of listing them per macro.
    uint64_t id = 0;
  };
  void compute_batch(const int32_t* x, int n_tokens, int n_rows, int64_t* y, int n_out, const uint64_t* keys,
                     int x_stride = 0, const InputPlanes* planes = nullptr);
  // The bit-planes of n_tokens inputs x[t * x_stride + r], r < n_rows, as input_bits-bit codes
  // (two's complement or unsigned, the spec's input_level code): out[t * B * nw + b * nw + r / 64],
  // bit r % 64 = bit b of x[t][r], nw = ceil(n_rows / 64) (out resized; rows past n_rows zero).
  // A block whose first row r0 is a multiple of 64 reads its rows at word r0 / 64.
  static void form_input_planes(const int32_t* x, int n_tokens, int n_rows, int x_stride, int input_bits,
                                std::vector<uint64_t>& out);
  void compute_keyed(const int32_t* x, int n_rows, int64_t* y, int n_out, uint64_t key);
  void compute_reference_keyed(const int32_t* x, int n_rows, int64_t* y, int n_out, uint64_t key);
  static constexpr int kKeyBits = 37, kDrawsPerKeyBits = 26;
  static uint64_t read_noise_base(uint64_t key);  // throws for key >= 2^kKeyBits

  const MacroEvents& events() const { return events_; }
  void reset_events() { events_ = MacroEvents{}; }

 private:
  friend struct detail::MacroAccess;
  MacroSpec spec_;
  MacroEvents events_;
  // Whether cells deviate from their levels (analog: cell noise, drift or stuck cells). The exact
  // model keeps the deviations in cell_noise_; the fixed model on its grid only (cell_noise_q_).
  bool cell_noisy_ = false;
  std::vector<float> cell_noise_;   // [rows, cols] programmed deviation and drift (exact model only)
  // The same deviations as int16 multiples of 2^-noise_q_ levels, [row][noise_qstride_]
  // (detail::grid_row_stride: rows padded so that a row group's rows share no L1 set): the fast
  // path sums them in integers (detail::cell_noise_isums) and goes back to the double sums of
  // cell_noise_ only for the conversions whose code that leaves in doubt. Kept when the deviations
  // are programming variation alone (no drift, no stuck cells: |deviation| < 5.8 sigma fits) and
  // no sum can leave int32; empty otherwise.
  std::vector<int16_t, detail::LineAllocator<int16_t>> cell_noise_q_;
  size_t noise_qstride_ = 0;
  int32_t noise_qmax_ = 0;  // a bound on |cell_noise_q_| (the largest ever stored): the kernels' int16 runs
  int noise_q_ = 0;
  // Which contents cell_noise_q_ has, for the fixed model's subset sums (detail::subset_sums),
  // built by a compute into a per-thread table (macro_fast.cpp) rather than kept per macro: a
  // number no other contents ever had (one counter for the process), or 0 after a write until the
  // next compute gives it one. Copies share it with their identical contents.
  uint64_t grid_version_ = 0;
  // The fixed noise model's grid bits (MacroSpec::noise_grid_bits(), 0: exact model). Then
  // cell_noise_q_ holds the deviations on that grid (saturated at +-2^15 - 1, kept whatever they
  // are) and is the model itself, not a shortcut; read noise is drawn onto the same grid.
  int fixed_q_ = 0;
  detail::NoiseKey noise_key_;      // the seed's key
  uint64_t noise_draws_ = 0;        // draws taken so far: the generator's whole state
  std::vector<float> draws_;        // scratch of read_noise()
  // Kept in step by every write: the weights (a digital macro's whole stored state: its cell
  // levels are the weights' slices, cell_level()), or an analog macro's bit-planes (its whole
  // stored state: cell_level() reads them).
  std::vector<int8_t> weights_;     // [rows, weights_per_row] weights (digital only)
  std::vector<uint64_t> planes_;    // [cell_bits][row words][cols] bit-planes (analog only)
  int row_words_ = 0;               // ceil(rows / 64)
  std::vector<detail::Piece> slices_;  // the layout of one weight's column group
  std::vector<detail::Piece> pieces_;  // the input cycles' pieces (detail::input_pieces)

  void check_compute(const int32_t* x, int n_rows, const int64_t* y, int n_out,
                     const char* where) const;
  uint32_t cell_level(int row, int col) const;  // the level column col of row holds
  void store(int row, int out, int32_t w);  // cells + mirrors + cell noise, no event counting
  // store() of rows [0, n_rows) x outputs [0, n_out) from w[r * n_out + o], the same cells,
  // mirrors and draws, a word of bit-plane at a time (weights load in bulk: CimLinear, the tiles)
  void store_block(const int8_t* w, int n_rows, int n_out);
  // The deviation of cell idx written at level `level` with programming deviation `noise`: a
  // stuck cell's level minus `level`, else (level + noise) drifted to spec_.drift_time_s, minus level.
  float deviation(size_t idx, uint32_t level, double noise) const;
  bool deviates() const { return spec_.drifts() || spec_.stuck_rate > 0.0; }
  void mirror_deviation(int row, int col, float deviation);  // cell_noise_q_ of the cell
  double gaussian();                        // next N(0, 1) draw of the macro's generator
  // The next n draws times sigma (read noise of one step); both compute paths call this.
  void read_noise(double sigma, double* out, int n);
  // Set when read noise is the macro's only noise and its ADC step is one level (adc_shift() 0):
  // then both compute paths draw the rounded noise (detail::RoundedNoise) instead of Gaussians,
  // one uniform per conversion from the same counter. k_max 0 otherwise.
  detail::RoundedNoise rounded_;
  // The next n rounded read-noise offsets (rounded_.k_max > 0): the reference path; the fast path
  // draws the same in its fused kernel (detail::analog_columns).
  void read_noise_rounded(int32_t* out, int n);
  // Fixed model: the next n read-noise draws on the grid, round(sigma 2^q draw); both paths call this.
  void read_noise_fixed(int32_t* out, int n);
  // Fixed model: cell (row, col)'s deviation in grid units (cell_noise_q_'s layout).
  int32_t grid_deviation(int row, int col) const;
  void compute_digital_fast(const int32_t* x, int n_rows, int64_t* y, int n_out);
  // Fixed model with cell_noise_q_: the subset sums of its present contents, this thread's table
  // (built again when another macro's, or older contents', was built last), or null where the
  // compute lists its rows instead (the first compute of these contents in a row).
  const detail::SubsetTable* subset_table();
  // cb (optional): x's code bit-planes, bit b's words at cb + b * bit_stride (formed here if null)
  // listed, listed_steps (optional): the call's popcount terms and steps as list_input_terms
  // gives them for cb (the rounded and noise-free paths then skip listing them)
  void compute_analog_fast(const int32_t* x, int n_rows, int64_t* y, int n_out, const uint64_t* cb = nullptr,
                           size_t bit_stride = 0, const detail::InputTerm* listed = nullptr,
                           const int* listed_steps = nullptr);
  // The popcount terms of an analog call on n_rows rows whose input codes' bit-planes are cb (bit
  // b's words at cb + b * bit_stride): step (k, g)'s terms (k * G + g, in that order) from
  // terms[step_begin[s]], each step's in descending shift, words that drive no row left out;
  // T * G + 1 step starts. Returns the count, at most max_input_terms(n_rows).
  int list_input_terms(const uint64_t* cb, size_t bit_stride, int n_rows, detail::InputTerm* terms,
                       int* step_begin) const;
  size_t max_input_terms(int n_rows) const;
  // Per-call constants of the fast paths, fixed by the spec: MacroSpec::adc_shift(), and the
  // events of one compute of the last shape asked (compute_events validates the spec and builds
  // the layout each time: a batch makes thousands of calls a token).
  int adc_shift_ = 0;
  int events_rows_ = -1, events_out_ = -1;
  MacroEvents shape_events_;
  const MacroEvents& call_events(int n_rows, int n_out);
  // compute_reference() of the kinds that read every bit column (digital, analog)
  void compute_sliced_reference(const int32_t* x, int n_rows, int64_t* y, int n_out);
};

}  // namespace kvcim::cmodel::cim
