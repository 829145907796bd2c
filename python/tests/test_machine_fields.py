"""A machine file's field table from Python (configs/machines/*.yaml, kvcim.Machine), per field
from kvcim._core.spec_field_tables()["machine"] with the checks of test_spec_fields: a randomly
drawn legal value survives dict -> Machine -> attribute -> to_dict; a value out of range or of the
wrong type is refused with a kvcim.Error naming the field. And the file form: load_machine,
from_yaml, from_dict and to_dict agree, provenance included."""
import copy

import pytest

import kvcim
from kvcim import _core
from conftest import SOURCE_DIR
from spec_field_checks import check_row
from test_spec_fields import TABLES

MACHINES = sorted((SOURCE_DIR / "configs" / "machines").glob("*.yaml"))


@pytest.fixture(scope="module")
def machines():
    return [kvcim.load_machine(p) for p in MACHINES]


@pytest.mark.parametrize("key", [row["key"] for row in TABLES["machine"]])
def test_every_machine_field_round_trips_and_refuses_bad_values(machines, key):
    row = next(r for r in TABLES["machine"] if r["key"] == key)
    assert row["sourced"]  # every field {value: V, source: "..."} (or assumption:)
    check_row(kvcim.Machine, machines, "", row, at=lambda tree: tree, part=lambda doc: doc)


def test_every_machine_row_is_an_attribute_with_its_doc():
    for row in TABLES["machine"]:
        prop = vars(_core.Machine).get(row["key"])
        assert isinstance(prop, property) and row["doc"] in (prop.__doc__ or ""), row["key"]


def test_a_machine_file_reads_with_its_provenance():
    path = SOURCE_DIR / "configs" / "machines" / "h100-sxm.yaml"
    m = kvcim.load_machine(path)
    assert (m.name, m.hbm_bandwidth_gb_s, m.tdp_w, m.source) == ("h100-sxm", 3352, 700, str(path))
    assert m.provenance["hbm_bandwidth_gb_s"].startswith("source: [M11]")
    assert m.provenance["idle_power_w"].startswith("source: nvidia-smi")
    assert m.provenance["active_power_w"].startswith("assumption: ")
    assert len(m.provenance) == len(TABLES["machine"])
    d = m.to_dict()
    assert d["tdp_w"]["value"] == 700 and d["tdp_w"]["source"].startswith("700 W")
    assert kvcim.Machine.from_yaml(path).to_dict() == d
    again = kvcim.Machine.from_dict(d)
    assert again.to_dict() == d and again.source == "<dict>" and again.provenance == m.provenance
    bad = copy.deepcopy(d)
    del bad["tdp_w"]["source"]
    with pytest.raises(kvcim.Error, match=r"tdp_w\.value = '700\.0': give exactly one of source"):
        kvcim.Machine.from_dict(bad)
    bad = copy.deepcopy(d)
    bad["idle_power_w"]["value"] = 650
    with pytest.raises(kvcim.Error, match=r"active_power_w .*must stay below tdp_w"):
        kvcim.Machine.from_dict(bad)
    with pytest.raises(kvcim.Error, match=r"cannot open the machine file"):
        kvcim.load_machine(SOURCE_DIR / "configs" / "machines" / "no_such_machine.yaml")
