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
