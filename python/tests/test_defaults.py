"""One set of defaults: kvcim.run() and `kvcim run` with no options give the same report (the
settings recorded in it included); kvcim.map() and `kvcim map`, kvcim.cosim() and `kvcim cosim`
start from the same values. A quantity that was not computed is None / null, never 0. The
sampler option is top_p everywhere; topp is still accepted with a deprecation note."""
import inspect
import json
import os
import pathlib
import re
import subprocess

import pytest

import kvcim
from kvcim import _core
from conftest import kvcim_exe


def cli(*args, check=True):
    return subprocess.run([str(kvcim_exe()), *args], capture_output=True, text=True, timeout=300,
                          check=check)


def help_defaults(command):
    """option -> default as `kvcim <command> --help` prints it ("--steps INT=64")."""
    text = cli(command, "--help").stdout
    found = {}
    for m in re.finditer(r"^  (--[a-z-]+) [A-Z]+(?::[^=\n]*)?=(.*?)(?:\s{2,}|\n)", text, re.M):
        found[m.group(1)] = m.group(2).strip()
    return found


def test_run_defaults_are_the_commands():
    cmd = help_defaults("run")
    sig = inspect.signature(kvcim.run).parameters
    assert cmd["--prompt"] == sig["prompt"].default
    assert int(cmd["--steps"]) == sig["steps"].default
    assert int(cmd["--seed"]) == sig["seed"].default
    assert float(cmd["--temperature"]) == sig["temperature"].default
    assert float(cmd["--top-p"]) == sig["top_p"].default
    assert int(cmd["--threads"]) == sig["threads"].default
    assert int(cmd["--eval-tokens"]) == sig["eval_tokens"].default
    assert cmd["--eval-text"] == _core.default_eval_text_path()
    assert cmd["--linear-backend"] == cmd["--attention-backend"] == "cim"


def test_run_with_default_settings_equals_the_command(tmp_path):
    # every option at its default but the two that cost time (the whole default run takes ~13 s
    # of CPU; test_run_defaults_are_the_commands holds those two defaults together)
    out = tmp_path / "cli.json"
    cli("run", "--quiet", "--steps", "8", "--eval-tokens", "300", "--json", str(out))
    command = json.loads(out.read_text())
    report = kvcim.run(steps=8, eval_tokens=300).to_dict()
    # the recorded settings first (a clearer message), then everything
    for key in ("options", "seeds", "inputs"):
        assert report[key] == command[key], key
    evaluation = command["accuracy"]["evaluation"]
    assert evaluation is not None and report["accuracy"]["evaluation"] == evaluation
    assert command["options"]["eval_tokens"] == 300  # (threads: not recorded, see the help test)
    assert command["options"]["top_p"] == pytest.approx(0.9)
    assert report == command


def test_python_signatures_read_the_cpp_defaults():
    d = _core.defaults()
    run = inspect.signature(kvcim.run).parameters
    for name in ("prompt", "steps", "seed", "temperature", "threads", "eval_tokens"):
        assert run[name].default == d["run"][name], name
    assert run["top_p"].default == pytest.approx(d["run"]["top_p"])
    cosim = kvcim.cosim.__doc__.splitlines()[0]
    assert f"trials: int = {d['cosim']['trials']}" in cosim
    assert f"seed: int = {d['cosim']['seed']}" in cosim
    help_text = cli("cosim", "--help", check=False).stdout if kvcim.HAVE_RTL else ""
    if help_text:
        assert str(d["cosim"]["trials"]) in help_text
        assert f"--port-episodes INT={d['cosim']['port_episodes']}" in help_text
        assert f"--backpressure FLOAT={d['cosim']['backpressure']}" in help_text
    for name in ("corners", "port_episodes", "backpressure"):  # "name: type = default" in the signature
        assert str(d["cosim"][name]) in cosim.split(f"{name}: ", 1)[1].split(",")[0], name


def test_map_with_no_options_equals_the_command_with_none(tmp_path):
    out = tmp_path / "map.json"
    cli("map", "--json", str(out))
    command = json.loads(out.read_text())
    placed = kvcim.map().to_dict()
    placed.pop("macro_map"), placed.pop("macro_map_truncated")
    assert placed == command


def test_not_computed_is_none_never_zero(tmp_path):
    out = tmp_path / "r.json"
    cli("run", "--quiet", "--steps", "6", "--eval-text", "", "--json", str(out))
    command = json.loads(out.read_text())
    report = kvcim.run(steps=6, eval_text_path="").to_dict()
    for r in (command, report):
        assert r["accuracy"]["perplexity"]["reference"] is None
        assert r["accuracy"]["perplexity"]["cim"] is None
        assert r["accuracy"]["evaluation"] is None
        assert r["options"]["eval_tokens"] is None and r["options"]["evaluation"] is False
    # weights that have no block in CIM have no utilisation: None, not 0
    hw = kvcim.HardwareSpec.default().to_dict()
    hw["organization"]["macros"] = 40
    placed = kvcim.map(spec=hw, policy="overflow=spill", context=16).to_dict()
    offchip = [m for m in placed["weights"]["matrices"] if m["onchip_blocks"] == 0]
    assert offchip and all(m["utilization"] is None for m in offchip)
    onchip = [m for m in placed["weights"]["matrices"] if m["onchip_blocks"] > 0]
    assert all(m["utilization"] > 0 for m in onchip)
    # no KV cell is ever written (KV off-chip): the lifetime is unlimited, None, not 0
    source = pathlib.Path(os.environ.get("KVCIM_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
    endurance = kvcim.map(spec=str(source / "configs" / "hw" / "weights_only.yaml")).to_dict()["endurance"]
    assert endurance["lifetime_tokens"] is None and endurance["lifetime_seconds"] is None


def test_top_p_and_the_old_topp(tmp_path, capfd):
    base = ("run", "--quiet", "--steps", "6", "--eval-text", "", "--temperature", "1")
    new = cli(*base, "--top-p", "0.5", "--json", str(tmp_path / "new.json"))
    old = cli(*base, "--topp", "0.5", "--json", str(tmp_path / "old.json"))
    assert new.stderr == ""
    assert old.stderr.splitlines() == ["kvcim: --topp is deprecated, use --top-p"]
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("new.json", "old.json"))
    assert a == b and a["options"]["top_p"] == 0.5 and "topp" not in a["options"]
    gen = cli("generate", "--prompt", "Once", "--steps", "4", "--topp", "0.5")
    assert "deprecated" in gen.stderr
    bad = cli("run", "--steps", "6", "--eval-text", "", "--top-p", "2", check=False)
    assert bad.returncode == 2 and "top_p" in bad.stderr and len(bad.stderr.splitlines()) == 1

    capfd.readouterr()
    py_new = kvcim.run(steps=6, eval_text_path="", temperature=1, top_p=0.5).to_dict()
    assert capfd.readouterr().err == ""
    py_old = kvcim.run(steps=6, eval_text_path="", temperature=1, topp=0.5).to_dict()
    assert "topp= is deprecated" in capfd.readouterr().err
    assert py_new == py_old
    assert py_new["tokens"] == a["tokens"]
