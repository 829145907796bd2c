"""The mapper from Python: hardware specs from YAML and dicts (fields as the files spell them,
round trips), map() on every kind of model argument, the placement's per-macro map held to the
mapper's own figures, ledgers held to the figures, and errors as kvcim.Error."""
import json

import pytest
import yaml

import kvcim
from conftest import SOURCE_DIR

HW = SOURCE_DIR / "configs" / "hw"


@pytest.fixture(scope="module")
def analog():
    return kvcim.HardwareSpec.from_yaml(HW / "sram_analog.yaml")


@pytest.mark.parametrize("name", ["sram_digital", "sram_analog", "reram_analog"])
def test_spec_fields_match_the_yaml_and_round_trip(name):
    path = HW / f"{name}.yaml"
    raw = yaml.safe_load(path.read_text())
    hw = kvcim.HardwareSpec.from_yaml(path)
    assert hw.name == raw["name"] and hw.source == str(path)
    assert hw.macro.rows == raw["macro"]["rows"] and hw.macro.cols == raw["macro"]["cols"]
    assert hw.organization["macros"] == raw["organization"]["macros"]
    assert hw.precision == raw["precision"]
    d = hw.to_dict()
    for section in ("organization", "precision"):
        assert d[section] == raw[section]
    assert d["macro"]["kind"] == raw["macro"]["kind"]
    # The dict is complete: reading it back gives the same spec, field for field.
    again = kvcim.HardwareSpec.from_dict(json.loads(json.dumps(d)))
    assert again.to_dict() == d


def test_spec_errors_name_the_field(analog, tmp_path):
    d = analog.to_dict()
    d["macro"]["adc_bitz"] = 4
    with pytest.raises(kvcim.Error, match="adc_bitz"):
        kvcim.HardwareSpec.from_dict(d)
    d = analog.to_dict()
    d["organization"]["macros"] = 0
    with pytest.raises(kvcim.Error, match="macros"):
        kvcim.HardwareSpec.from_dict(d)
    with pytest.raises(kvcim.Error, match="nowhere.yaml"):
        kvcim.HardwareSpec.from_yaml(tmp_path / "nowhere.yaml")


def test_kv_drift_fields_read_back_and_bad_values_are_named():
    # the analog KV tile's drift of non-volatile cells: set in a dict, read back field for field;
    # a negative exponent is bad input naming the field
    d = kvcim.HardwareSpec.from_yaml(HW / "gain_cell_kv.yaml").to_dict()
    d["kv"].update(drift_nu=0.02, drift_nu_sigma=0.01, drift_t0_s=2.0, drift_compensation=False)
    hw = kvcim.HardwareSpec.from_dict(d)
    assert (hw.kv.drift_nu, hw.kv.drift_nu_sigma, hw.kv.drift_t0_s, hw.kv.drift_compensation) == \
        (0.02, 0.01, 2.0, False)
    assert kvcim.HardwareSpec.from_dict(json.loads(json.dumps(hw.to_dict()))).to_dict() == hw.to_dict()
    for field in ("drift_nu", "drift_nu_sigma", "drift_t0_s"):
        bad = json.loads(json.dumps(d))
        bad["kv"][field] = -0.5
        with pytest.raises(kvcim.Error, match=field):
            kvcim.HardwareSpec.from_dict(bad)


def test_map_accepts_every_kind_of_model(analog):
    model = kvcim.Model.load()
    by_model = kvcim.map(model, analog, "overflow=spill", context=64)
    by_config = kvcim.map(model.config, analog, "overflow=spill", context=64)
    by_path = kvcim.map(kvcim.default_model_path(), analog, "overflow=spill", context=64)
    by_preset = kvcim.map("stories260k", analog, "overflow=spill", context=64)
    figures = [p.figures for p in (by_model, by_config, by_path, by_preset)]
    assert all(f == figures[0] for f in figures)
    assert by_model.context == 64 and by_model.shape.config == model.config
    # Every weight matrix of every layer, and the classifier, is placed.
    placed = by_model.to_dict()
    assert len(placed["weights"]["matrices"]) == 7 * model.config.n_layers + 1
    assert kvcim.map("llama2-7b", analog, "overflow=spill", context=16).shape.config.dim == 4096


