"""The spec's field tables from Python, generated per field from kvcim._core.spec_field_tables():
for every field of every section of a hardware spec (HardwareSpec, its top level `spec` among
them) and of a macro file (MacroFile: its macro and published sections), a randomly drawn legal
value (a path: a shipped file drawn from the row's files) survives dict -> struct -> attribute ->
to_dict; a value out of range or of the wrong type, a missing file, or a field that does not
apply to the section's kind, is refused with a kvcim.Error naming the key. And
docs/hardware_fields.md is what kvcim._fieldsdoc makes of the tables (a stale page fails)."""
import pytest

import kvcim
from kvcim import _core
from kvcim._fieldsdoc import markdown
from conftest import SOURCE_DIR
from spec_field_checks import check_row

SECTIONS = ["spec", "macro", "organization", "kv", "precision", "baseline", "comparison", "buffer", "offchip", "digital", "die", "link"]
SPECS = sorted((SOURCE_DIR / "configs" / "hw").glob("*.yaml"))
MACRO_SECTIONS = ["macro", "published"]  # of a macro file (configs/macros), tables "macro_file.<section>"
MACROS = sorted((SOURCE_DIR / "configs" / "macros").glob("*.yaml"))
TABLES = _core.spec_field_tables()


@pytest.fixture(scope="module")
def specs():
    return [kvcim.HardwareSpec.from_yaml(p) for p in SPECS]


@pytest.fixture(scope="module")
def macro_files():
    return [_core.MacroFile.from_yaml(p) for p in MACROS]


def cases():
    return [(s, row["key"]) for s in SECTIONS for row in TABLES[s] if row["in_file"]]


def macro_cases():
    return [(s, row["key"]) for s in MACRO_SECTIONS for row in TABLES[f"macro_file.{s}"] if row["in_file"]]


@pytest.mark.parametrize("section,key", cases())
def test_every_field_round_trips_and_refuses_bad_values(specs, section, key):
    row = next(r for r in TABLES[section] if r["key"] == key)
    if section == "spec":  # the top level
        check_row(kvcim.HardwareSpec, specs, "", row, at=lambda tree: tree, part=lambda doc: doc)
    else:
        check_row(kvcim.HardwareSpec, specs, section, row)


@pytest.mark.parametrize("section,key", macro_cases())
def test_every_macro_file_field_round_trips_and_refuses_bad_values(macro_files, section, key):
    row = next(r for r in TABLES[f"macro_file.{section}"] if r["key"] == key)
    check_row(_core.MacroFile, macro_files, section, row)


def test_every_table_row_is_a_python_attribute():
    classes = {"spec": _core.HardwareSpec, "macro": _core.MacroSpec, "organization": _core.Organization, "kv": _core.KvSpec,
               "precision": _core.Precision, "baseline": _core.BaselineConfig,
               "comparison": _core.NodePoint, "buffer": _core.BufferSpec, "offchip": _core.OffchipSpec,
               "digital": _core.DigitalSpec, "die": _core.DieSpec, "link": _core.LinkSpec, "tile": _core.TileParams,
               "macro_file.macro": _core.MacroDesc, "macro_file.published": _core.Published}
    for section, cls in classes.items():
        for row in TABLES[section]:
            assert isinstance(vars(cls).get(row["key"]), property), f"{cls.__name__}.{row['key']}"
            assert row["doc"] in (vars(cls)[row["key"]].__doc__ or ""), f"{cls.__name__}.{row['key']}"


def test_a_macro_file_reads_as_its_paper_describes_it():
    f = kvcim.load_macro(SOURCE_DIR / "configs" / "macros" / "jia_jssc20.yaml")
    assert (f.name, f.macro.rows, f.macro.cell, f.macro.readout) == ("jia_jssc20_0v85", 768, "sram", "sar")
    assert f.macro.cells_per_weight == 1  # derived: ceil(weight_bits / cell_bits)
    assert f.macro.array_vdd_v == f.macro.vdd_v  # derived: the logic supply
    assert f.macro["products_per_conversion"] == 2304 and dict(f.macro)["clock_mhz"] == 0.7407
    assert (f.published.role, f.published.tops_per_w, f.published.area_mm2) == ("fit", 400, None)
    assert f.published.breakdown == {"array+input": 0.8442, "readout": 0.1558}
    assert f.published.excludes == ["digital"]
    d = f.to_dict()
    assert "cell_area_f2" in d["macro"] and "area_mm2" not in d["published"]
    assert kvcim.MacroFile.from_dict(d).to_dict() == d
    d["published"]["breakdown"] = {"array": 0.9, "readout": 0.2}
    with pytest.raises(kvcim.Error, match=r"published\.breakdown\.array = .*sum to at most 1"):
        kvcim.MacroFile.from_dict(d)


def test_the_docs_page_is_made_from_the_tables():
    page = SOURCE_DIR / "docs" / "hardware_fields.md"
    assert page.read_text() == markdown(TABLES), (
        "docs/hardware_fields.md is stale: PYTHONPATH=build/python /usr/bin/python3 -m kvcim._fieldsdoc "
        "> docs/hardware_fields.md")
