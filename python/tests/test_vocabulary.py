"""One vocabulary: library errors name the field the caller set (the CLI alone names its options),
one key table drives a policy's text and dict forms, and a spec's sections are typed values read
from their own serialisers."""
import json
import pathlib
import subprocess

import pytest

import kvcim
from test_defaults import kvcim_exe


def cli_error(*args):
    out = subprocess.run([str(kvcim_exe()), *args], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0].removeprefix("kvcim: ")


def py_error(call):
    with pytest.raises(kvcim.Error) as e:
        call()
    return str(e.value)


# (CLI arguments, the Python call, the option the CLI names, where the library says it happened)
CASES = [
    (("run", "--quiet", "--eval-text", "", "--steps", "0"),
     lambda: kvcim.run(steps=0, eval_text_path=""), "--steps", "run"),
    (("run", "--quiet", "--steps", "8", "--eval-tokens", "0"),
     lambda: kvcim.run(steps=8, eval_tokens=0), "--eval-tokens", "run"),
    (("run", "--quiet", "--eval-text", "", "--steps", "8", "--policy", "window=64,sinks=64"),
     lambda: kvcim.run(steps=8, eval_text_path="", policy="window=64,sinks=64"), "--policy", "policy"),
    (("run", "--quiet", "--eval-text", "", "--steps", "8", "--node", "2"),
     lambda: kvcim.run(steps=8, eval_text_path="", node=2), "--node", "run"),
    (("run", "--quiet", "--eval-text", "", "--steps", "8", "--area-mm2", "-3"),
     lambda: kvcim.run(steps=8, eval_text_path="", area_mm2=-3), "--area-mm2", "run"),
    (("run", "--quiet", "--eval-text", "", "--steps", "8", "--area-mm2", "0.00001"),
     lambda: kvcim.run(steps=8, eval_text_path="", area_mm2=0.00001), "--area-mm2", "run"),
    (("map", "--context", "-1"), lambda: kvcim.map(context=-1), "--context", "map"),
    (("map", "--policy", "overflw=spill"), lambda: kvcim.map(policy="overflw=spill"), "--policy", "policy"),
    (("map", "--policy", "page=7,overflow=spill"), lambda: kvcim.map(policy={"page": 7, "overflow": "spill"}),
     "--policy", "policy"),
    # (cosim needs the Verilated tile: a build without the RTL has no `kvcim cosim` command)
    pytest.param(("cosim", "--trials", "0"), lambda: kvcim.cosim(trials=0), "--trials", "cosim",
                 marks=pytest.mark.skipif(not kvcim.HAVE_RTL, reason="a build without the RTL")),
    pytest.param(("cosim", "--backpressure", "1"), lambda: kvcim.cosim(backpressure=1.0), "--backpressure",
                 "cosim", marks=pytest.mark.skipif(not kvcim.HAVE_RTL, reason="a build without the RTL")),
]


def case_id(case):
    args = case.values[0] if hasattr(case, "values") else case[0]
    return " ".join(args[:1] + args[-2:])


@pytest.mark.parametrize("args,call,option,where", CASES, ids=[case_id(c) for c in CASES])
def test_the_cli_and_python_say_the_same_error_each_in_its_own_names(args, call, option, where):
    from_cli, from_python = cli_error(*args), py_error(call)
    assert from_cli.startswith(option + ": "), from_cli
    assert from_python.startswith(where + ": "), from_python
    # the same field, value and reason; only the name of where it was set differs
    assert from_cli.removeprefix(option + ": ") == from_python.removeprefix(where + ": ")
    assert "--" not in from_python