def test_macro_map_agrees_with_the_mapper_figures(analog):
    model = kvcim.Model.load()
    p = kvcim.map(model, analog, kvcim.Policy.from_dict({"tokens_per_page": 16,
                                                         "overflow": "spill"}), context=100)
    d = p.to_dict()
    f = p.figures
    macros = d["macro_map"]
    assert len(macros) == f["macros_total"] and not d["macro_map_truncated"]
    roles = [m["role"] for m in macros]
    assert roles.count("weights") == f["weights"]["macros_used"]
    assert sum(1 for m in macros if m["role"] == "kv" and m["utilization"] > 0) == \
        f["kv"]["macros_used"]
    # The map's KV region starts where `kvcim map --json` says it does.
    assert roles.index("kv") == d["kv"]["first_macro"]
    # The C++ report's fixed keys are there, and agree with the figures.
    assert d["schema_version"] == 1
    assert d["utilization"] == f["utilization"] and d["macros_used"] == f["macros_used"]
    assert d["energy_per_token_pj"]["cim"] == f["energy_per_token_pj"]["cim"]
    used = [m["utilization"] for m in macros if m["utilization"] > 0]
    assert len(used) == f["macros_used"]
    # Data cells / cells of the macros used, from the map, equals the mapper's utilisation.
    assert sum(used) / len(used) == pytest.approx(f["utilization"], rel=1e-9)


def test_ledgers_equal_the_figures(analog):
    p = kvcim.map(kvcim.Model.load(), analog, "overflow=spill", context=80)
    f = p.figures
    ledgers = p.token_ledgers()
    energy = f["energy_per_token_pj"]
    assert ledgers["total"]["energy_pj"] == pytest.approx(energy["cim"], rel=1e-12)
    assert ledgers["conventional"]["energy_pj"] == pytest.approx(energy["conventional"], rel=1e-12)
    for side in ("total", "conventional"):
        parts = ledgers[side]["energy_pj_by_component"].values()
        assert sum(parts) == pytest.approx(ledgers[side]["energy_pj"], rel=1e-9)
    assert ledgers["total"]["energy_pj"] == pytest.approx(
        ledgers["cim"]["energy_pj"] + ledgers["periphery"]["energy_pj"], rel=1e-12)
    # A generation of n tokens sums the tokens at contexts 1..n.
    one = kvcim.map(kvcim.Model.load(), analog, "overflow=spill", context=1).token_ledgers()
    two = kvcim.map(kvcim.Model.load(), analog, "overflow=spill", context=2).token_ledgers()
    gen = kvcim.map(kvcim.Model.load(), analog, "overflow=spill", context=2).generation_ledgers(2)
    assert gen["total"]["energy_pj"] == pytest.approx(
        one["total"]["energy_pj"] + two["total"]["energy_pj"], rel=1e-12)


def test_policy_round_trips_and_rejects_unknown_fields():
    p = kvcim.Policy.parse("overflow=window,page=8,window=64,sinks=8,replicas=2")
    assert (p.overflow, p.tokens_per_page, p.window_tokens, p.sink_tokens, p.replicas) == ("window", 8, 64, 8, 2)
    assert kvcim.Policy.from_dict(p.to_dict()).to_dict() == p.to_dict()
    assert str(kvcim.Policy.parse(str(p))) == str(p)
    h = kvcim.Policy.parse("window=128,evict=h2o")
    assert (h.overflow, h.evict) == ("window", "h2o")
    assert kvcim.Policy.from_dict(h.to_dict()).to_dict() == h.to_dict()
    s = kvcim.Policy.parse("spill")
    assert kvcim.Policy.from_dict(s.to_dict()).overflow == "spill"  # evict=oldest changes nothing
    with pytest.raises(kvcim.Error, match="evict"):
        h.evict = "lru"
    with pytest.raises(kvcim.Error, match="page_size"):
        kvcim.Policy.from_dict({"page_size": 8})
    with pytest.raises(kvcim.Error, match="overflow"):
        kvcim.Policy.parse("overflow=explode")


