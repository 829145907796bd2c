"""Sweeps of real evaluations: a grid of mapper points evaluated by worker processes gives exactly
what kvcim.map gives for each point directly, ADC energy grows with ADC bits, and the plot command
draws the sweep."""
import json
import subprocess

import pytest

import kvcim
from kvcim import plot
from conftest import PYTHON, SOURCE_DIR, child_env

ANALOG = SOURCE_DIR / "configs" / "hw" / "sram_analog.yaml"


def test_map_sweep_matches_direct_mapping(tmp_path):
    spec = {"evaluate": "map", "hardware": str(ANALOG),
            "policy": {"overflow": "spill"}, "run": {"context": 48},
            "grid": {"macro.adc_bits": [4, 6, 8], "policy.tokens_per_page": [8, 32]}}
    out = tmp_path / "map.jsonl"
    result = kvcim.sweep(spec, out, workers=2, progress=False)
    assert (result.total, result.ok, result.errors) == (6, 6, 0)
    model = kvcim.Model.load()
    base = kvcim.HardwareSpec.from_yaml(ANALOG).to_dict()
    adc_energy = {}
    for r in result.records:
        bits = r["overrides"]["hardware.macro.adc_bits"]
        page = r["overrides"]["policy.tokens_per_page"]
        hw = dict(base, macro=dict(base["macro"], adc_bits=bits))
        direct = kvcim.map(model, kvcim.HardwareSpec.from_dict(hw),
                           kvcim.Policy.from_dict({"overflow": "spill", "tokens_per_page": page}),
                           context=48)
        assert r["result"]["figures"] == json.loads(json.dumps(direct.figures))  # exactly
        assert r["result"]["energy"]["cim"]["per_token_pj"] == pytest.approx(
            direct.figures["energy_per_token_pj"]["cim"])
        adc_energy.setdefault(page, {})[bits] = r["result"]["energy"]["cim"]["breakdown"]["adc"]
    for by_bits in adc_energy.values():
        assert 0 < by_bits[4] < by_bits[6] < by_bits[8]

    figs = tmp_path / "figs"
    proc = subprocess.run([PYTHON, "-m", "kvcim.plot", str(out), "--out", str(figs),
                           "--format", "svg"], env=child_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "energy_breakdown.svg" in proc.stdout
    assert (figs / "energy_breakdown.svg").stat().st_size > 1000


def test_map_point_with_its_placement_draws_a_utilisation_map(tmp_path):
    spec = {"evaluate": "map", "hardware": str(ANALOG), "policy": "overflow=spill",
            "run": {"context": 200, "placement": True}, "grid": {"policy": ["overflow=spill"]}}
    out = tmp_path / "r.jsonl"
    result = kvcim.sweep(spec, out, workers=1, progress=False)
    assert result.ok == 1
    placement = result.records[0]["result"]["placement"]
    # one entry per macro of the chip as built (at most the spec's)
    assert 0 < len(placement["macro_map"]) <= kvcim.HardwareSpec.from_yaml(ANALOG).organization["macros"]
    path = plot.utilisation_map(placement, tmp_path / "u.png")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
