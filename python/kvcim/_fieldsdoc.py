"""docs/hardware_fields.md, made from the spec's field tables (kvcim._core.spec_field_tables(), the
C++ tables of kvcim/spec_fields.hpp). Run after changing a table, from the source folder:

    PYTHONPATH=build/python /usr/bin/python3 -m kvcim._fieldsdoc > docs/hardware_fields.md

python/tests/test_spec_fields.py fails while the checked-in page differs from what this writes.
"""
import sys

SECTIONS = [
    ("spec", "The top level of a hardware spec (`mapper::HardwareSpec`), beside its sections."),
    ("macro", "The weight macros (`cmodel::cim::MacroSpec`)."),
    ("organization", "Where the macros sit (`mapper::Organization`)."),
    ("kv", "The attention tiles holding the KV cache (`mapper::KvSpec`)."),
    ("precision", "Bit widths (`mapper::Precision`)."),
    ("baseline", "The conventional engine compared against (`cmodel::energy::BaselineConfig`)."),
    ("comparison", "The one node both sides are priced at (`cmodel::energy::NodePoint`); the "
                   "section is optional (default: the macro table's node and supply)."),
    ("buffer", "The on-chip buffer the tiles share (`mapper::BufferSpec`); optional."),
    ("offchip", "The off-chip memory beside the chip (`mapper::OffchipSpec`); optional."),
    ("digital", "The digital periphery (`mapper::DigitalSpec`); optional."),
    ("die", "The largest die the chip is cut into (`mapper::DieSpec`); the section is optional "
            "(default: one 858 mm2 reticle field). `docs/mapper.md`, \"Dies\"."),
    ("link", "One die-to-die link (`mapper::LinkSpec`); the section is optional (default: a UCIe "
             "advanced-package link), but a link that is given names its energy and bandwidth."),
    ("tile", "The attention tile's parameters (`cmodel::cim::TileParams`, Python's `TileParams`); "
             "`HardwareSpec::tile` fills them in from the kv and precision sections."),
    ("machine", "Not a section of a hardware spec: a named conventional machine's file "
                "(`configs/machines/*.yaml`, `mapper::Machine`, Python's `kvcim.load_machine(path)`, "
                "`--baseline NAME`, `docs/baseline.md`), "
                "beside `name` and `description`. Every field is written `{value: V, source: \"...\"}` "
                "or `{value: V, assumption: \"...\"}`, V in the legal range."),
    ("macro_file.macro", "Not a hardware spec either: the `macro` section of a published macro's file "
                         "(`configs/macros/*.yaml`, `cmodel::macro_model::MacroDesc`, Python's "
                         "`kvcim.load_macro(path).macro`), the macro as its paper describes it, which "
                         "`kvcim macro` prices and a spec's `macro.describes` names (`docs/calibration.md`)."),
    ("macro_file.published", "The `published` section of a macro's file (`cmodel::macro_model::Published`): "
                             "the paper's figures; beside these, `breakdown` (shares of the energy by "
                             "category, `array+input: 0.84`) and `excludes` (categories the published "
                             "TOPS/W leaves out) are read by hand."),
    ("sram_nodes.node", "Not a hardware spec either: one entry of the `nodes` list of the SRAM node table "
                        "(`configs/memory/sram_nodes.yaml`, `cmodel::energy::SramNodeEntry`, Python's "
                        "`kvcim.load_sram_nodes(path).nodes`), at least two nodes from the largest down. "
                        "A node without its access energy has it carried from the node above "
                        "(`docs/energy.md`); the three access rows are given together or not at all."),
    ("macro_model", "Not a hardware spec either: the top level of the component macro model's constants "
                    "(`configs/macro_model.yaml`, `cmodel::macro_model::Constants`, Python's "
                    "`kvcim.load_macro_model(path)`), written by `scripts/fit_macro_model.py` "
                    "(`docs/calibration.md`), beside `constants`."),
    ("macro_model.constants", "The `constants` section of that file (`cmodel::macro_model::MacroConstants`): "
                              "one named constant per term of the component model, inside its plausible "
                              "range (a fit that leaves it is refused); the fit sets those of "
                              "`MacroModel.constants.fitted`, the others are assumptions stated in their source."),
]


def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def legal(row):
    if row["type"] == "choice":
        return " \\| ".join(f"`{c}`" for c in row["choices"])
    if row["type"] == "boolean":
        return "true, false"
    if row["type"] == "text":
        return "text"
    if row["type"] == "path":
        return f"a file (`{row['files']}`)"
    return f"[{fmt(row['min'])}, {fmt(row['max'])}]"


def default(row):
    if row["required"]:
        return "required"
    if row["defaults_to"]:
        return row["defaults_to"]
    if row.get("optional"):
        return "absent"
    if row["type"] in ("text", "path") and not row["default"]:
        return "none"
    return f"`{fmt(row['default'])}`"


def markdown(tables):
    out = ["# Hardware spec fields", "",
           "Every field of a hardware spec (`configs/hw/*.yaml`, or the same tree as a dict), of a "
           "named machine, of a published macro's file, of the SRAM node table and of the macro model's "
           "constants, made "
           "from the field tables beside the structs (`include/kvcim/spec_fields.hpp`) by "
           "`kvcim._fieldsdoc`; a test fails while this page differs from the tables. A path names "
           "a file relative to the folder of the spec that names it (a dict's: `base_dir`, by "
           "default the shipped `configs/hw`) and is written absolute. The parser "
           "reads, checks and writes exactly these keys: a value outside its legal range, of another "
           "type, or a field that does not apply to the section's `kind` is an error naming the file, "
           "the key, the value and the range. `kinds` names the kinds a field applies to. Fields "
           "marked *not in the file* are set from other sections (Python attributes only). A *sourced* "
           "field is written `{value: V, source: \"...\"}` or `{value: V, assumption: \"...\"}`: "
           "the figure and where it comes from (a sentence). "
           "`docs/mapper.md` explains the spec as a whole.", ""]
    for name, about in SECTIONS:
        out += [f"## `{name}`", "", about, "",
                "| key | type | unit | legal | default | kinds | meaning |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for row in tables[name]:
            doc = row["doc"].replace("|", "\\|")
            if not row["in_file"] and name != "tile":
                doc += " *(not in the file)*"
            if row["sparse"]:
                doc += " (written when not the default)"
            if row.get("sourced"):
                doc += " *(sourced)*"
            out.append(f"| `{row['key']}` | {row['type']} | {row['unit']} | {legal(row)} | "
                       f"{default(row)} | {row['kinds']} | {doc} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    from kvcim import _core
    sys.stdout.write(markdown(_core.spec_field_tables()))
