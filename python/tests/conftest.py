"""Shared fixtures of the kvcim Python tests: where the sources, golden data and interpreter are.

CTest sets PYTHONPATH to <build>/python and KVCIM_SOURCE_DIR / KVCIM_PYTHON; run by hand with
  PYTHONPATH=build/python /usr/bin/python3 -m pytest -q python/tests
"""
import os
import pathlib
import sys

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("KVCIM_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))
GOLDEN = SOURCE_DIR / "testdata" / "golden"
TESTS_DIR = pathlib.Path(__file__).resolve().parent
PYTHON = os.environ.get("KVCIM_PYTHON", sys.executable)


def kvcim_exe():
    """The kvcim command beside the build's package (or $KVCIM_EXE)."""
    exe = os.environ.get("KVCIM_EXE")
    if exe:
        return pathlib.Path(exe)
    import kvcim
    return pathlib.Path(kvcim.__file__).resolve().parents[2] / "kvcim"


def child_env():
    """Environment for child processes (sweep CLI, Dask workers): kvcim and the test helpers
    importable, plots headless."""
    env = dict(os.environ)
    import kvcim  # the build's package: its parent folder is what PYTHONPATH must hold
    package_parent = str(pathlib.Path(kvcim.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([package_parent, str(TESTS_DIR)])
    env["MPLBACKEND"] = "Agg"
    return env


def slow_sweep(tmp_path, n, sleep_s):
    """A sweep spec of n points of sweep_helpers:slow_square, each sleeping sleep_s and logging its
    start: (the spec file, its results file, the log)."""
    out, log, spec = tmp_path / "r.jsonl", tmp_path / "starts.log", tmp_path / "spec.yaml"
    spec.write_text(f"evaluate: sweep_helpers:slow_square\nrun:\n  sleep_s: {sleep_s}\n  log: {log}\n"
                    f"grid:\n  run.x: {list(range(n))}\n")
    return spec, out, log


@pytest.fixture(scope="session")
def golden():
    return GOLDEN


@pytest.fixture(scope="session")
def model():
    import kvcim
    return kvcim.Model.load()


@pytest.fixture(scope="session")
def tokenizer():
    import kvcim
    return kvcim.Tokenizer.load()
