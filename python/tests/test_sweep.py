"""Sweeps: grid expansion and keys, spec validation, failing and crashing points, and a sweep killed
mid-way and resumed with no point lost or repeated."""
import collections
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import kvcim
from kvcim import grid, results
from conftest import PYTHON, SOURCE_DIR, child_env, slow_sweep

SLOW = "sweep_helpers:slow_square"


def keys_in(path):
    return [r["key"] for r in results.read_records(path)]


def write_hardware(tmp_path, rows=256):
    """An analog hardware spec in tmp_path (technology and macro paths pointing at the shipped ones)."""
    text = (SOURCE_DIR / "configs" / "hw" / "sram_analog.yaml").read_text()
    text = text.replace("../tech/", str(SOURCE_DIR / "configs" / "tech") + "/")
    text = text.replace("../macros/", str(SOURCE_DIR / "configs" / "macros") + "/")
    text = text.replace("  rows: 256\n", f"  rows: {rows}\n", 1)
    # the shipped spec sums all its rows per conversion; a smaller macro sums all of its own
    text = text.replace("  rows_per_cycle: 256 ", f"  rows_per_cycle: {rows} ", 1)
    hw = tmp_path / "hw.yaml"
    hw.write_text(text)
    return hw


def test_grid_points_are_the_product_with_stable_keys(tmp_path):
    hw = write_hardware(tmp_path)
    spec = {"evaluate": "map", "hardware": str(hw),
            "grid": {"macro.adc_bits": [4, 6, 8], "hardware.kv.tokens_per_tile": [32, 64],
                     "policy": ["overflow=fail", "overflow=spill"]},
            "points": [{"macro.rows": 128, "macro.rows_per_cycle": 128}]}
    points = grid.SweepSpec.from_dict(spec).points()
    assert len(points) == 3 * 2 * 2 + 1
    assert len({p.key for p in points}) == len(points)
    # The grid's values are written into the point document, and nothing else changes.
    p = points[5]  # adc 6, tokens 32, spill (last path varies fastest)
    assert p.overrides == {"hardware.macro.adc_bits": 6, "hardware.kv.tokens_per_tile": 32,
                           "policy": "overflow=spill"}
    base = kvcim.HardwareSpec.from_yaml(hw).to_dict()
    expected = json.loads(json.dumps(base))
    expected["macro"]["adc_bits"] = 6
    expected["kv"]["tokens_per_tile"] = 32
    assert p.document["hardware"] == expected
    assert p.document["policy"] == "overflow=spill"
    assert points[-1].document["hardware"]["macro"]["rows"] == 128
    assert points[-1].document["hardware"]["macro"]["adc_bits"] == 8
    # Keys are a function of the point only: the same spec gives the same keys, and a changed
    # base gives new keys (old results are not reused for a different machine), except for the
    # extra point that sets the changed field itself: its document, hence its key, is the same.
    assert [q.key for q in grid.SweepSpec.from_dict(spec).points()] == [q.key for q in points]
    write_hardware(tmp_path, rows=128)
    changed = grid.SweepSpec.from_dict(spec).points()
    assert not {q.key for q in changed[:-1]} & {q.key for q in points}
    assert changed[-1].key == points[-1].key


def test_misspelt_hardware_path_is_a_spec_error(tmp_path):
    hw = write_hardware(tmp_path)
    with pytest.raises(grid.SpecError, match="adc_bit.*known: .*adc_bits"):
        grid.SweepSpec.from_dict({"evaluate": "map", "hardware": str(hw),
                                  "grid": {"macro.adc_bit": [4]}})
    with pytest.raises(kvcim.Error, match="hardware"):
        grid.SweepSpec.from_dict({"evaluate": "map", "hardware": {"name": "x"}})


