"""Checks of a spec field table (kvcim._core.spec_field_tables()) field by field, shared by the
tests of every document made from tables (hardware specs, macro files, machine files, the SRAM
node table, the macro model's constants): a randomly drawn legal value survives dict -> struct ->
attribute -> to_dict (a path: a shipped file drawn from the row's files); a value out of range, of
the wrong type, a missing file, a sourced figure without its source, or a field that does not
apply to the section's kind is refused with a kvcim.Error naming the key."""
import copy
import random
import re

import pytest

import kvcim
from conftest import SOURCE_DIR

DRAWN_SOURCE = "a drawn figure of the field-by-field test"


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


def file_form(row, value):
    """The value as the file writes it: a sourced row's with its source."""
    return {"value": value, "source": DRAWN_SOURCE} if row.get("sourced") else value


def attribute(section, key):
    """The Python attribute, a choice by its name (MacroSpec's are enums)."""
    value = getattr(section, key)
    return value.name if hasattr(value, "name") else value


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
    if not row.get("sourced"):
        return out
    legal = row["min"]
    return [file_form(row, v) for v in out] + [
        legal, {"value": legal}, {"value": legal, "source": "a word"},
        {"value": legal, "source": DRAWN_SOURCE, "assumption": DRAWN_SOURCE}]


def check_row(cls, docs, name, row, at=None, part=None):
    """The row on every document of `docs` (cls: the document's class, with from_dict / to_dict).
    `name` names the section in messages ("" for the document's top level); at(tree) is the
    section's dict in a document's tree, part(doc) the section as a typed value (default: the tree's
    key `name` and the document's attribute `name`)."""
    at = at or (lambda tree: tree[name])
    part = part or (lambda doc: getattr(doc, name))
    key = row["key"]
    field = re.escape(f"{name}.{key}" if name else key)
    rng = random.Random(f"{name}.{key}")
    legal_done = refused_kind = False
    for doc in docs:
        base = doc.to_dict()
        if not applies(row, at(base)):
            if not refused_kind:
                d = copy.deepcopy(base)
                at(d)[key] = row["default"]
                with pytest.raises(kvcim.Error, match=rf"{field} = .*only meaningful for {name}\.kind"):
                    cls.from_dict(d)
                refused_kind = True
            continue
        if legal_done:
            continue
        for _ in range(40):
            d = copy.deepcopy(base)
            value = draw(row, attribute(part(doc), key), rng)
            at(d)[key] = file_form(row, value)
            try:
                got = cls.from_dict(d)
            except kvcim.Error as e:  # legal for the row, not with the rest of this document
                if row["type"] in ("integer", "bytes"):  # never for the row's own range
                    assert f"[{row['min']}, {row['max']}]" not in str(e), f"a legal value refused: {e}"
                if row["type"] == "path":  # an existing file is never refused as missing
                    assert "no such file" not in str(e), f"a legal value refused: {e}"
                continue
            legal_done = True
            assert attribute(part(got), key) == value
            if row.get("sourced"):
                assert part(got).provenance[key] == "source: " + DRAWN_SOURCE
            written = at(got.to_dict())  # sparse fields (and K/V widths) only when not the default
            assert written.get(key, file_form(row, value)) == file_form(row, value)
            again = cls.from_dict(got.to_dict())
            assert again.to_dict() == got.to_dict()
            assert attribute(part(again), key) == value
            break
        for bad in illegal(row):
            d = copy.deepcopy(base)
            at(d)[key] = bad
            with pytest.raises(kvcim.Error, match=rf"{field}(\.value|\.source|\.assumption)? = "):
                cls.from_dict(d)
    assert legal_done, "no shipped document took a legal value"
    assert row["kinds"] == "all" or refused_kind, "no shipped document of another kind"
