"""The spec's field tables from Python, generated per field from kvcim._core.spec_field_tables():
for every field of every section of a hardware spec (HardwareSpec, its top level `spec` among
them) and of a macro file (MacroFile: its macro and published sections), a randomly drawn legal
value (a path: a shipped file drawn from the row's files) survives dict -> struct -> attribute ->
to_dict; a value out of range or of the wrong type, a missing file, or a field that does not
apply to the section's kind, is refused with a kvcim.Error naming the key. And
docs/hardware_fields.md is what kvcim._fieldsdoc makes of the tables (a stale page fails)."""
import copy
import random
import re

import pytest

import kvcim
from kvcim import _core
from kvcim._fieldsdoc import markdown
from conftest import SOURCE_DIR

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


def applies(row, section_dict):
    return row["kinds"] == "all" or section_dict.get("kind") in row["kinds"].split("|")


def draw(row, current, rng):
    if row["type"] == "path":
        return str(rng.choice(sorted(SOURCE_DIR.glob(row["files"]))).resolve())
    if row["type"] == "boolean":
        return not current
    if row["type"] == "choice":
        return rng.choice(row["choices"])
    if row["type"] == "text":
        return f"drawn text {rng.randrange(100000)}"
    lo, hi = row["min"], row["max"]
    near = min(hi, max(lo + 8, 2 * abs(current or 0)))
    top = near if rng.random() < 0.5 else hi
    if row["type"] in ("integer", "bytes"):
        return rng.randint(lo, int(top))
    return rng.uniform(lo, top)


def part(doc, section):
    """A section of a document (its attributes or its dict); `spec` is the top level."""
    return doc if section == "spec" else doc[section] if isinstance(doc, dict) else getattr(doc, section)


def attribute(hw, section, key):
    """The Python attribute, a choice by its name (MacroSpec's are enums)."""
    value = getattr(part(hw, section), key)
    return value.name if hasattr(value, "name") else value


class Form:
    """Where a field's value sits in a document's tree (section dicts, `spec` the top level) and
    how errors name it; a machine file's form is test_machine_fields.MachineForm."""
    @staticmethod
    def put(tree, section, key, value):
        part(tree, section)[key] = value

    @staticmethod
    def get(tree, section, key, absent):
        return part(tree, section).get(key, absent)

    @staticmethod
    def field(section, key):
        return key if section == "spec" else f"{section}.{key}"


def illegal(row):
    if row["type"] == "boolean":
        return ["maybe", 2]
    if row["type"] == "choice":
        return ["no_such_choice", 3]
    if row["type"] == "text":
        return ["", [1], {"a": 1}]
    if row["type"] == "path":
        return ["no_such_file.yaml", str(SOURCE_DIR / "configs"), "", [1]]
    out = ["abc", [1]]
    if row["type"] in ("integer", "bytes"):
        out += [2.5, row["min"] - 1]
        if row["max"] < 2**63 - 1:
            out.append(row["max"] + 1)
    else:
        out += [row["max"] * 2 + 1, row["min"] / 2 if row["min"] > 0 else row["min"] - 1]
    return out


def cases():
    return [(s, row["key"]) for s in SECTIONS for row in TABLES[s] if row["in_file"]]


def macro_cases():
    return [(s, row["key"]) for s in MACRO_SECTIONS for row in TABLES[f"macro_file.{s}"] if row["in_file"]]


def check_row(cls, docs, section, row, form=Form):
    """The row of `section` on every document of `docs` (cls: HardwareSpec, MacroFile, Machine)."""
    key = row["key"]
    rng = random.Random(f"{section}.{key}")
    legal_done = refused_kind = False
    for doc in docs:
        base = doc.to_dict()
        if not applies(row, part(base, section)):
            if not refused_kind:
                d = copy.deepcopy(base)
                form.put(d, section, key, row["default"])
                with pytest.raises(kvcim.Error, match=rf"{section}\.{key} = .*only meaningful for {section}\.kind"):
                    cls.from_dict(d)
                refused_kind = True
            continue
        if legal_done:
            continue
        for _ in range(40):
            d = copy.deepcopy(base)
            value = draw(row, attribute(doc, section, key), rng)
            form.put(d, section, key, value)
            try:
                got = cls.from_dict(d)
            except kvcim.Error as e:  # legal for the row, not with the rest of this spec
                if row["type"] in ("integer", "bytes"):  # never for the row's own range
                    assert f"[{row['min']}, {row['max']}]" not in str(e), f"a legal value refused: {e}"
                if row["type"] == "path":  # an existing file is never refused as missing
                    assert "no such file" not in str(e), f"a legal value refused: {e}"
                continue
            legal_done = True
            assert attribute(got, section, key) == value
            # sparse fields (and K/V widths) only when not the default
            assert form.get(got.to_dict(), section, key, value) == value
            again = cls.from_dict(got.to_dict())
            assert again.to_dict() == got.to_dict()
            assert attribute(again, section, key) == value
            break
        for bad in illegal(row):
            d = copy.deepcopy(base)
            form.put(d, section, key, bad)
            with pytest.raises(kvcim.Error, match=rf"(^|[ :]){re.escape(form.field(section, key))} = "):
                cls.from_dict(d)
    assert legal_done, "no shipped spec took a legal value"
    assert row["kinds"] == "all" or refused_kind, "no shipped spec of another kind"


@pytest.mark.parametrize("section,key", cases())
def test_every_field_round_trips_and_refuses_bad_values(specs, section, key):
    row = next(r for r in TABLES[section] if r["key"] == key)
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