def test_small_pages_fragment_less_at_short_contexts(analog):
    model = kvcim.Model.load()
    frag = {page: kvcim.map(model, analog, f"page={page},overflow=spill", context=10)
            .figures["fragmentation"] for page in (8, 64)}
    assert frag[8] < frag[64]


def test_context_that_does_not_fit_is_a_kvcim_error():
    with pytest.raises(kvcim.Error, match="context|fit"):
        kvcim.map("llama2-7b", HW / "sram_digital.yaml", "overflow=fail", context=4096)


def test_one_comparison_node_from_python():
    hw = kvcim.HardwareSpec.default()
    assert hw.comparison == {"node_nm": 5.0, "voltage_v": 0.7}
    c = hw.conditions()
    assert c["node_nm"] == 5.0 and c["extrapolated"] is True
    baseline = [t for t in c["tables"] if t["role"] == "baseline"][0]
    assert baseline["sources"][0]["node_nm"] == 45.0
    assert 0.0 < baseline["sources"][0]["energy_factor"] < 0.1
    assert c["area_mm2"]["cim"] > 0 and c["area_mm2"]["baseline"] > 0
    assert c["tile_logic"]["tiles"] == 0 and c["tile_logic"]["mm2"] == 0  # the hardware alone
    placed = kvcim.map("stories260k", hw, context=64)
    pc = placed.conditions()  # with the placement's attention tiles, as `kvcim map` reports
    t = pc["tile_logic"]
    assert t["tiles"] == placed.figures["kv"]["tiles"] > 0
    assert t["nand2_per_tile"] == pytest.approx(26005 + 75.1 * 64 * 12)
    # the chip built holds the weights and the KV of 64 tokens: less than the spec's 1024 macros
    assert t["mm2"] < pc["area_mm2"]["cim"] < c["area_mm2"]["cim"] + t["mm2"]
    assert placed.figures["macros_total"] < 1024
    assert pc["baseline"]["iso_area_sram_bytes"] < c["baseline"]["iso_area_sram_bytes"]
    before = placed.figures["energy_per_token_pj"]["conventional"]
    hw.compare_at(45)
    assert hw.comparison == {"node_nm": 45.0, "voltage_v": 0.9}
    after = kvcim.map("stories260k", hw, context=64).figures["energy_per_token_pj"]["conventional"]
    # 45 nm costs more than 5 nm: its SRAM reads, most of it, 3.2x (0.156 against 0.048 pJ/bit, the SRAM table)
    assert after > 3 * before
    with pytest.raises(kvcim.Error, match="node_nm = 1"):
        hw.compare_at(1)
    d = hw.to_dict()
    d["comparison"] = {"node_nm": 22}
    assert kvcim.HardwareSpec.from_dict(d).comparison["node_nm"] == 22.0


def test_map_sizes_the_chip_as_kvcim_map_does():
    # a fixed spec too small for Llama-2-7B's weights, no overflow named: sized, with a warning
    with pytest.warns(UserWarning, match="sized the chip for the model"):
        p = kvcim.map("llama2-7b", context=1024)
    f = p.figures
    assert f["weights"]["blocks_offchip"] == 0 and f["kv"]["tokens"]["offchip"] == 0
    assert f["macros_total"] > 1024
    # fit=True sizes any spec; an area budget caps it and spills what does not fit
    fitted = kvcim.map("llama2-7b", HW / "sram_digital.yaml", context=1024, fit=True)
    assert fitted.figures["macros_total"] == f["macros_total"]
    capped = kvcim.map("llama2-7b", HW / "sram_digital.yaml", context=1024, area_mm2=50.0)
    assert capped.figures["macros_total"] < f["macros_total"]
    assert capped.policy.overflow == "spill" and capped.figures["weights"]["blocks_offchip"] > 0
    # naming the overflow keeps the spec's size
    kept = kvcim.map("llama2-7b", HW / "sram_digital.yaml", "overflow=spill", context=1024)
    assert kept.figures["macros_total"] == 1024
    with pytest.raises(kvcim.Error, match="area"):
        kvcim.map("llama2-7b", HW / "sram_digital.yaml", context=1024, area_mm2=1e-9)


