"""Plots: the Pareto front is the set of undominated points, and every figure is written as a
non-empty PNG or SVG file (from the Python API and from python3 -m kvcim.plot)."""
import json
import subprocess

import pytest

import kvcim
from kvcim import plot
from conftest import PYTHON, child_env


def test_pareto_front_keeps_exactly_the_undominated_points():
    pts = [(1.0, 0.5), (2.0, 0.9), (1.5, 0.4), (3.0, 0.95), (2.5, 0.8), (2.0, 0.7), (0.5, 0.1)]
    front = plot.pareto_front(pts)
    assert front == [6, 0, 1, 3]
    # Brute force: a point is on the front iff no other is at least as good in both and better
    # in one.
    def dominated(i):
        return any(pts[j][0] <= pts[i][0] and pts[j][1] >= pts[i][1] and pts[j] != pts[i]
                   for j in range(len(pts)))
    assert set(front) == {i for i in range(len(pts)) if not dominated(i)}
    # Lower-is-better accuracy (KL): the front flips.
    assert plot.pareto_front([(1, 0.3), (2, 0.1), (3, 0.2)], minimise_y=True) == [0, 1]


def synthetic_records():
    records = []
    for bits in (3, 4, 6, 8):
        for rows in (64, 128):
            cim = 100.0 + 20 * bits + rows / 8
            records.append({
                "key": f"k{bits}-{rows}", "status": "ok",
                "overrides": {"hardware.macro.adc_bits": bits, "hardware.macro.rows": rows},
                "result": {
                    "energy": {"cim": {"per_token_pj": cim,
                                       "breakdown": {"adc": 5.0 * bits, "array": 60.0,
                                                     "buffer": 40.0 + rows / 8}},
                               "conventional": {"per_token_pj": 900.0,
                                                "breakdown": {"dram": 700.0, "mac": 200.0}}},
                    "accuracy": {"top1_agreement": 1 - 0.5 ** bits, "kl_mean": 0.1 / bits}}})
    records.append({"key": "bad", "status": "error", "overrides": {}, "error": "x"})
    return records


def assert_image(path, fmt):
    data = open(path, "rb").read()
    assert len(data) > 1000
    if fmt == "png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert b"<svg" in data[:2000]


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_figures_are_written(tmp_path, fmt):
    records = synthetic_records()
    assert_image(plot.pareto(records, tmp_path / f"p.{fmt}"), fmt)
    assert_image(plot.accuracy_vs_adc(records, tmp_path / f"a.{fmt}"), fmt)
    assert_image(plot.energy_breakdown(records[0]["result"], tmp_path / f"e.{fmt}"), fmt)
    placement = {"macros": [{"utilisation": (i % 7) / 6} for i in range(30)]}
    assert_image(plot.utilisation_map(placement, tmp_path / f"u.{fmt}"), fmt)


def test_plot_errors_are_kvcim_errors(tmp_path):
    with pytest.raises(kvcim.Error, match="adc_bits"):
        plot.accuracy_vs_adc([{"status": "ok", "overrides": {"x": 1}, "result": {}}],
                             tmp_path / "a.png")
    with pytest.raises(kvcim.Error, match=r"\.png or \.svg"):
        plot.pareto(synthetic_records(), tmp_path / "p.jpg")


def test_plot_command_writes_every_figure_of_a_sweep(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in synthetic_records()))
    out = tmp_path / "figs"
    proc = subprocess.run([PYTHON, "-m", "kvcim.plot", str(results), "--out", str(out)],
                          env=child_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    written = proc.stdout.split()
    assert {p.rsplit("/", 1)[-1] for p in written} == {
        "pareto.png", "accuracy_vs_adc.png", "energy_breakdown.png"}
    for p in written:
        assert_image(p, "png")
    bad = subprocess.run([PYTHON, "-m", "kvcim.plot", str(tmp_path / "none.jsonl"), "--out",
                          str(out)], env=child_env(), capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


BAD_RESULTS = [
    ("r.json", b'{"a":', "json = invalid"),
    ("r.json", b"\xff\xfe\x00garbage", "json = invalid"),
    ("r.json", b"[1, 2]", "json = list: expected an object"),
    ("r.json", b'{"a": 1}', "figures = none: nothing to plot"),
    ("r.jsonl", b"", "records = 0"),
    ("r.jsonl", b'{"status": "ok"}\n{"x"', "records = 0"),
    ("d.json", None, "file = missing"),
]


@pytest.mark.parametrize("name,data,message", BAD_RESULTS)
def test_bad_results_file_is_one_line_and_exit_code_2(tmp_path, name, data, message):
    src = tmp_path / name
    if data is None:
        src.mkdir()
    else:
        src.write_bytes(data)
    out = tmp_path / "figs"
    proc = subprocess.run([PYTHON, "-m", "kvcim.plot", str(src), "--out", str(out)],
                          env=child_env(), capture_output=True, text=True, timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"kvcim.plot: {src}: ") and message in lines[0], lines[0]
    assert not out.exists() or not any(out.iterdir())