BAD_SPECS = [
    ("- 1\n- 2\n", "spec"),
    ("evaluate: map\ngrid: {}\n", "hardware"),
    ("evaluate: perplexity\ngrid:\n  run.x: 3\n", "grid.run.x"),
    ("evaluate: perplexity\ngrid:\n  run.x: []\n", "grid.run.x"),
    ("evaluate: simulate\n", "evaluate"),
    ("evaluate: perplexity\ngird:\n  run.x: [1]\n", "gird = {\"run.x\": [1]}: unknown field; did you mean 'grid'?"),
    ("evaluate: perplexity\nrun:\n  max_token: 3\n", "run.max_token = 3: unknown option of evaluate: perplexity; did you mean 'max_tokens'?"),
    ("evaluate: perplexity\ngrid:\n  run.max_token: [3]\n", "did you mean 'max_tokens'?"),
    ("evaluate: m:f\ngrid:\n" + "".join(f"  run.{k}: {list(range(101))}\n" for k in "abc"),
     "grid = '1030301 points': expected at most 1000000 points"),
    ("evaluate: map\nhardware: nowhere.yaml\n", "hardware"),
    ("evaluate: perplexity\ngrid: {run.x: [1, 2]\n", "yaml"),
    ("evaluate: perplexity\nmax_attempts: 0\n", "max_attempts"),
    ("evaluate: perplexity\ngrid:\n  macro.rows: [1]\n", "grid.macro.rows"),
]


