// The CIM attention tile: integer attention of one query head over the tokens one tile holds (one
// KV head, up to `tokens` tokens), built from two CIM macros and a fixed-point softmax unit.
//
//   K macro: rows = head_dim, one token per column group (kv_bits 1-bit slices); q enters on the
//            rows, signed and bit-serial, and every column group returns s_t = q . k_t.
//   V macro: rows = tokens, one token per row; the probabilities enter on the rows, unsigned and
//            bit-serial, and every column group returns o_i = sum_t p'_t v_{t,i}.
//
// This header is the single source of the tile's parameters and exponent table: the RTL package
// (rtl/, kvcim_tile_pkg) is generated from it by rtl/gen_tile_pkg.cpp. The numeric contract, step
// by step, is in docs/attention_tile.md; softmax_fixed.cpp implements it, the RTL mirrors it bit for
// bit, and the co-simulation suites hold the two together.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kvcim/cmodel/cim/macro_fields.hpp"
#include "kvcim/spec_fields.hpp"

namespace kvcim::cmodel::cim {

// ---- the shared parameters (defaults = what the RTL is built at) ---------------------------------
inline constexpr int kTileHeadDim = 8;    // the embedded model's head size
inline constexpr int kTileTokens = 64;    // tokens per tile
inline constexpr int kTileKvBits = 8;     // q, k, v are signed kv_bits integers
inline constexpr int kTileExpFrac = 6;    // F: fractional bits of the base-2 logits; table of 2^F
inline constexpr int kTileProbBits = 12;  // P: unsigned probability width
// Fixed by the contract (not varied by tests):
inline constexpr int kScaleExpBits = 8;     // ek, ev, qexp are signed 8-bit exponents
inline constexpr int kQmulBits = 16;        // qmul in [2^15, 2^16)
inline constexpr int kExpOneBits = 16;      // LUT[0] = 2^16, entries are 17-bit unsigned
inline constexpr int kExpZeroShift = 17;    // n >= 17 integer octaves below the max: e = 0
inline constexpr int kScaleMaxShift = 62;   // rescale shift clamp
inline constexpr int kFoldMaxShift = 31;    // V-exponent fold shift clamp
// The softmax unit's P-step divider is pipelined, this many quotient bits per stage
// (rtl/softmax_unit.sv): ceil(P / 4) stages, one token entering per cycle.
inline constexpr int kDividerBitsPerStage = 4;

// How the tile stores K and V and computes with them: the bit-exact digital tile (CModelTile, the
// RTL) or the analog tile (AnalogTile: multi-level cells, an ADC per score and per output, noise).
enum class TileKind : uint8_t { digital, analog };
// The normalisation of the scores: the fixed-point base-2 softmax (steps 2-5), or a HardSigmoid /
// ReLU of each logit normalised by their sum (GainCellAttention, Leroux et al. 2025).
enum class TileSoftmax : uint8_t { fixed, hardsigmoid, relu };

// The analog tile's fields, one row each (member, default, legal range, unit, doc), declared in
// TileParams and in the spec's kv section (mapper::KvSpec), which copies them into the tile by
// key (copy_shared_fields). Retention: a level written at time w reads, at time t, as level x
// exp(-(t - w) / retention_ns); refresh: a token whose level has aged refresh_ns since it was last
// written is read and written back (its written level restored), counted as cell writes; time
// reaches the tile through set_time_ns. Drift (ReRAM/PCM cells; MacroSpec's meanings, per
// token): a level written at time w reads, at time t, as level x (a / t0)^-nu with a = t - w the
// token's age (a refresh re-programs the level and restarts the clock), nu drawn per cell when
// the token is appended ~ N(drift_nu, drift_nu_sigma) from a stream of the seed of its own; with
// drift_compensation the reads of a token are rescaled by its mean drift (a / t0)^drift_nu, only
// the spread of nu is left. a <= drift_t0_s: no drift. Retention and drift multiply.
#define KVCIM_ANALOG_TILE_FIELDS(NUM, FLAG, CHOICE)                                                   \
  NUM(int, cell_bits, 8, 1, 8, "bits", "bits (2^cell_bits levels) one cell holds; wider values sliced") \
  NUM(int, adc_bits, 8, 2, 30, "bits", "resolution of the score ADCs and the output ADCs")            \
  CHOICE(::kvcim::cmodel::cim::AdcRange, adc_range, ::kvcim::cmodel::cim::AdcRange::full_scale, ::kvcim::cmodel::cim::kAdcRangeNames,                                  \
         "full_scale: the ADCs span the largest sum; calibrated: adc_clip / out_adc_clip of it")      \
  NUM(double, adc_clip, 1.0, 1e-9, 1.0, "fraction", "calibrated: score ADC range as a fraction of full scale") \
  NUM(double, out_adc_clip, 1.0, 1e-9, 1.0, "fraction", "calibrated: output ADC range as a fraction of full scale") \
  NUM(double, cell_noise_sigma, 0.0, 0.0, 1e6, "levels", "Gaussian, in levels of the cell, drawn once per cell write") \
  NUM(double, read_noise_sigma, 0.0, 0.0, 1e6, "levels x input", "Gaussian, in (cell level x largest input), per conversion") \
  NUM(double, stuck_rate, 0.0, 0.0, 1.0, "fraction", "cell writes landing stuck (at level 0 or the top level, equally likely)") \
  NUM(uint64_t, seed, 1, 0, 9.3e18, "", "the generator of the noises and the faults")                \
  NUM(double, retention_ns, 0.0, 0.0, 1e30, "ns", "charge retention time constant of a cell; 0 = no decay") \
  NUM(double, refresh_ns, 0.0, 0.0, 1e30, "ns", "age at which a token is read and written back; 0 = no refresh") \
  NUM(double, drift_nu, 0.0, 0.0, 10.0, "", "mean conductance drift exponent nu of a cell")         \
  NUM(double, drift_nu_sigma, 0.0, 0.0, 10.0, "", "spread (sigma) of the drift exponent across cells") \
  NUM(double, drift_t0_s, 1.0, 1e-12, 1e12, "s", "reference time t0 of the drift law")              \
  FLAG(drift_compensation, true, "reads rescaled by each token's mean drift (global compensation)")

#define KVCIM_SPEC_MEMBER_NUM(type, name, def, lo, hi, unit, doc) type name = def;
#define KVCIM_SPEC_MEMBER_FLAG(name, def, doc) bool name = def;
#define KVCIM_SPEC_MEMBER_CHOICE(type, name, def, names, doc) type name = def;
// Rows of a table in a function with `Self` (the struct) and `analog_only` (its analog kinds).
#define KVCIM_SPEC_ROW_NUM(type, name, def, lo, hi, unit, doc) \
  ::kvcim::range_field(#name, &Self::name, lo, hi, unit, doc).only(analog_only),
#define KVCIM_SPEC_ROW_FLAG(name, def, doc) ::kvcim::flag_field(#name, &Self::name, doc).only(analog_only),
#define KVCIM_SPEC_ROW_CHOICE(type, name, def, names, doc) \
  ::kvcim::choice_field(#name, &Self::name, std::span<const std::string_view>(names), doc).only(analog_only),

struct TileParams {
  int head_dim = kTileHeadDim;
  int tokens = kTileTokens;
  int kv_bits = kTileKvBits;
  int exp_frac = kTileExpFrac;
  int prob_bits = kTileProbBits;
  // ---- added fields; their defaults keep the digital tile (and the RTL) exactly as above ----
  // Widths of the stored K and V (2..8); 0 = kv_bits. q stays kv_bits wide.
  int k_bits = 0;
  int v_bits = 0;
  TileKind kind = TileKind::digital;
  TileSoftmax softmax = TileSoftmax::fixed;  // the digital tile supports `fixed` only
  // Analog tile only (docs/attention_tile.md, "The analog tile"): the rows of
  // KVCIM_ANALOG_TILE_FIELDS below, shared with the spec's kv section (mapper::KvSpec).
  KVCIM_ANALOG_TILE_FIELDS(KVCIM_SPEC_MEMBER_NUM, KVCIM_SPEC_MEMBER_FLAG, KVCIM_SPEC_MEMBER_CHOICE)
  bool drifts() const { return kind == TileKind::analog && (drift_nu != 0.0 || drift_nu_sigma != 0.0); }
  int kb() const { return k_bits > 0 ? k_bits : kv_bits; }
  int vb() const { return v_bits > 0 ? v_bits : kv_bits; }
  // Throws kvcim::Error naming `where`, the field and the value.
  void validate(const std::string& where) const;
  bool operator==(const TileParams&) const = default;
};

inline constexpr std::string_view kTileKindNames[] = {"digital", "analog"};
inline constexpr std::string_view kTileSoftmaxNames[] = {"fixed", "hardsigmoid", "relu"};

// TileParams' field table (kvcim/spec_fields.hpp): Python's TileParams, validate(), the docs.
constexpr int spec_kind(const TileParams& p) { return static_cast<int>(p.kind); }
constexpr auto spec_fields(const TileParams*) {
  using Self = TileParams;
  constexpr unsigned analog_only = ::kvcim::kind_bit(static_cast<int>(TileKind::analog));
  return std::tuple{
      ::kvcim::range_field("head_dim", &Self::head_dim, 1, 256, "", "elements of a head (the K macro's rows)"),
      ::kvcim::range_field("tokens", &Self::tokens, 1, 4096, "tokens", "tokens one tile holds (the V macro's rows)"),
      ::kvcim::range_field("kv_bits", &Self::kv_bits, 2, 8, "bits", "width of q (and of K and V unless k_bits/v_bits)"),
      // F fractional bits of the base-2 logits: a table of 2^F entries
      ::kvcim::range_field("exp_frac", &Self::exp_frac, 0, 12, "bits", "fractional bits of the base-2 logits (2^F table entries)"),
      // p_t (2^P - 1) products and sums stay far inside int64; 16 keeps p' in a uint16 input
      ::kvcim::range_field("prob_bits", &Self::prob_bits, 1, 16, "bits", "unsigned probability width P"),
      ::kvcim::range_field("k_bits", &Self::k_bits, 0, 8, "bits", "width of the stored K (2..8); 0 = kv_bits"),
      ::kvcim::range_field("v_bits", &Self::v_bits, 0, 8, "bits", "width of the stored V (2..8); 0 = kv_bits"),
      ::kvcim::choice_field("kind", &Self::kind, std::span<const std::string_view>(kTileKindNames),
                            "digital: the bit-exact tile (and the RTL); analog: multi-level cells and ADCs"),
      ::kvcim::choice_field("softmax", &Self::softmax, std::span<const std::string_view>(kTileSoftmaxNames),
                            "normalisation of the scores; the digital tile has `fixed` only"),
      KVCIM_ANALOG_TILE_FIELDS(KVCIM_SPEC_ROW_NUM, KVCIM_SPEC_ROW_FLAG, KVCIM_SPEC_ROW_CHOICE)
  };
}


// LUT[f] = round(2^16 * 2^(-f / 2^exp_frac)), f < 2^exp_frac. LUT[0] = 65536.
std::vector<uint32_t> exp_lut(int exp_frac);

// ---- the query scale code -----------------------------------------------------------------------
// qmul * 2^qexp = q_scale * log2(e) / sqrt(head_dim), qmul in [2^15, 2^16), qexp in [-128, 127].
// The runtime calls this once per query; nobody re-derives it.
struct QueryScale {
  uint16_t qmul = 1u << 15;
  int qexp = 0;
  bool operator==(const QueryScale&) const = default;
};
QueryScale query_scale(double q_scale, int head_dim);

// ---- events -------------------------------------------------------------------------------------
// What the softmax unit did; one unit operation per valid token and pass (see docs).
#define KVCIM_SOFTMAX_EVENTS(X)                                                                 \
  X(int64_t, multiplies, "s_t x qmul")                                                            \
  X(int64_t, shifts, "barrel shifts: logit rescale, exponent octave, V-exponent fold")            \
  X(int64_t, adds, "rescale rounding, max subtraction, sum accumulation, fold rounding")          \
  X(int64_t, comparisons, "running maxima of Y_t and of ev_t")                                    \
  X(int64_t, exp_lookups, "exponent table reads")                                                 \
  X(int64_t, divisions, "normalisations e_t (2^P - 1) / sum")                                     \
  X(int64_t, cycles, "softmax unit busy cycles")
struct SoftmaxEvents {
  KVCIM_FIELDS(SoftmaxEvents, KVCIM_SOFTMAX_EVENTS)
};

#define KVCIM_TILE_EVENTS(X)                                                                    \
  X(MacroEvents, k_macro, "score macro: compute per query, one column group written per append") \
  X(MacroEvents, v_macro, "value macro: compute per query, one row written per append")          \
  X(SoftmaxEvents, softmax, "the softmax unit")                                                  \
  X(int64_t, cycles, "tile clock cycles doing work (cycles stalled on a handshake excluded)")     \
  X(int64_t, appends, "tokens appended")                                                         \
  X(int64_t, queries, "queries answered")
struct TileEvents {
  KVCIM_FIELDS(TileEvents, KVCIM_TILE_EVENTS)
};

// The RTL's documented schedule, in tile clock cycles (cim_attention_tile.sv), when nothing
// stalls: an append takes head_dim cycles (the K column group is written one wordline per cycle,
// the V row in the first of them); a query over n tokens takes kv_bits + prob_bits +
// softmax_cycles + 4 cycles from the query handshake to the result handshake, both included.
int64_t append_cycles(const TileParams& p);
int64_t query_cycles(const TileParams& p, int n_tokens);
// The softmax unit over n tokens: three passes of one token per cycle, the last through the
// pipelined divider, which adds divider_stages - 1 cycles: 3n + divider_stages - 1 (0 for n = 0).
int divider_stages(const TileParams& p);
int64_t softmax_cycles(const TileParams& p, int64_t n_tokens);

// ---- results ------------------------------------------------------------------------------------
struct TileResult {
  std::vector<int32_t> o;  // [head_dim]: o_i = sum_t p'_t v_{t,i}
  int evmax = 0;           // max_t ev_t: real o_i ~= o_i 2^evmax / (2^P - 1)
  int64_t ymax = 0;        // max_t Y_t (base-2 logit, F fractional bits)
  int64_t sum = 0;         // sum_t e_t
  bool operator==(const TileResult&) const = default;
};

// Real output of one tile: o_i * 2^evmax / (2^P - 1).
std::vector<double> dequantize(const TileResult& r, const TileParams& p);
// Attention over more tokens than one tile holds: each tile j is weighted by
// w_j = sum_j 2^((ymax_j - ymax) / 2^F), ymax = max_j ymax_j, and o = sum_j w_j o_j / sum_j w_j
// with o_j the dequantised tile outputs (a running max with rescaling; float, in the runtime).
// All tiles must have answered the same query (same qmul, qexp). Throws on an empty list.
std::vector<double> combine_tiles(std::span<const TileResult> parts, const TileParams& p);
// Each tile's share of the query's attention, w_j / sum_k w_k with w_j as above: what heavy-hitter
// eviction (H2O, per tile) accumulates. The same checks as combine_tiles.
std::vector<double> tile_shares(std::span<const TileResult> parts, const TileParams& p);

// ---- the softmax unit as a pure function (steps 2-5 of the contract) ------------------------------
// Y_t = round_half_up(s_t qmul 2^(qexp + ek_t + F)), shift clamped to [0, 62].
int64_t scale_score(int64_t s, uint16_t qmul, int qexp, int ek, int exp_frac);
// e = n >= 17 ? 0 : LUT[d mod 2^F] >> n, n = d >> F, for d = Ymax - Y_t >= 0.
uint32_t exp_fixed(int64_t d, int exp_frac, std::span<const uint32_t> lut);

struct SoftmaxOutput {
  std::vector<uint32_t> prob;  // p'_t, the V-exponent-folded probabilities fed to the V macro
  std::vector<uint32_t> raw;   // p_t before folding (for tests)
  std::vector<uint32_t> e;     // e_t
  int evmax = 0;
  int64_t ymax = 0;
  int64_t sum = 0;
  // The tile's answer: the V macro's outputs o (step 6) with this softmax's scale figures.
  TileResult result(std::vector<int32_t> o) const { return TileResult{std::move(o), evmax, ymax, sum}; }
};
// scores, ek and ev have one entry per valid token (at least one). Adds its events to `events`.
SoftmaxOutput softmax_fixed(const TileParams& p, std::span<const int64_t> scores,
                            std::span<const int> ek, std::span<const int> ev, QueryScale qs,
                            std::span<const uint32_t> lut, SoftmaxEvents& events);

// ---- the tile interface, implemented by the C model and by the Verilated RTL harness --------------
class AttentionTile {
 public:
  virtual ~AttentionTile() = default;
  virtual const TileParams& params() const = 0;
  // Empties the tile (tokens() = 0). Events are kept; reset_events() zeroes them.
  virtual void reset() = 0;
  // Appends one token: writes k into the K macro's next column group and v into the V macro's
  // next row. k and v have head_dim entries in the signed kv_bits range; ek, ev in [-128, 127].
  // Throws kvcim::Error when the tile is full or an argument is out of range.
  virtual void append(std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) = 0;
  // Overwrites the token in `slot` (0 <= slot < tokens()) in place with a new one: its K column
  // group and V row written as an append writes them, counted as an append (cell writes and
  // cycles): token-granular KV eviction. A tile that cannot (the RTL, whose port writes the next
  // slot only) says so with can_overwrite() and throws.
  virtual bool can_overwrite() const { return false; }
  virtual void overwrite(int slot, std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev);
  // One query over the tokens held (at least one). q has head_dim entries in the kv_bits range.
  virtual TileResult query(std::span<const int8_t> q, uint16_t qmul, int qexp) = 0;
  // The last query's unnormalised weight e_t of every slot held (TileResult::sum adds them up; a
  // token's share of the tile's attention is e_t / sum), for heavy-hitter eviction per token.
  // Empty when the tile does not report them (the RTL: no such port).
  virtual std::span<const uint32_t> last_weights() const { return {}; }
  TileResult query(std::span<const int8_t> q, QueryScale s) { return query(q, s.qmul, s.qexp); }
  virtual int tokens() const = 0;
  virtual TileEvents events() const = 0;
  virtual void reset_events() = 0;
  // The time now (ns since the sequence began): appends are written at it, queries read at it.
  // Only cells that lose charge care (the analog tile's retention); SRAM and the RTL ignore it.
  virtual void set_time_ns(double ns) { (void)ns; }
};

// Makes a fresh tile of one kind (C model or RTL), as the runtime asks for one per KV stream.
using TileFactory = std::function<std::unique_ptr<AttentionTile>()>;

// Shared argument checks of every implementation (so both throw the same errors).
void check_append(const TileParams& p, int tokens_held, std::span<const int8_t> k,
                  std::span<const int8_t> v, int ek, int ev, const std::string& where);
void check_query(const TileParams& p, int tokens_held, std::span<const int8_t> q, uint16_t qmul,
                 int qexp, const std::string& where);
// overwrite's: a slot held, and append's checks of the values.
void check_overwrite(const TileParams& p, int tokens_held, int slot, std::span<const int8_t> k,
                     std::span<const int8_t> v, int ek, int ev, const std::string& where);

// The macro geometries of a tile (the mapper and energy model may use them too).
MacroSpec k_macro_spec(const TileParams& p);
MacroSpec v_macro_spec(const TileParams& p);

// Makes the tile `p.kind` asks for (CModelTile or AnalogTile).
std::unique_ptr<AttentionTile> make_tile(const TileParams& p);

// A tile that can write any slot it holds (the C models): append and overwrite check their
// arguments as every tile does, then write_slot writes the token (an append: slot = tokens(),
// after which the tile holds one more).
class SlotTile : public AttentionTile {
 public:
  void append(std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) final;
  bool can_overwrite() const final { return true; }
  void overwrite(int slot, std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) final;

 protected:
  virtual void write_slot(int slot, std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) = 0;
  virtual const char* name() const = 0;  // for errors: "attention tile", "analog attention tile"
};

// The bit-accurate C model: two Macro instances and softmax_fixed.
class CModelTile final : public SlotTile {
 public:
  explicit CModelTile(const TileParams& p = TileParams{});
  const TileParams& params() const override { return p_; }
  void reset() override { n_ = 0; }
  using AttentionTile::query;
  TileResult query(std::span<const int8_t> q, uint16_t qmul, int qexp) override;
  std::span<const uint32_t> last_weights() const override { return last_e_; }
  int tokens() const override { return n_; }
  TileEvents events() const override;
  void reset_events() override;

 protected:
  void write_slot(int slot, std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) override;
  const char* name() const override { return "attention tile"; }

 private:
  TileParams p_;
  Macro k_, v_;
  std::vector<uint32_t> lut_;
  std::vector<int> ek_, ev_;
  std::vector<uint32_t> last_e_;
  int n_ = 0;
  TileEvents own_;  // softmax, cycles, appends, queries (the macros keep their own)
};

}  // namespace kvcim::cmodel::cim
