// The analog tile: bit for bit the digital tile when lossless (enough ADC bits, no noise, the
// fixed-point softmax) on >= 1,000 random problems; events equal to the analytic formulas; the
// ADC rule by hand; noise reproducible per seed; the per-token normalisations by hand; the digital
// tile with K and V of different widths.
#include <gtest/gtest.h>

#include <cmath>

#include "kvcim/cmodel/cim/attention_tile_analog.hpp"
#include "kvcim/cmodel/energy/cim_charges.hpp"
#include "kvcim/error.hpp"
#include "tile_test_util.hpp"

namespace {

using namespace tile_test;

TileParams lossless(TileParams p, int cell_bits) {
  p.kind = TileKind::analog;
  p.cell_bits = cell_bits;
  p.adc_bits = 24;  // 2^23 - 1 >= every full scale below: step 1, no clipping
  return p;
}

TEST(AnalogTile, LosslessEqualsTheDigitalTileBitForBit) {
  struct Case {
    TileParams p;
    int cell_bits, trials;
  };
  const Case cases[] = {{TileParams{}, 8, 1000},             // the RTL geometry, one cell per value
                        {TileParams{}, 3, 200},              // 3 slices: two 3-bit, a signed 2-bit
                        {TileParams{4, 16, 4, 4, 8}, 1, 150},  // 1-bit cells: 4 slices
                        {TileParams{16, 32, 6, 8, 16}, 4, 150},
                        {TileParams{64, 128, 8, 6, 12}, 8, 100}};
  std::mt19937_64 rng(17);
  int total = 0;
  for (const Case& c : cases) {
    const TileParams ap = lossless(c.p, c.cell_bits);
    for (int j = 0; j < analog_slices(ap.kb(), ap.cell_bits); ++j)
      ASSERT_EQ(adc_shift_for(analog_k_full_scale(ap, j), ap.adc_bits), 0);
    CModelTile digital(c.p);
    AnalogTile analog(ap);
    for (int trial = 0; trial < c.trials; ++trial, ++total) {
      const int n = std::uniform_int_distribution<int>(1, c.p.tokens)(rng);
      const Problem pr = random_problem(rng, c.p, n, trial % 5 == 0);
      ASSERT_EQ(run(analog, pr), run(digital, pr))
          << "D" << c.p.head_dim << " cell_bits " << c.cell_bits << " trial " << trial;
    }
  }
  EXPECT_GE(total, 1000);
}

TEST(AnalogTile, EventsEqualTheAnalyticFormulas) {
  std::mt19937_64 rng(5);
  for (int cell_bits : {8, 3}) {
    for (TileSoftmax sm : {TileSoftmax::fixed, TileSoftmax::hardsigmoid, TileSoftmax::relu}) {
      TileParams p = lossless(TileParams{}, cell_bits);
      p.softmax = sm;
      p.k_bits = 6;
      p.v_bits = 4;
      AnalogTile tile(p);
      TileEvents expect;
      const Problem pr = random_problem(rng, TileParams{8, 64, 4, 6, 12}, 20);
      for (int t = 0; t < 20; ++t) {
        tile.append(pr.k[t], pr.v[t], pr.ek[t], pr.ev[t]);
        expect += kvcim::cmodel::energy::tile_append_events(p);
        if (t % 3 == 0) {
          tile.query(pr.q, pr.scale);
          expect += kvcim::cmodel::energy::tile_query_events(p, t + 1);
        }
      }
      EXPECT_EQ(tile.events(), expect);
    }
  }
  // By hand: defaults, 8-bit cells (one slice), 3 appends, a query over 3 tokens.
  const TileEvents q = analog_query_events(lossless(TileParams{}, 8), 3);
  EXPECT_EQ(q.k_macro.adc_conversions, 3);
  EXPECT_EQ(q.v_macro.adc_conversions, 8);
  EXPECT_EQ(q.k_macro.shift_add_ops, 0);
  EXPECT_EQ(q.cycles, 3 * 3 + 6 + 2);  // + the fixed softmax's divider fill, ceil(12 / 4) - 1
  const TileEvents a = analog_append_events(lossless(TileParams{}, 3));  // 3 slices
  EXPECT_EQ(a.k_macro.cell_writes, 24);
  EXPECT_EQ(a.v_macro.cell_writes, 24);
  EXPECT_EQ(a.cycles, 8);
}

TEST(AnalogTile, AdcRuleByHand) {
  EXPECT_EQ(adc_shift_for(127, 8), 0);
  EXPECT_EQ(adc_shift_for(128, 8), 1);
  EXPECT_EQ(adc_shift_for(131072, 8), 11);  // 127 * 2^11 = 260096 >= 131072 > 127 * 2^10
  EXPECT_EQ(adc_convert(5.49, 0, 8), 5);
  EXPECT_EQ(adc_convert(5.5, 0, 8), 6);     // half up
  EXPECT_EQ(adc_convert(-5.5, 0, 8), -5);   // floor(x + 1/2)
  EXPECT_EQ(adc_convert(1000, 0, 8), 127);  // saturates
  EXPECT_EQ(adc_convert(-1000, 0, 8), -128);
  EXPECT_EQ(adc_convert(3070, 11, 8), 2048);  // 3070 / 2048 = 1.499: code 1
  EXPECT_EQ(adc_convert(3072, 11, 8), 4096);  // 1.5: code 2
}

TEST(AnalogTile, NoiseIsReproduciblePerSeed) {
  TileParams p = lossless(TileParams{}, 8);
  p.cell_noise_sigma = 0.3;
  p.read_noise_sigma = 0.01;
  std::mt19937_64 rng(9);
  const Problem pr = random_problem(rng, TileParams{}, 40);
  AnalogTile a(p), b(p);
  const TileResult ra = run(a, pr), rb = run(b, pr);
  EXPECT_EQ(ra, rb);
  p.seed = 2;
  AnalogTile c(p);
  EXPECT_NE(run(c, pr), ra);
  // and the noise is small: within a few percent of the lossless output
  CModelTile d;
  const std::vector<double> od = dequantize(run(d, pr), d.params()), oa = dequantize(ra, p);
  double vmax = 0;
  for (double x : od) vmax = std::max(vmax, std::abs(x));
  for (size_t i = 0; i < od.size(); ++i) EXPECT_NEAR(oa[i], od[i], 0.1 * vmax + 1e-9) << i;
}

// Stuck-at faults land at the requested rate: the count of stuck cell writes over 64 tokens x 8
// dims x 2 slices x 2 arrays x 20 tiles (40,960 writes) is within 4.5 binomial sigmas of rate x n.
TEST(AnalogTile, StuckAtFaultsLandAtTheRequestedRate) {
  std::mt19937_64 rng(31);
  const Problem pr = random_problem(rng, TileParams{}, 64);
  for (double rate : {0.001, 0.01, 0.2}) {
    TileParams p = lossless(TileParams{}, 4);
    p.stuck_rate = rate;
    int64_t stuck = 0, writes = 0;
    for (int tile = 0; tile < 20; ++tile) {
      p.seed = 100 + tile;
      AnalogTile t(p);
      run(t, pr);
      stuck += t.stuck_cells();
      writes += t.events().k_macro.cell_writes + t.events().v_macro.cell_writes;
    }
    EXPECT_EQ(writes, 40960);
    const double mean = rate * writes, sigma = std::sqrt(writes * rate * (1 - rate));
    EXPECT_NEAR(static_cast<double>(stuck), mean, 4.5 * sigma) << "rate " << rate;
  }
  TileParams none = lossless(TileParams{}, 4);
  AnalogTile clean(none);
  run(clean, pr);
  EXPECT_EQ(clean.stuck_cells(), 0);
  none.stuck_rate = 1.5;
  EXPECT_THROW(AnalogTile{none}, kvcim::Error);
}

// Gain-cell retention: a level written at w reads as level x exp(-(t - w) / retention_ns). One
// token (its probability is the whole sum whatever its score), read after ln 2 time constants:
// every output is half the fresh one, to the ADC's rounding. Without retention time changes nothing.
TEST(AnalogTile, RetentionDecaysTheStoredLevelsExponentially) {
  std::mt19937_64 rng(5);
  const Problem pr = random_problem(rng, TileParams{}, 1);
  TileParams p = lossless(TileParams{}, 8);
  AnalogTile fresh(p);
  const TileResult r0 = run(fresh, pr);
  for (double tau : {0.0, 1000.0}) {
    p.retention_ns = tau;
    AnalogTile t(p);
    t.append(pr.k[0], pr.v[0], pr.ek[0], pr.ev[0]);
    t.set_time_ns(1000.0 * std::log(2.0));
    const TileResult r = t.query(pr.q, pr.scale);
    for (size_t i = 0; i < r.o.size(); ++i) {
      const double want = tau > 0 ? r0.o[i] / 2.0 : r0.o[i];
      EXPECT_NEAR(r.o[i], want, 0.5 + 1e-9) << "tau " << tau << " output " << i;
    }
  }
  EXPECT_THROW(AnalogTile(p).set_time_ns(-1.0), kvcim::Error);  // time runs forward
}

// Refresh: every refresh_ns since its last write a token is written back, its written level
// restored. Tokens appended every 10 ns, read at 100 ns with a 25 ns refresh: the hand count of
// refreshes (token t written at 10 t is rewritten floor((100 - 10 t) / 25) times), each writing
// every cell of its K column and V row; the oldest token then reads as one refreshed at 75 ns.
TEST(AnalogTile, RefreshWritesEqualTheHandCountOfTokensOlderThanTheInterval) {
  std::mt19937_64 rng(9);
  const Problem pr = random_problem(rng, TileParams{}, 8);
  TileParams p = lossless(TileParams{}, 4);
  p.retention_ns = 50.0;
  p.refresh_ns = 25.0;
  AnalogTile t(p);
  for (int i = 0; i < 8; ++i) {
    t.set_time_ns(10.0 * i);
    t.append(pr.k[i], pr.v[i], pr.ek[i], pr.ev[i]);
  }
  t.set_time_ns(100.0);
  int64_t hand = 0;
  for (int i = 0; i < 8; ++i) hand += static_cast<int64_t>((100 - 10 * i) / 25);
  EXPECT_EQ(hand, 4 + 3 + 3 + 2 + 2 + 2 + 1 + 1);
  EXPECT_EQ(t.refreshes(), hand);
  // the cell writes: the 8 appends' and the refreshes'
  const TileEvents appends = analog_append_events(p);
  EXPECT_EQ(t.events().k_macro.cell_writes, (8 + hand) * appends.k_macro.cell_writes);
  EXPECT_EQ(t.events().v_macro.cell_writes, (8 + hand) * appends.v_macro.cell_writes);
  t.set_time_ns(100.0);  // no time passed: nothing more
  EXPECT_EQ(t.refreshes(), hand);
  // token 1 (written at 10) was refreshed at 35, 60 and 85: alone in a tile, it reads at 100 as
  // if written at 85
  TileParams one = p;
  one.refresh_ns = 0;
  AnalogTile a(one), b(p);
  a.set_time_ns(85.0);
  a.append(pr.k[1], pr.v[1], pr.ek[1], pr.ev[1]);
  a.set_time_ns(100.0);
  b.set_time_ns(10.0);
  b.append(pr.k[1], pr.v[1], pr.ek[1], pr.ev[1]);
  b.set_time_ns(100.0);
  EXPECT_EQ(a.query(pr.q, pr.scale).o, b.query(pr.q, pr.scale).o);
  // the digital tile has no charge to lose
  TileParams digital;
  digital.retention_ns = 10.0;
  EXPECT_THROW(digital.validate("tile"), kvcim::Error);
}

// Conductance drift of non-volatile KV cells: each token's cells read level x (a / t0)^-nu, a the
// token's age. Helpers: a tile of `p` with the problem's tokens appended every `step_ns` from 0,
// read once at `read_ns`.
std::vector<int32_t> drifted_read(const TileParams& p, const Problem& pr, double step_ns, double read_ns) {
  AnalogTile t(p);
  for (size_t i = 0; i < pr.k.size(); ++i) {
    t.set_time_ns(step_ns * static_cast<double>(i));
    t.append(pr.k[i], pr.v[i], pr.ek[i], pr.ev[i]);
  }
  t.set_time_ns(read_ns);
  return t.query(pr.q, pr.scale).o;
}

// A drift case: `tokens` random tokens drawn from `seed`, a lossless tile of `cell_bits`-bit cells
// and its read without drift, the reference every drifted read is held against.
struct DriftCase {
  Problem pr;
  TileParams p;
  std::vector<int32_t> fresh;
};
DriftCase drift_case(uint64_t seed, int tokens, int cell_bits) {
  std::mt19937_64 rng(seed);
  DriftCase c{random_problem(rng, TileParams{}, tokens), lossless(TileParams{}, cell_bits), {}};
  c.fresh = drifted_read(c.p, c.pr, 0, 0);
  return c;
}

// nu = 0 (no spread), or every token younger than t0: bit for bit the tile without drift, with
// cell and read noise on (the drift exponents have a stream of their own: the noises' draws are
// the same).
TEST(AnalogTile, DriftWithNoExponentOrBeforeT0ChangesNothing) {
  std::mt19937_64 rng(21);
  const Problem pr = random_problem(rng, TileParams{}, 16);
  TileParams p = lossless(TileParams{}, 4);
  p.cell_noise_sigma = 0.3;
  p.read_noise_sigma = 1e-3;
  const double step = 1e8, read = 2e9;  // ages 0.5 .. 2 s
  const std::vector<int32_t> none = drifted_read(p, pr, step, read);
  for (bool comp : {false, true}) {
    TileParams d = p;
    d.drift_compensation = comp;
    d.drift_nu = 0.0;  // no exponent at all: old tokens (2 s) unchanged
    EXPECT_EQ(drifted_read(d, pr, step, read), none) << "nu 0, compensation " << comp;
    d.drift_nu = 0.2;
    d.drift_nu_sigma = 0.1;
    d.drift_t0_s = 2.0;  // every age <= t0: no drift yet
    EXPECT_EQ(drifted_read(d, pr, step, read), none) << "ages <= t0, compensation " << comp;
    d.drift_t0_s = 0.5;  // ages past t0: now it drifts
    EXPECT_NE(drifted_read(d, pr, step, read), none) << "ages > t0, compensation " << comp;
  }
}

// One token (its probability is the whole sum whatever its score), nu = 0.1 with no spread, read
// 10^4 t0 after it was written: every output is the fresh one times (10^4)^-0.1 = 0.398, to the
// ADC's rounding. Global compensation (the mean drift divided out) then gives back the fresh read
// bit for bit; t0 scales the age.
TEST(AnalogTile, DriftFollowsThePowerLawByHand) {
  auto [pr, p, fresh] = drift_case(23, 1, 8);
  p.drift_nu = 0.1;
  p.drift_compensation = false;
  for (double t0 : {1.0, 1e-3}) {
    p.drift_t0_s = t0;
    const double age_s = 1e4 * t0;
    const std::vector<int32_t> o = drifted_read(p, pr, 0, age_s * 1e9);
    const double factor = std::pow(1e4, -0.1);
    for (size_t i = 0; i < o.size(); ++i)
      EXPECT_NEAR(o[i], fresh[i] * factor, 0.5 + 1e-9) << "t0 " << t0 << " output " << i;
  }
  p.drift_compensation = true;
  EXPECT_EQ(drifted_read(p, pr, 0, 1e13), fresh);
}

// Each token drifts with its own age: a token written at 0 and one written at 0.9 T, both read at
// T = 10^4 s, follow (age / t0)^-nu each (ages 10^4 s and 10^3 s): the older reads smaller. Two
// tokens of equal score sharing one tile: the output is the mean of the two, each drifted by its
// own age.
TEST(AnalogTile, OlderTokensDriftMoreThanNewerOnes) {
  std::mt19937_64 rng(25);
  Problem pr = random_problem(rng, TileParams{}, 2);
  pr.k[1] = pr.k[0];
  pr.ek[1] = pr.ek[0];
  pr.ev[1] = pr.ev[0];
  TileParams p = lossless(TileParams{}, 8);
  p.drift_nu = 0.1;
  p.drift_compensation = false;
  const double T = 1e13;  // ns
  Problem one = pr, other = pr;
  one.k.resize(1), one.v.resize(1), one.ek.resize(1), one.ev.resize(1);
  other.k.erase(other.k.begin()), other.v.erase(other.v.begin());
  other.ek.erase(other.ek.begin()), other.ev.erase(other.ev.begin());
  TileParams fresh_p = p;
  fresh_p.drift_nu = 0.0;
  const std::vector<int32_t> f0 = drifted_read(fresh_p, one, 0, 0), f1 = drifted_read(fresh_p, other, 0, 0);
  const std::vector<int32_t> old_o = drifted_read(p, one, 0, T);
  AnalogTile nt(p);
  nt.set_time_ns(0.9 * T);
  nt.append(other.k[0], other.v[0], other.ek[0], other.ev[0]);
  nt.set_time_ns(T);
  const std::vector<int32_t> new_o = nt.query(pr.q, pr.scale).o;
  int smaller = 0;
  for (size_t i = 0; i < f0.size(); ++i) {
    EXPECT_NEAR(old_o[i], f0[i] * std::pow(1e4, -0.1), 0.5 + 1e-9) << i;
    EXPECT_NEAR(new_o[i], f1[i] * std::pow(1e3, -0.1), 0.5 + 1e-9) << i;
    if (std::abs(f0[i]) > 8) smaller += std::abs(old_o[i]) < std::abs(f0[i] * std::pow(1e3, -0.1));
  }
  EXPECT_GT(smaller, 0);
  // both in one tile, equal scores: each token's probability is floor((2^P - 1) / 2) = 2047 where
  // alone it had 4095
  AnalogTile both(p);
  both.append(pr.k[0], pr.v[0], pr.ek[0], pr.ev[0]);
  both.set_time_ns(0.9 * T);
  both.append(pr.k[1], pr.v[1], pr.ek[1], pr.ev[1]);
  both.set_time_ns(T);
  const std::vector<int32_t> o = both.query(pr.q, pr.scale).o;
  for (size_t i = 0; i < o.size(); ++i)
    EXPECT_NEAR(o[i], (f0[i] * std::pow(1e4, -0.1) + f1[i] * std::pow(1e3, -0.1)) * 2047 / 4095, 1.0 + 1e-9) << i;
}

// The spread of nu: drawn per cell from the seed (the same seed, the same drifted reads; another
// seed, others); with compensation only the spread is left, so the reads move off the fresh ones.
// Negative or non-finite drift fields, and drift on the digital tile, are bad input naming the field.
TEST(AnalogTile, DriftSpreadIsReproduciblePerSeedAndBadFieldsAreNamed) {
  auto [pr, p, fresh] = drift_case(27, 16, 4);
  p.drift_nu = 0.05;
  p.drift_nu_sigma = 0.05;
  const double read = 3.15e16;  // a year
  const std::vector<int32_t> a = drifted_read(p, pr, 1e9, read);
  EXPECT_EQ(drifted_read(p, pr, 1e9, read), a);
  EXPECT_NE(a, fresh);
  TileParams other = p;
  other.seed = 2;
  EXPECT_NE(drifted_read(other, pr, 1e9, read), a);
  for (const char* field : {"drift_nu", "drift_nu_sigma", "drift_t0_s"}) {
    TileParams bad = p;
    double& f = std::string(field) == "drift_nu" ? bad.drift_nu
                : std::string(field) == "drift_nu_sigma" ? bad.drift_nu_sigma : bad.drift_t0_s;
    for (double v : {-0.1, std::nan("")}) {
      f = v;
      try {
        bad.validate("tile");
        ADD_FAILURE() << field << " = " << v << " accepted";
      } catch (const kvcim::Error& e) {
        EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
      }
    }
  }
  TileParams digital;
  digital.drift_nu = 0.1;
  EXPECT_THROW(digital.validate("tile"), kvcim::Error);
}

TEST(AnalogTile, HardSigmoidAndReluByHand) {
  TileParams p = lossless(TileParams{1, 4, 8, 6, 12}, 8);
  p.softmax = TileSoftmax::hardsigmoid;
  // qmul 2^15, qexp -15 - 6: Y_t = s_t (one unit of s is one unit of Y: x_t = s_t / 64)
  const QueryScale qs{1u << 15, -21};
  const std::vector<int64_t> s = {0, 192, -192, 1000};  // x = 0, 3, -3, 15.6
  const std::vector<int> ek(4, 0), ev(4, 0);
  SoftmaxEvents ev_count;
  const SoftmaxOutput h = softmax_per_token(p, s, ek, ev, qs, ev_count);
  EXPECT_EQ(h.e, (std::vector<uint32_t>{32768, 65536, 1, 65536}));
  EXPECT_EQ(h.sum, 32768 + 65536 + 1 + 65536);
  EXPECT_EQ(h.raw[1], 65536 * 4095 / h.sum);
  EXPECT_EQ(h.ymax, 0);
  EXPECT_EQ(ev_count, normalisation_events(p, 4));  // p.softmax: hardsigmoid
  p.softmax = TileSoftmax::relu;
  const SoftmaxOutput r = softmax_per_token(p, s, ek, ev, qs, ev_count);
  EXPECT_EQ(r.e, (std::vector<uint32_t>{1, 192 * 1024, 1, 1000 * 1024}));
}

TEST(AnalogTile, CoarseAdcSaturatesAndStaysFinite) {
  TileParams p = TileParams{};
  p.kind = TileKind::analog;
  p.adc_bits = 4;
  p.adc_range = AdcRange::calibrated;
  p.adc_clip = 0.01;
  p.out_adc_clip = 0.01;
  AnalogTile t(p);
  std::mt19937_64 rng(2);
  const Problem pr = random_problem(rng, p, 64);
  const TileResult r = run(t, pr);
  EXPECT_GT(r.sum, 0);
  for (int32_t o : r.o) EXPECT_LE(std::abs(static_cast<int64_t>(o)), int64_t{1} << 24);
}

TEST(AnalogTile, MakeTilePicksByKindAndBadParamsAreNamed) {
  TileParams p;
  EXPECT_NE(dynamic_cast<CModelTile*>(make_tile(p).get()), nullptr);
  p.kind = TileKind::analog;
  EXPECT_NE(dynamic_cast<AnalogTile*>(make_tile(p).get()), nullptr);
  p.k_bits = 9;
  EXPECT_THROW(AnalogTile{p}, kvcim::Error);
  p.k_bits = 0;
  p.adc_clip = -0.5;
  EXPECT_THROW(AnalogTile{p}, kvcim::Error);
  TileParams d;
  d.softmax = TileSoftmax::relu;
  EXPECT_THROW(CModelTile{d}, kvcim::Error);
}

// The digital tile with K and V of different widths (q stays kv_bits): exact against plain loops.
TEST(TileCModel, KAndVOfDifferentWidths) {
  std::mt19937_64 rng(23);
  for (auto [kb, vb] : {std::pair{4, 8}, std::pair{8, 3}, std::pair{2, 6}}) {
    TileParams p;
    p.k_bits = kb;
    p.v_bits = vb;
    CModelTile tile(p);
    EXPECT_EQ(k_macro_spec(p).weight_bits, kb);
    EXPECT_EQ(v_macro_spec(p).weight_bits, vb);
    for (int trial = 0; trial < 50; ++trial) {
      const int n = std::uniform_int_distribution<int>(1, 64)(rng);
      Problem pr = random_problem(rng, p, n);
      for (auto& k : pr.k) for (int8_t& x : k) x = static_cast<int8_t>(x >> (8 - kb));
      for (auto& v : pr.v) for (int8_t& x : v) x = static_cast<int8_t>(x >> (8 - vb));
      AnalogTile lossless_analog(lossless(p, 8));
      ASSERT_EQ(run(tile, pr), run(lossless_analog, pr));
    }
    if (kb < 8) {  // one past the K range is refused, naming k_bits
      std::vector<int8_t> big(8, static_cast<int8_t>(1 << (kb - 1)));
      EXPECT_THROW(tile.append(big, std::vector<int8_t>(8, 0), 0, 0), kvcim::Error);
    }
  }
}

}  // namespace
