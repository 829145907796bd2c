"""Named conventional machines from Python: kvcim.baseline_step gives the figures `kvcim map
--baseline` records (same names), kvcim.run(baseline=) those `kvcim run --baseline` reports, and an
unknown machine or a regime beyond its HBM is a kvcim.Error naming it; kvcim.map(baseline=) and
the idle rule (idle=) of map and run as the CLI spells them."""
import json
import subprocess

import pytest

import kvcim
from conftest import kvcim_exe


def test_machine_names_are_the_shipped_files():
    assert kvcim.machine_names() == ["a100-80gb", "h100-sxm"]


def test_baseline_step_of_a_placement_is_what_kvcim_map_records(tmp_path):
    p = kvcim.map("llama3-8b", context=1024, policy="sequences=64", fit=True)
    step = kvcim.baseline_step("h100-sxm", p)
    out = tmp_path / "map.json"
    subprocess.run([str(kvcim_exe()), "map", "--preset", "llama3-8b", "--context", "1024", "--policy",
                    "sequences=64", "--fit", "--baseline", "h100-sxm", "--json", str(out)],
                   check=True, capture_output=True, timeout=300)
    assert json.loads(out.read_text())["baseline_machine"] == json.loads(json.dumps(step))
    split = step["energy_pj_per_token_split"]
    assert sum(split.values()) == pytest.approx(step["energy_pj_per_token"], rel=1e-12)


def test_baseline_step_of_a_shape_takes_the_regime_given():
    fp16 = kvcim.baseline_step("a100-80gb", "llama2-7b", sequences=1, context=512, bits=16)
    int8 = kvcim.baseline_step("a100-80gb", "llama2-7b", sequences=1, context=512, bits=8)
    assert fp16["regime"] == {"sequences": 1, "context": 512, "weight_bits": 16, "kv_bits": 16}
    assert int8["bytes_per_step"] == pytest.approx(fp16["bytes_per_step"] / 2, rel=1e-12)
    assert fp16["step_ns"] >= fp16["roofline_ns"]


def test_errors_name_the_machine_and_the_memory():
    with pytest.raises(kvcim.Error, match="unknown machine; known: a100-80gb, h100-sxm"):
        kvcim.baseline_step("h200", "llama2-7b")
    with pytest.raises(kvcim.Error, match="HBM capacity"):
        kvcim.baseline_step("h100-sxm", "llama2-70b", bits=16)
    with pytest.raises(kvcim.Error, match="unknown machine"):
        kvcim.run(steps=4, eval_text_path="", baseline="h200")


def test_run_reports_the_machine_beside_the_synthetic_engine():
    r = kvcim.run(steps=8, eval_text_path="", baseline="a100-80gb")
    m = r["energy"]["baseline_machine"]
    assert m["name"] == "a100-80gb" and m["bits"] == 8
    assert sum(m["energy_pj_per_token_split"].values()) == pytest.approx(m["energy_pj_per_token"], rel=1e-12)
    assert "baseline_machine" not in kvcim.run(steps=8, eval_text_path="")["energy"]


def test_map_baseline_gives_the_figures_kvcim_map_records(tmp_path):
    p = kvcim.map("llama3-8b", context=1024, policy="sequences=64", fit=True, baseline="h100-sxm")
    out = tmp_path / "map.json"
    subprocess.run([str(kvcim_exe()), "map", "--preset", "llama3-8b", "--context", "1024", "--policy",
                    "sequences=64", "--fit", "--baseline", "h100-sxm", "--json", str(out)],
                   check=True, capture_output=True, timeout=300)
    machine = p.figures["baseline_machine"]
    assert json.loads(out.read_text())["baseline_machine"] == json.loads(json.dumps(machine))
    assert machine == kvcim.baseline_step("h100-sxm", p)
    assert "baseline_machine" not in kvcim.map("llama3-8b", context=1024, fit=True).figures


def test_map_baseline_errors_name_the_machine_and_the_memory():
    with pytest.raises(kvcim.Error, match="baseline: name = 'h200': unknown machine"):
        kvcim.map("llama3-8b", baseline="h200")
    with pytest.raises(kvcim.Error, match="HBM capacity = 80 GB: .* 256 sequence"):
        kvcim.map("llama3-8b", context=8192, policy="sequences=256", fit=True, baseline="a100-80gb")


def test_idle_rule_as_the_cli_spells_it(tmp_path):
    gated = kvcim.map(idle="gated")
    leaking = kvcim.map(idle="leaking")
    assert "leaking" in leaking.conditions()["idle_rule"]
    assert "gated" in gated.conditions()["idle_rule"]
    out = tmp_path / "map.json"
    subprocess.run([str(kvcim_exe()), "map", "--idle", "leaking", "--json", str(out)],
                   check=True, capture_output=True, timeout=300)
    cli = json.loads(out.read_text())["energy_per_token_pj"]
    assert leaking.figures["energy_per_token_pj"] == pytest.approx(cli, rel=1e-12)
    assert leaking.figures["energy_per_token_pj"]["conventional"] > gated.figures["energy_per_token_pj"]["conventional"]
    r = kvcim.run(steps=8, eval_text_path="", idle="leaking")
    assert "leaking" in r["energy"]["conditions"]["idle_rule"]
    with pytest.raises(kvcim.Error, match="map: idle = 'sometimes': expected gated or leaking"):
        kvcim.map(idle="sometimes")
    with pytest.raises(kvcim.Error, match="run: idle = 'sometimes'"):
        kvcim.run(steps=8, eval_text_path="", idle="sometimes")
