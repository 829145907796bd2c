"""The example scripts in python/examples run on the embedded model and write their figures."""
import subprocess

import pytest

from conftest import PYTHON, SOURCE_DIR, child_env

EXAMPLES = SOURCE_DIR / "python" / "examples"


def run_example(name, tmp_path, *args):
    proc = subprocess.run([PYTHON, str(EXAMPLES / name), "--out", str(tmp_path), *args],
                          env=child_env(), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_adc_bits_study(tmp_path):
    out = run_example("adc_bits_study.py", tmp_path, "--steps", "8")
    assert "10 points ok, 0 failed" in out
    for name in ("pareto.png", "accuracy_vs_adc.png", "energy_breakdown.png", "pareto_kl.png"):
        assert (tmp_path / name).stat().st_size > 1000
    # Resumable: a second run evaluates nothing and prints the same table.
    again = run_example("adc_bits_study.py", tmp_path, "--steps", "8")
    assert again.split("wrote")[0] == out.split("wrote")[0]


def test_kv_page_size_study(tmp_path):
    out = run_example("kv_page_size_study.py", tmp_path)
    assert out.count("15 points ok, 0 failed") == 2
    assert (tmp_path / "fragmentation_vs_page_size.png").stat().st_size > 1000


def test_the_example_spec_through_the_commands(tmp_path):
    results = tmp_path / "adc_bits.jsonl"
    sweep = subprocess.run([PYTHON, "-m", "kvcim.sweep", str(EXAMPLES / "adc_bits.yaml"),
                            "--out", str(results), "--workers", "2"], env=child_env(),
                           capture_output=True, text=True, timeout=240)
    assert sweep.returncode == 0, sweep.stderr
    assert "5 points: 5 ok, 0 error" in sweep.stderr
    plots = subprocess.run([PYTHON, "-m", "kvcim.plot", str(results), "--out",
                            str(tmp_path / "plots")], env=child_env(), capture_output=True,
                           text=True, timeout=120)
    assert plots.returncode == 0, plots.stderr
    assert len(plots.stdout.split()) == 3  # pareto, accuracy_vs_adc, energy_breakdown


def test_llm_scale_study(tmp_path):
    out = run_example("llm_scale_study.py", tmp_path)
    for name in ("energy_throughput_vs_batch.png", "energy_vs_context.png", "area_vs_context.png"):
        assert (tmp_path / name).stat().st_size > 1000
    rows = [line.split() for line in out.splitlines()]
    batch = {(int(r[0]), " ".join(r[1:-3])): (float(r[-3]), float(r[-2])) for r in rows
             if len(r) >= 5 and r[0].isdigit() and r[-1].replace(".", "").replace("e+", "").isdigit()}
    # batching amortises the weights the conventional engine and the attention-only chip fetch
    assert batch[(64, "conventional")][0] < batch[(1, "conventional")][0] / 4
    assert batch[(64, "attention-only CIM")][0] < batch[(1, "attention-only CIM")][0] / 4
    # and throughput grows with the batch on every design
    for design in ("full CIM", "attention-only CIM", "conventional"):
        assert batch[(64, design)][1] > batch[(1, design)][1]
    # GQA: at 32k tokens Llama-3-8B's chip is smaller than Llama-2-7B's, at 512 larger (more weights)
    area = {(int(r[0]), r[1]): float(r[2]) for r in rows if len(r) == 3 and r[0].isdigit()
            and r[1].startswith("llama")}
    assert area[(32768, "llama3-8b")] < area[(32768, "llama2-7b")]
    assert area[(512, "llama3-8b")] > area[(512, "llama2-7b")]


def test_kv_window_study(tmp_path):
    import json
    out = run_example("kv_window_study.py", tmp_path, "--steps", "192", "--eval-tokens", "200",
                      "--windows", "64,128")
    points = {p["policy"]: p for p in json.loads((tmp_path / "results.json").read_text())}
    assert len(points) == 6 and "full attention" in out
    full, one_tile = points["full attention"], points["window=64"]
    # keeping one 64-token tile of a 192-token context costs accuracy beyond its interval, and
    # saves KV attention energy (fewer tokens scored and summed)
    assert one_tile["delta_nll"]["ci_low"] > full["delta_nll"]["ci_high"]
    assert one_tile["kv_pj_per_token"] < points["window=128"]["kv_pj_per_token"] < full["kv_pj_per_token"]
    # with two tiles H2O has no choice: the same run as the oldest rule
    assert points["window=128,evict=h2o"]["delta_nll"] == points["window=128"]["delta_nll"]
    assert (tmp_path / "kv_window_study.png").stat().st_size > 1000


def test_kv_retention_study(tmp_path):
    import json
    out = run_example("kv_retention_study.py", tmp_path, "--steps", "96", "--eval-tokens", "300",
                      "--taus", "300,10")
    points = json.loads((tmp_path / "results.json").read_text())
    assert len(points) == 5 and "no decay" in out
    base = points[0]
    fast = next(p for p in points if p["tau_tokens"] == 10 and not p["refresh"])
    fast_refreshed = next(p for p in points if p["tau_tokens"] == 10 and p["refresh"])
    # charge that leaks within 10 tokens costs accuracy beyond the interval; refreshing every
    # tau/10 brings it back near the no-decay run at the price of the refresh's cell writes
    assert fast["delta_nll"]["ci_low"] > base["delta_nll"]["ci_high"]
    assert fast_refreshed["delta_nll"]["value"] < fast["delta_nll"]["ci_low"]
    assert fast_refreshed["kv_cell_writes_per_token"] > 5 * base["kv_cell_writes_per_token"]
    assert fast["kv_cell_writes_per_token"] == base["kv_cell_writes_per_token"]
    assert (tmp_path / "kv_retention_study.png").stat().st_size > 1000


def test_kv_pareto_study(tmp_path):
    import json
    run_example("kv_pareto_study.py", tmp_path, "--steps", "32", "--eval-tokens", "200", "--quick")
    points = {p["label"]: p for p in json.loads((tmp_path / "results.json").read_text())}
    assert len(points) == 6
    front = [p for p in points.values() if p["pareto"]]
    # every point off the front is beaten on both axes by a point on it
    for p in points.values():
        if not p["pareto"]:
            assert any(f["kv_pj_per_token"] <= p["kv_pj_per_token"] and
                       f["delta_nll"]["value"] <= p["delta_nll"]["value"] for f in front), p["label"]
    # coarser score/output ADCs cost accuracy beyond the intervals; narrower V saves energy
    six, ten = points["analog 4-bit cells, 6-bit ADC"], points["analog 4-bit cells, 10-bit ADC"]
    assert six["delta_nll"]["ci_low"] > ten["delta_nll"]["ci_high"]
    assert six["kv_pj_per_token"] < ten["kv_pj_per_token"]
    assert points["digital K8/V6 token"]["kv_pj_per_token"] < points["digital K8/V8 token"]["kv_pj_per_token"]
    assert (tmp_path / "kv_pareto.png").stat().st_size > 1000


def test_drift_study(tmp_path):
    import json
    # the shipped text's first three paragraphs (the whole text at every one of the 17 points would
    # make this test minutes long)
    paragraphs = (SOURCE_DIR / "testdata" / "eval" / "austen_paragraphs.txt").read_text().split("\n\n")
    text = tmp_path / "eval.txt"
    text.write_text("\n\n".join(paragraphs[:3]) + "\n")
    run_example("drift_study.py", tmp_path, "--steps", "16", "--eval-tokens", "300", "--eval-text", str(text),
                "--times", "1 s,1 h,1 day")
    points = json.loads((tmp_path / "results.json").read_text())
    assert len(points) == 7
    fresh = points[0]
    by = {(p["label"], p["compensation"]): p for p in points[1:]}
    # drift starts after t0 = 1 s: exactly the freshly programmed run
    assert by[("1 s", False)]["delta_nll"] == fresh["delta_nll"]
    # an hour of uncompensated drift (every conductance ~8% lower) costs far more than the
    # spread left after global compensation
    assert by[("1 h", False)]["delta_nll"]["ci_low"] > by[("1 h", True)]["delta_nll"]["ci_high"] + 1.0
    assert by[("1 h", True)]["delta_nll"]["value"] < fresh["delta_nll"]["value"] + 0.2
    assert (tmp_path / "drift_study.png").stat().st_size > 1000
    # KV cells drifting: a context spanning 1 s has no token older than t0 (exactly the cells
    # without drift, compensated or not); spanning a day, the uncompensated tokens drift and the
    # run moves off the fresh one
    kv = json.loads((tmp_path / "kv_results.json").read_text())
    assert len(kv) == 10
    kv_fresh = kv[0]
    kv_by = {(p["label"], p["compensation"], p["refresh_s"] > 0): p for p in kv[1:]}
    for key in (("1 s", False, False), ("1 s", True, False), ("1 s", False, True)):
        assert kv_by[key]["delta_nll"] == kv_fresh["delta_nll"]
    assert kv_by[("1 day", False, False)]["kl_mean"]["value"] > kv_fresh["kl_mean"]["value"]