def test_policy_text_and_dict_are_one_vocabulary():
    text = kvcim.Policy.parse("window=256,sinks=4,page=32,gqa_sharing=off,evict=h2o")
    by_name = kvcim.Policy.from_dict({"window_tokens": 256, "sink_tokens": 4, "tokens_per_page": 32,
                                      "gqa_sharing": False, "evict": "h2o"})
    by_alias = kvcim.Policy.from_dict({"window": 256, "sinks": 4, "page": 32, "gqa_sharing": "off",
                                       "evict": "h2o"})
    assert text.to_dict() == by_name.to_dict() == by_alias.to_dict()
    assert str(text) == str(by_name) == str(by_alias)
    d = text.to_dict()
    assert d["tokens_per_page"] == 32 and d["window_tokens"] == 256 and d["kv_fraction"] == "auto"
    assert kvcim.Policy.parse("window=fit").to_dict() == kvcim.Policy.parse(str(kvcim.Policy.parse("window=fit"))).to_dict()
    # a dict's error is the text's, naming the field as the text writes it
    assert py_error(lambda: kvcim.Policy.from_dict({"tokens_per_page": "x"})) == \
        py_error(lambda: kvcim.Policy.parse("page=x"))
    with pytest.raises(kvcim.Error, match="replicas = 0"):
        kvcim.Policy.from_dict({"replicas": 0})
    p = kvcim.Policy()
    p.overflow = "spill"
    assert str(p).startswith("overflow=spill")
    with pytest.raises(kvcim.Error, match="did you mean 'window'"):
        p.overflow = "windw"
    assert p.overflow == "spill"  # a rejected value leaves the policy as it was


def test_spec_sections_are_typed_values_and_read_back():
    hw = kvcim.HardwareSpec.default()
    d = hw.to_dict()
    assert isinstance(hw.kv, kvcim.KvSpec) and isinstance(hw.organization, kvcim.Organization)
    assert hw.kv.tokens_per_tile == d["kv"]["tokens_per_tile"] == hw.kv["tokens_per_tile"]
    assert hw.kv.kind == "digital" and hw.kv.softmax == d["kv"]["softmax"]
    assert hw.organization.macros == d["organization"]["macros"] and hw.organization.tiles * 8 >= hw.organization.macros
    assert hw.precision == d["precision"] and hw.precision.kv_bits == d["precision"]["kv_bits"]
    assert dict(hw.precision) == d["precision"] and set(hw.kv) == set(d["kv"]) | {"k_bits", "v_bits"}
    assert hw.kv.technology == d["kv"]["technology"] == hw.technology  # the chip's table, by default
    assert hw.baseline.mac == d["baseline"]["mac"] and hw.baseline.sram == d["baseline"]["sram"]
    assert hw.comparison.node_nm == d["comparison"]["node_nm"]
    with pytest.raises(KeyError):
        hw.kv["no_such_field"]
    # a dict is read as the tree it is; every field survives
    assert kvcim.HardwareSpec.from_dict(json.loads(json.dumps(d))).to_dict() == d


def test_reports_record_the_whole_spec(tmp_path):
    hw = kvcim.HardwareSpec.default()
    placed = kvcim.map(spec=hw, context=16).to_dict()
    # the chip as built: the spec, with only the macros the work needs (never more than the spec's)
    built = placed["hardware"]["full"]
    assert built["organization"]["macros"] == placed["macros_total"] < hw.organization["macros"]
    assert dict(built, organization=hw.to_dict()["organization"]) == hw.to_dict()
    assert kvcim.HardwareSpec.from_dict(built).to_dict() == built
    report = kvcim.run(steps=8, eval_text_path="").to_dict()
    assert dict(report["spec"]["full"], organization=hw.to_dict()["organization"]) == hw.to_dict()
    assert report["spec"]["precision"] == placed["hardware"]["precision"] == hw.to_dict()["precision"]


def leaves(d, prefix=""):
    """Every leaf of a nested dict by its dotted path."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(leaves(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def test_one_figure_has_one_key_in_every_output():
    """Placement.figures, Placement.to_dict() (kvcim map --json) and a run report's mapping key each
    figure alike; the mapping holds nothing else but the page placed and the macro map."""
    placement = kvcim.map(context=16)
    figures = leaves(placement.figures)
    placed = leaves(placement.to_dict())
    assert all(placed[k] == v for k, v in figures.items())
    assert "energy_per_token_pj.cim" in figures and "weights.onchip_fraction" in figures
    mapping = kvcim.run(steps=8, eval_text_path="").mapping
    # the placement's own sections: the run report has its comparison at the top and its band
    # under energy (one key each, tested there)
    placement_only = ("comparison.", "energy_band_cim_per_token.", "baseline_machine.")
    figure_keys = {k for k in figures if not k.startswith(placement_only)} - {"context", "energy_per_token_pj.conventional_iso_area"}
    assert figure_keys <= set(leaves(mapping)), figure_keys - set(leaves(mapping))
    extra = set(leaves({k: v for k, v in mapping.items() if k != "macro_map"})) - figure_keys
    assert extra == {"kv.tokens_per_page"}, extra
