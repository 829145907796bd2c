"""The SRAM node table from Python (kvcim.load_sram_nodes, SramNodes), generated per field from
its table (kvcim._core.spec_field_tables()["sram_nodes.node"]): on the largest node and the next,
a randomly drawn legal value of every row, given with its source, survives dict -> struct ->
attribute -> to_dict; a value out of range, of the wrong type or without its source is refused
with a kvcim.Error naming nodes[i].<key>. And the shipped table reads as the model prices it."""
import pytest

import kvcim
from kvcim import _core
from conftest import SOURCE_DIR
from spec_field_checks import check_row

TABLE = _core.spec_field_tables()["sram_nodes.node"]
PATH = SOURCE_DIR / "configs" / "memory" / "sram_nodes.yaml"


@pytest.fixture(scope="module")
def table():
    return [kvcim.load_sram_nodes(PATH)]


@pytest.mark.parametrize("node", [0, 1])
@pytest.mark.parametrize("key", [row["key"] for row in TABLE])
def test_every_node_field_round_trips_and_refuses_bad_values(table, node, key):
    row = next(r for r in TABLE if r["key"] == key)
    check_row(kvcim.SramNodes, table, f"nodes[{node}]", row,
              at=lambda tree: tree["nodes"][node], part=lambda t: t.nodes[node])


def test_the_shipped_table_reads_as_the_model_prices_it(table):
    t = table[0]
    n5 = next(n for n in t.nodes if n.node_nm == 5)
    assert (n5.bitcell_um2, n5.macro_mb_per_mm2, n5.read_pj_per_bit) == (0.021, 31.8, None)
    assert n5.provenance["macro_mb_per_mm2"].startswith("source: N5/N3E SRAM density 31.8")
    assert "read_pj_per_bit" not in n5.provenance  # carried, not written
    d = t.to_dict()
    assert d["nodes"][0]["read_pj_per_bit"]["source"].startswith("[H5]")
    assert d["nodes"][1]["write_pj_per_bit"]["assumption"].startswith("SRAM write ~ read")
    assert kvcim.SramNodes.from_dict(d).to_dict() == d
    assert t.um2_per_bit(5) == pytest.approx(1 / 31.8, rel=1e-12)
    # 5 nm, 0.7 V: the 28 nm figure (50 pJ per 256 bits at 0.9 V) carried by sqrt of the macro area per bit
    assert t.access_pj_per_bit(5, 0.7) == pytest.approx(50 / 256 / 0.81 * (5.260 / 31.8) ** 0.5 * 0.49, rel=1e-12)
    with pytest.raises(kvcim.Error, match=r"voltage_v = 9"):
        t.access_pj_per_bit(5, 9.0)
    d["nodes"][1]["node_nm"] = 50
    with pytest.raises(kvcim.Error, match=r"nodes\[1\]\.node_nm = '50': expected the nodes from the largest down"):
        kvcim.SramNodes.from_dict(d)


def test_every_row_is_an_attribute_with_its_doc():
    for row in TABLE:
        prop = vars(kvcim.SramNodeEntry).get(row["key"])
        assert isinstance(prop, property) and row["doc"] in (prop.__doc__ or ""), row["key"]
