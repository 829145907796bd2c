// The analog attention tile: K and V held in analog (gain-cell-like) multi-level cells, q . k_t
// computed per token column and digitised by one ADC per score (per slice column when a value is
// wider than a cell), the scores normalised by the fixed-point softmax unit or by a HardSigmoid /
// ReLU of each logit divided by their sum (GainCellAttention, Leroux et al. 2025), and
// o_i = sum_t p'_t v_{t,i} computed in the V array with one ADC per output (per slice column).
// Cell noise (drawn once per cell write) and read noise (per conversion) from one seeded generator.
//
// With enough ADC bits, no noise and the fixed-point softmax it returns exactly what the digital
// tile (CModelTile) returns (tested on 1,000 random problems). Contract step by step, the event
// formulas and the full scales: docs/attention_tile.md, "The analog tile".
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kvcim/cmodel/cim/attention_tile.hpp"

namespace kvcim::cmodel::cim {

// Slices of a `bits`-wide signed value in `cell_bits` cells: ceil(bits / cell_bits); the top
// slice is signed (bits - (S-1) cell_bits wide), the others unsigned cell_bits wide.
int analog_slices(int bits, int cell_bits);

// The ADC of one conversion: step 2^shift with shift the smallest s >= 0 such that
// (2^(adc_bits-1) - 1) 2^s >= range; code = clamp(floor(a / 2^s + 1/2), -2^(adc_bits-1),
// 2^(adc_bits-1) - 1); returns code 2^s.
int adc_shift_for(double range, int adc_bits);
int64_t adc_convert(double a, int shift, int adc_bits);

// Full scales (noise-free largest |column sum|) of slice column j of K and of V.
double analog_k_full_scale(const TileParams& p, int slice);
double analog_v_full_scale(const TileParams& p, int slice);

// The softmax unit's events per query over n tokens for each normalisation (fixed: the
// softmax_fixed counts; hardsigmoid, relu: docs/attention_tile.md), by p.softmax.
SoftmaxEvents normalisation_events(const TileParams& p, int64_t n_tokens);
// HardSigmoid / ReLU normalisation (steps 2'-5'): the same Y_t as softmax_fixed, then
//   hardsigmoid: e_t = clamp(floor(Y_t 2^16 / (6 2^F)) + 2^15, 1, 2^16)
//   relu:        e_t = clamp(Y_t 2^(16-F), 1, 2^24)
// sum, normalisation and V-exponent fold as softmax_fixed; ymax = 0 (the combination weights
// tiles by sum alone, which is exact for a per-token nonlinearity).
SoftmaxOutput softmax_per_token(const TileParams& p, std::span<const int64_t> scores,
                                std::span<const int> ek, std::span<const int> ev, QueryScale qs,
                                SoftmaxEvents& events);

// The tile's events (analytic; the simulation counts exactly these, tested).
TileEvents analog_append_events(const TileParams& p);
TileEvents analog_query_events(const TileParams& p, int n_tokens);
// Transfer, K conversion, hand-over, 3 softmax passes, hand-over, V conversion, result.
int64_t analog_query_cycles(const TileParams& p, int n_tokens);

class AnalogTile final : public SlotTile {
 public:
  explicit AnalogTile(const TileParams& p);
  const TileParams& params() const override { return p_; }
  void reset() override {  // a new sequence: its clock starts again
    n_ = 0;
    now_ns_ = 0;
  }
  using AttentionTile::query;
  TileResult query(std::span<const int8_t> q, uint16_t qmul, int qexp) override;
  std::span<const uint32_t> last_weights() const override { return last_e_; }
  int tokens() const override { return n_; }
  TileEvents events() const override { return ev_count_; }
  void reset_events() override { ev_count_ = TileEvents{}; }
  // Cell writes that landed stuck (stuck_rate) since construction.
  int64_t stuck_cells() const { return stuck_; }
  // Refreshes counted (refresh_ns): one per token rewritten, cell writes in the events.
  void set_time_ns(double ns) override;
  int64_t refreshes() const { return refreshes_; }

 protected:
  void write_slot(int slot, std::span<const int8_t> k, std::span<const int8_t> v, int ek, int ev) override;
  const char* name() const override { return "analog attention tile"; }

 private:
  TileParams p_;
  int sk_, sv_;                              // slices per K and V value
  std::vector<int> k_shift_, v_shift_;       // ADC shift per slice column
  std::vector<float> kcell_, vcell_;         // [T][D][S] stored levels (with cell noise)
  std::vector<int> ek_, ev_;
  std::vector<uint32_t> lut_;
  std::vector<uint32_t> last_e_;
  int n_ = 0;
  uint64_t rng_;
  double spare_ = 0;        // the second normal of the last Box-Muller pair
  bool has_spare_ = false;
  int64_t stuck_ = 0;
  double now_ns_ = 0;
  std::vector<double> written_ns_;  // [T] when each token was last written (or refreshed)
  std::vector<double> knu_, vnu_;    // [T][D][S] drift exponent of each cell (drift only)
  uint64_t drift_rng_;               // the drift exponents' own stream of the seed
  int64_t refreshes_ = 0;
  TileEvents ev_count_;
  double gaussian();  // of the tile's stream rng_ (splitmix64)
  double uniform();   // [0, 1), of rng_
  void store(std::vector<float>& cells, int slices, int token, std::span<const int8_t> x, int bits);
  double decay(int token) const;  // exp(-age / retention_ns), 1 without retention
  double drift_gaussian();        // a normal of the drift stream
  void draw_nu(std::vector<double>& nu, int slices, int token);
  // ln(max(age, t0) / t0) of each token held (0: no drift yet); empty without drift
  std::vector<double> drift_logs() const;
};

}  // namespace kvcim::cmodel::cim
