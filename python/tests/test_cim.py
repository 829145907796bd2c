"""The CIM C models from Python: a digital macro computes the exact integer product and counts the
analytic events; an analog macro with a coarse ADC does not; the attention tile approximates float
softmax attention; co-simulation against the RTL (or a clear error in builds without it)."""
import re
import subprocess

import numpy as np
import pytest

import kvcim
from kvcim import _core as core
from test_run import kvcim_exe


def macro_spec(kind, adc_bits=8, rows=64, cols=64):
    s = core.MacroSpec()
    s.kind = kind
    s.rows, s.cols = rows, cols
    s.rows_per_cycle = rows
    s.adc_bits = adc_bits
    s.validate()
    return s


def random_problem(spec, rng, n_rows, n_out):
    w = rng.integers(spec.weight_min(), spec.weight_max() + 1, size=(n_rows, n_out))
    x = rng.integers(spec.input_min(), spec.input_max() + 1, size=n_rows)
    return w, x


def test_digital_macro_is_the_exact_integer_product():
    rng = np.random.default_rng(1)
    spec = macro_spec(core.MacroKind.digital)
    n_rows, n_out = 40, spec.weights_per_row()
    w, x = random_problem(spec, rng, n_rows, n_out)
    macro = core.Macro(spec)
    macro.write_block(w.tolist())
    macro.reset_events()
    y = macro.compute(x.tolist(), n_out)
    assert y == (x @ w).tolist()
    # The simulation counts exactly the analytic events the mapper and energy model use.
    assert macro.events == core.compute_events(spec, n_rows, n_out)
    assert macro.events["column_reads"] > 0 and macro.events["adc_conversions"] == 0


def test_analog_macro_error_shrinks_with_adc_bits():
    rng = np.random.default_rng(2)
    errors = {}
    for bits in (3, 5, 12):
        spec = macro_spec(core.MacroKind.analog, adc_bits=bits)
        n_rows, n_out = 64, spec.weights_per_row()
        w, x = random_problem(spec, np.random.default_rng(3), n_rows, n_out)
        macro = core.Macro(spec)
        macro.write_block(w.tolist())
        y = np.array(macro.compute(x.tolist(), n_out))
        errors[bits] = np.abs(y - x @ w).mean()
        assert macro.events["adc_conversions"] > 0
    assert errors[3] > errors[5] > 0  # a coarse ADC loses information
    assert errors[12] == 0            # 1-bit cells summed over 64 rows fit 12 bits: lossless
    del rng


def test_noise_models_fixed_by_default_and_close_to_exact_on_one_seed():
    # the same seed draws the same noise; the fixed model rounds it to 2^-10 levels, so outputs
    # differ only through the few conversions near an ADC rounding boundary
    rng = np.random.default_rng(4)
    outputs = {}
    for model in (kvcim.NoiseModel.exact, kvcim.NoiseModel.fixed):
        spec = macro_spec(core.MacroKind.analog, adc_bits=12)
        assert spec.noise_model == kvcim.NoiseModel.fixed  # the default
        spec.noise_model = model
        spec.cell_noise_sigma, spec.read_noise_sigma = 0.3, 0.2
        w, x = random_problem(spec, np.random.default_rng(5), 64, spec.weights_per_row())
        macro = core.Macro(spec)
        macro.write_block(w.tolist())
        outputs[model] = np.array(macro.compute(x.tolist(), spec.weights_per_row()))
    exact, fixed = outputs[kvcim.NoiseModel.exact], outputs[kvcim.NoiseModel.fixed]
    assert not np.array_equal(exact, x @ w)  # noisy
    assert np.abs(exact - fixed).mean() < 0.1 * np.abs(exact - x @ w).mean()
    del rng


def test_macro_rejects_out_of_range_input_with_kvcim_error():
    spec = macro_spec(core.MacroKind.digital)
    macro = core.Macro(spec)
    with pytest.raises(kvcim.Error, match=r"w\[0\]"):
        macro.write_block([[300]])
    bad = core.MacroSpec()
    bad.rows = 0
    with pytest.raises(kvcim.Error, match="rows"):
        bad.validate("here")


def quantise(x):
    e = int(np.ceil(np.log2(np.abs(x).max() / 127)))
    return np.clip(np.round(x / 2.0 ** e), -128, 127).astype(int), e


def test_attention_tile_approximates_float_attention():
    rng = np.random.default_rng(4)
    params = core.TileParams()
    hd, n = params.head_dim, 37
    k, v, q = rng.normal(size=(n, hd)), rng.normal(size=(n, hd)), rng.normal(size=hd)
    tile = core.CModelTile(params)
    for t in range(n):
        kq, ek = quantise(k[t])
        vq, ev = quantise(v[t])
        tile.append(kq.tolist(), vq.tolist(), ek, ev)
    assert tile.tokens == n
    q_scale = np.abs(q).max() / 127
    qq = np.clip(np.round(q / q_scale), -128, 127).astype(int)
    scale = core.query_scale(q_scale, hd)
    result = tile.query(qq.tolist(), scale.qmul, scale.qexp)
    got = np.array(core.dequantize(result, params))
    scores = k @ q / np.sqrt(hd)
    p = np.exp(scores - scores.max())
    expected = (p / p.sum()) @ v
    # 8-bit K/V/q and a 12-bit probability: within 2% of the values' range.
    assert np.abs(got - expected).max() < 0.02 * np.abs(v).max()
    assert tile.events["appends"] == n and tile.events["queries"] == 1
    # A tile holds `tokens` tokens; one more is an error, not a crash.
    full = core.CModelTile(params)
    for _ in range(params.tokens):
        full.append([0] * hd, [0] * hd, 0, 0)
    with pytest.raises(kvcim.Error):
        full.append([0] * hd, [0] * hd, 0, 0)