@pytest.mark.parametrize("text,field", BAD_SPECS)
def test_bad_spec_is_one_line_and_exit_code_2(tmp_path, text, field):
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    out = tmp_path / "r.jsonl"
    proc = subprocess.run([PYTHON, "-m", "kvcim.sweep", str(spec), "--out", str(out)],
                          env=child_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("kvcim.sweep: ") and str(spec) in lines[0]
    assert field in lines[0], lines[0]
    assert not out.exists() or out.read_text() == ""


def test_failing_point_is_recorded_and_the_sweep_goes_on(tmp_path):
    out = tmp_path / "r.jsonl"
    spec = {"evaluate": SLOW, "run": {"fail_on": 2}, "grid": {"run.x": [0, 1, 2, 3, 4]}}
    first = kvcim.sweep(spec, out, workers=2, progress=False)
    assert (first.total, first.ok, first.errors, first.evaluated) == (5, 4, 1, 5)
    by_x = {r["overrides"]["run.x"]: r for r in results.load(out)}
    assert by_x[2]["status"] == "error" and by_x[2]["error_type"] == "ValueError"
    assert "fails on purpose" in by_x[2]["error"]
    assert all(by_x[x]["result"]["square"] == x * x for x in (0, 1, 3, 4))
    # Running again evaluates nothing; retry_errors re-evaluates only the failed point.
    again = kvcim.sweep(spec, out, workers=2, progress=False)
    assert (again.skipped, again.evaluated) == (5, 0)
    retried = kvcim.sweep(spec, out, workers=2, progress=False, retry_errors=True)
    assert (retried.skipped, retried.evaluated, retried.errors) == (4, 1, 1)
    assert len(keys_in(out)) == 6


def test_a_point_that_kills_its_worker_is_recorded_and_the_others_complete(tmp_path):
    out = tmp_path / "r.jsonl"
    log = tmp_path / "starts.log"
    spec = {"evaluate": SLOW, "run": {"crash_on": 3, "sleep_s": 0.05, "log": str(log)},
            "grid": {"run.x": list(range(8))}}
    r = kvcim.sweep(spec, out, workers=2, progress=False)
    assert (r.total, r.ok, r.errors, r.missing) == (8, 7, 1, 0)
    records = results.load(out)
    assert len(keys_in(out)) == 8  # each point written exactly once
    crashed = [rec for rec in records if rec["status"] == "error"]
    assert crashed[0]["overrides"] == {"run.x": 3}
    assert crashed[0]["error_type"] == "WorkerDied" and crashed[0]["attempts"] == 2


def test_python_api_rejects_bad_arguments(tmp_path):
    with pytest.raises(kvcim.Error, match="workers"):
        kvcim.sweep({"evaluate": SLOW, "grid": {"run.x": [1]}}, tmp_path / "r.jsonl", workers=0)
    with pytest.raises(kvcim.Error, match="evaluate"):
        kvcim.sweep({"evaluate": 3}, tmp_path / "r.jsonl")


def test_partial_last_line_is_cut_before_appending(tmp_path):
    out = tmp_path / "r.jsonl"
    spec = {"evaluate": SLOW, "grid": {"run.x": [0, 1, 2]}}
    kvcim.sweep(spec, out, workers=1, progress=False)
    whole = out.read_bytes()
    # A machine crash in the middle of a write leaves a fragment of a line.
    out.write_bytes(whole + b'{"key": "abc", "stat')
    spec["grid"]["run.x"].append(3)
    r = kvcim.sweep(spec, out, workers=1, progress=False)
    assert (r.skipped, r.evaluated, r.ok) == (3, 1, 4)
    lines = out.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert all(json.loads(line) for line in lines[:-1])  # every line whole JSON
    assert out.read_bytes().startswith(whole)


def test_two_sweeps_cannot_write_one_file(tmp_path):
    out = tmp_path / "r.jsonl"
    with results.ResultWriter(out):
        with pytest.raises(kvcim.Error, match="another sweep"):
            kvcim.sweep({"evaluate": SLOW, "grid": {"run.x": [1]}}, out, progress=False)


def test_killed_sweep_resumes_with_no_point_lost_or_repeated(tmp_path):
    n = 24
    spec, out, log = slow_sweep(tmp_path, n, 0.25)
    cmd = [PYTHON, "-m", "kvcim.sweep", str(spec), "--out", str(out), "--workers", "2"]
    # Own session, so that the kill takes the driver and its pool workers at once, like a
    # killed job.
    proc = subprocess.Popen(cmd, env=child_env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(keys_in(out)) < 6 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    before = keys_in(out)
    assert 6 <= len(before) < n, "the sweep must be killed part-way"
    assert len(set(before)) == len(before)

    resumed = subprocess.run(cmd, env=child_env(), capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(before)} done before" in resumed.stderr
    assert f"{n}/{n} 100%" in resumed.stderr  # the progress bar reached the end
    after = keys_in(out)
    counts = collections.Counter(after)
    assert len(counts) == n and max(counts.values()) == 1, "a point lost or repeated"
    assert after[:len(before)] == before  # the first run's lines are kept as they were
    assert sorted(r["result"]["x"] for r in results.load(out)) == list(range(n))
    # The points recorded before the kill were not evaluated again.
    starts = collections.Counter(int(line.split()[0]) for line in log.read_text().split("\n")
                                 if line)
    done_first = {r["result"]["x"] for r in results.read_records(out)[:len(before)]}
    assert all(starts[x] == 1 for x in done_first)


def test_ctrl_c_stops_the_sweep_and_its_workers(tmp_path):
    import psutil
    out = tmp_path / "r.jsonl"
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"evaluate: {SLOW}\nrun:\n  sleep_s: 1.0\ngrid:\n  run.x: {list(range(20))}\n")
    proc = subprocess.Popen([PYTHON, "-m", "kvcim.sweep", str(spec), "--out", str(out),
                             "--workers", "2"], env=child_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(keys_in(out)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    children = psutil.Process(proc.pid).children(recursive=True)
    assert children, "the pool's worker processes"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "interrupted" in stderr and "again to continue" in stderr
    gone, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, "worker processes left behind"
    assert 2 <= len(keys_in(out)) < 20


def test_unusable_results_path_is_one_line_and_exit_code_2(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"evaluate: {SLOW}\ngrid:\n  run.x: [1, 2]\n")
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    proc = subprocess.run([PYTHON, "-m", "kvcim.sweep", str(spec), "--out",
                           str(blocker / "r.jsonl")], env=child_env(), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "r.jsonl" in lines[0] and "results file" in lines[0]
    listed = subprocess.run([PYTHON, "-m", "kvcim.sweep", str(spec), "--out", "unused",
                             "--list"], env=child_env(), capture_output=True, text=True,
                            timeout=60)
    assert listed.returncode == 0
    assert [json.loads(line.split(" ", 1)[1]) for line in listed.stdout.splitlines()] == [
        {"run.x": 1}, {"run.x": 2}]