def paths(d, prefix=()):
    """Every leaf of a nested dict as (key path, value)."""
    for k, v in d.items():
        if isinstance(v, dict):
            yield from paths(v, prefix + (k,))
        else:
            yield prefix + (k,), v


def at(d, path):
    for k in path:
        d = d[k]
    return d


def test_figures_speak_the_vocabulary_of_kvcim_map_json(tmp_path):
    # one vocabulary for the figures: Placement.figures is keyed as to_dict() and `kvcim map
    # --json` key them, and holds their values, leaf for leaf
    from test_vocabulary import kvcim_exe
    import subprocess
    out = tmp_path / "map.json"
    subprocess.run([str(kvcim_exe()), "map", "--preset", "stories15m", "--policy", "spill,page=16",
                    "--context", "300", "--json", str(out)], check=True, capture_output=True, timeout=300)
    command = json.loads(out.read_text())
    placed = kvcim.map("stories15m", None, "spill,page=16", context=300)
    figures, d = json.loads(json.dumps(placed.figures)), json.loads(json.dumps(placed.to_dict()))
    leaves = dict(paths(figures))
    for path, value in leaves.items():
        assert at(d, path) == value, path
        assert at(command, path) == value, path
    # the fixed keys scripts read, and the groups, are figures
    for path in (("energy_per_token_pj", "cim"), ("energy_per_token_pj", "conventional"),
                 ("utilization",), ("macros_used",), ("max_context_tokens",),
                 ("kv_cell_writes_per_token",), ("weights", "blocks_offchip"),
                 ("kv", "tokens", "offchip"), ("latency_per_token_ns", "cim"),
                 ("batch", "tokens_per_s", "cim"), ("endurance", "lifetime_tokens"), ("context",)):
        assert path in leaves, path
    assert not any(k.startswith(("energy_pj_", "latency_ns_", "tokens_per_s_")) for k in figures)


def test_dies_and_links_from_python():
    """A model larger than a reticle: Placement.figures and to_dict() give its dies within the
    limit and the links' bits, energy and latency; the spec's die and link sections read like the
    file, and a link without its bandwidth is a kvcim.Error naming it."""
    p = kvcim.map("llama2-7b", str(HW / "full_cim.yaml"))
    dies = p.to_dict()["dies"]
    assert dies == p.figures["dies"]
    assert dies["count"] == len(dies["dies"]) > 1
    assert all(d["area_mm2"] <= dies["limit_mm2"] for d in dies["dies"])
    assert dies["link_energy_pj_per_token"] == pytest.approx(
        dies["link_bits_per_token"] * dies["link"]["energy_pj_per_bit"])
    assert dies["link_latency_ns_per_token"] > len(dies["cuts"]) * dies["link"]["latency_ns"]
    hw = kvcim.HardwareSpec.from_yaml(HW / "wafer_scale.yaml")
    raw = yaml.safe_load((HW / "wafer_scale.yaml").read_text())
    assert hw.die == raw["die"] and hw.link == raw["link"] and hw.die.wafer_scale
    d = hw.to_dict()
    del d["link"]["bandwidth_gb_s"]
    with pytest.raises(kvcim.Error, match="bandwidth_gb_s"):
        kvcim.HardwareSpec.from_dict(d)
