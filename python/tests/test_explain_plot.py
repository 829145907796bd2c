"""`python3 -m kvcim.plot explain.json --out DIR` draws the three explain figures from a real
`kvcim explain --json` file, as non-empty images."""
import os
import subprocess

import pytest

from conftest import PYTHON, SOURCE_DIR, child_env

# CTest sets KVCIM_EXE; by hand, the build folder of `make`
EXE = os.environ.get("KVCIM_EXE", str(SOURCE_DIR / "build" / "kvcim"))


def test_explain_plots(tmp_path):
    path = tmp_path / "explain.json"
    subprocess.run([EXE, "explain", "--steps", "10", "--json", str(path)], check=True,
                   stdout=subprocess.DEVNULL)
    out = tmp_path / "plots"
    done = subprocess.run([PYTHON, "-m", "kvcim.plot", str(path), "--out", str(out)],
                          env=child_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    names = sorted(os.listdir(out))
    assert names == ["attention_heatmap.png", "energy_per_step.png", "kv_and_traffic.png"]
    for name in names:
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name


def test_explain_figures_reject_a_file_without_energy(tmp_path):
    from kvcim import explain_plot
    from kvcim.plot import Error
    data = {"kv_notes": {"layers": [], "position": 0, "token": "x"}, "kv_cache": {}, "costs": {"steps": []}}
    with pytest.raises(Error):
        explain_plot.energy_per_step(data, tmp_path / "e.png")
    with pytest.raises(Error):
        explain_plot.attention_heatmap(data, tmp_path / "a.png")