def test_analog_tile_mirrors_the_cpp_fields_lossless_equals_digital_and_decays():
    # TileParams name for name; a lossless analog tile (one 8-bit cell per value, 24-bit ADCs,
    # no noise) gives the digital tile's integers; retention halves a lone token's outputs after
    # ln 2 time constants
    rng = np.random.default_rng(8)
    params = core.TileParams()
    hd, n = params.head_dim, 20
    k = rng.integers(-128, 128, size=(n, hd)).tolist()
    v = rng.integers(-128, 128, size=(n, hd)).tolist()
    q = rng.integers(-128, 128, size=hd).tolist()
    ek, ev = rng.integers(-12, -4, size=n).tolist(), rng.integers(-12, -4, size=n).tolist()
    analog = core.TileParams()
    analog.kind, analog.cell_bits, analog.adc_bits = core.TileKind.analog, 8, 24
    digital_tile, analog_tile = core.CModelTile(params), core.AnalogTile(analog)
    for t in range(n):
        digital_tile.append(k[t], v[t], ek[t], ev[t])
        analog_tile.append(k[t], v[t], ek[t], ev[t])
    scale = core.query_scale(0.01, hd)
    assert analog_tile.query(q, scale.qmul, scale.qexp) == digital_tile.query(q, scale.qmul, scale.qexp)
    assert analog_tile.params.kind == core.TileKind.analog and analog_tile.stuck_cells == 0
    analog.retention_ns = 1000.0
    lone = core.AnalogTile(analog)
    lone.append(k[0], v[0], ek[0], ev[0])
    fresh = lone.query(q, scale.qmul, scale.qexp).o
    lone.set_time_ns(1000.0 * np.log(2.0))
    aged = lone.query(q, scale.qmul, scale.qexp).o
    assert np.abs(np.array(aged) - np.array(fresh) / 2).max() <= 0.5 + 1e-9
    # drift of non-volatile cells: read 10^4 t0 after it was written, nu = 0.1 uncompensated, the
    # lone token's outputs are (10^4)^-0.1 of the fresh ones
    drifting = core.TileParams()
    drifting.kind, drifting.cell_bits, drifting.adc_bits = core.TileKind.analog, 8, 24
    drifting.drift_nu, drifting.drift_nu_sigma, drifting.drift_t0_s = 0.1, 0.0, 1.0
    drifting.drift_compensation = False
    lone = core.AnalogTile(drifting)
    lone.append(k[0], v[0], ek[0], ev[0])
    fresh = lone.query(q, scale.qmul, scale.qexp).o
    lone.set_time_ns(1e13)
    drifted = lone.query(q, scale.qmul, scale.qexp).o
    assert np.abs(np.array(drifted) - np.array(fresh) * 1e4 ** -0.1).max() <= 0.5 + 1e-9
    drifting.drift_nu = -0.1
    with pytest.raises(kvcim.Error, match="drift_nu"):
        core.AnalogTile(drifting)
    with pytest.raises(kvcim.Error, match="kind"):
        core.CModelTile(analog)  # the digital tile is digital
    analog.stuck_rate = 2.0
    with pytest.raises(kvcim.Error, match="stuck_rate"):
        core.AnalogTile(analog)


def test_cosim_against_rtl_or_a_clear_error():
    if kvcim.HAVE_RTL:
        # the default: every built configuration (the linked one first), random problems, the
        # directed corners and port-independent stimulus, under back-pressure
        full = kvcim.cosim(trials=5, port_episodes=2)
        assert full["failure"] == "", full["failure"]
        assert full["result_mismatches"] == 0 and full["event_mismatches"] == 0, full["first_mismatch"]
        assert all(c["corners"] > 0 and c["port_queries"] > 0 for c in full["configs"]), full["configs"]
        linked = full["configs"][0]["config"]
        report = kvcim.cosim(trials=20, seed=7, config=linked, corners=False, port_episodes=0)
        assert report["trials"] == 20
        assert report["result_mismatches"] == 0 and report["event_mismatches"] == 0, \
            report["first_mismatch"]
        assert report["rtl_events"] == report["cmodel_events"]
        assert report["rtl_events"]["queries"] == 20
        with pytest.raises(kvcim.Error, match="tokens"):
            kvcim.cosim(trials=1, tokens=10_000)
        with pytest.raises(kvcim.Error, match="backpressure"):
            kvcim.cosim(trials=1, backpressure=1.0)
        with pytest.raises(kvcim.Error, match="config"):
            kvcim.cosim(trials=1, config="hd1_t1_kv1_p1")
        # the command and kvcim.cosim are one job: the same seed draws the same problems and the
        # same back-pressure (they once seeded it differently), so even the cycles agree
        out = subprocess.run([str(kvcim_exe()), "cosim", "--config", linked, "--trials", "12", "--seed", "5",
                              "--backpressure", "0.3"], check=True, capture_output=True,
                             text=True, timeout=300).stdout
        cycles = int(re.search(r"(\d+) cycles in", out).group(1))
        report = kvcim.cosim(trials=12, seed=5, backpressure=0.3, config=linked)
        assert report["sim_cycles"] == cycles
        assert report["result_mismatches"] == 0 and report["event_mismatches"] == 0
        # stalls cost cycles (the same problems only: the port stimulus draws with the stalls)
        random_only = dict(trials=12, seed=5, config=linked, corners=False, port_episodes=0)
        assert kvcim.cosim(backpressure=0.0, **random_only)["sim_cycles"] < \
            kvcim.cosim(backpressure=0.3, **random_only)["sim_cycles"]
    else:
        with pytest.raises(kvcim.Error, match="KVCIM_WITH_RTL"):
            kvcim.cosim(trials=1)

