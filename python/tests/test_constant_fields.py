"""The macro model's constants from Python (kvcim.load_macro_model, MacroModel), generated per field
from their tables (kvcim._core.spec_field_tables()["macro_model.constants"] and ["macro_model"]):
a randomly drawn value of every constant inside its plausible range, given with its source, and of
each held-out error survives dict -> struct -> attribute -> to_dict; a value out of range, of the
wrong type or without its source is refused with a kvcim.Error naming the key. And the shipped
file reads as `kvcim macro --json` reports it."""
import json
import os
import subprocess

import pytest

import kvcim
from kvcim import _core
from conftest import SOURCE_DIR
from spec_field_checks import check_row

TABLES = _core.spec_field_tables()
PATH = SOURCE_DIR / "configs" / "macro_model.yaml"


@pytest.fixture(scope="module")
def model():
    return [kvcim.load_macro_model(PATH)]


@pytest.mark.parametrize("key", [row["key"] for row in TABLES["macro_model.constants"]])
def test_every_constant_round_trips_with_its_source_and_refuses_bad_values(model, key):
    row = next(r for r in TABLES["macro_model.constants"] if r["key"] == key)
    assert row["sourced"] and row["required"]
    check_row(kvcim.MacroModel, model, "constants", row)


@pytest.mark.parametrize("key", [row["key"] for row in TABLES["macro_model"]])
def test_every_held_out_error_round_trips_and_refuses_bad_values(model, key):
    row = next(r for r in TABLES["macro_model"] if r["key"] == key)
    check_row(kvcim.MacroModel, model, "", row, at=lambda tree: tree, part=lambda m: m)


def test_the_shipped_constants_are_what_kvcim_macro_reports(model, tmp_path):
    m = model[0]
    out = tmp_path / "m.json"
    subprocess.run([os.environ.get("KVCIM_EXE", "build/kvcim"), "macro", "--hw",
                    str(SOURCE_DIR / "configs" / "macros" / "jia_jssc20.yaml"), "--json", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    reported = json.loads(out.read_text())["uncertainty"]
    assert reported["held_out_median_abs_error"] == m.held_out_median_error
    assert [c["name"] for c in reported["constants"]] == [r["key"] for r in TABLES["macro_model.constants"]]
    for c in reported["constants"]:
        assert getattr(m.constants, c["name"]) == c["value"]
        assert m.constants.provenance[c["name"]] == "source: " + c["source"]
        assert (c["name"] in m.constants.fitted) == c["fitted"]
    d = m.to_dict()
    assert d["constants"]["c_wl_ff"] == {"value": 0.3, "source": m.constants.provenance["c_wl_ff"][len("source: "):]}
    assert kvcim.MacroModel.from_dict(d).to_dict() == d
    del d["constants"]["k_tdc_ff"]
    with pytest.raises(kvcim.Error, match=r"constants\.k_tdc_ff = \(empty\): required field is missing"):
        kvcim.MacroModel.from_dict(d)


def test_every_row_is_an_attribute_with_its_doc():
    for table, cls in (("macro_model.constants", kvcim.MacroConstants), ("macro_model", kvcim.MacroModel)):
        for row in TABLES[table]:
            prop = vars(cls).get(row["key"])
            assert isinstance(prop, property) and row["doc"] in (prop.__doc__ or ""), row["key"]
