"""kvcim.run(): the Python composition gives exactly the report of the `kvcim run` command, the
Report's dicts and per-step numpy arrays, ADC bits that cost accuracy, errors as kvcim.Error,
progress callbacks, and a sweep of run points equal to direct runs."""
import json
import os
import pathlib
import subprocess
import warnings

import numpy as np
import pytest

import kvcim
from conftest import SOURCE_DIR

ANALOG = SOURCE_DIR / "configs" / "hw" / "sram_analog.yaml"
EVAL = SOURCE_DIR / "testdata" / "eval" / "austen_paragraphs.txt"  # the default text
SHORT_TEXT = SOURCE_DIR / "testdata" / "eval" / "tinystories_eval.txt"
# The evaluation runs by default, as with `kvcim run`; tests that do not need it skip it.
NO_EVAL = {"eval_text_path": ""}


def kvcim_exe():
    exe = os.environ.get("KVCIM_EXE")
    if exe:
        return pathlib.Path(exe)
    import kvcim as k  # a build tree: <build>/python/kvcim -> <build>/kvcim
    return pathlib.Path(k.__file__).resolve().parents[2] / "kvcim"


def test_report_equals_the_kvcim_run_command(tmp_path):
    exe = kvcim_exe()
    assert exe.exists(), f"the kvcim command is built beside the module ({exe})"
    out = tmp_path / "cli.json"
    subprocess.run([str(exe), "run", "--hw", str(ANALOG), "--steps", "12", "--policy", "page=16",
                    "--eval-text", str(SHORT_TEXT), "--eval-tokens", "300", "--json", str(out),
                    "--quiet"], check=True, capture_output=True, timeout=300)
    cli = json.loads(out.read_text())
    report = kvcim.run(spec=str(ANALOG), steps=12, policy="page=16", eval_text_path=str(SHORT_TEXT),
                       eval_tokens=300)
    assert report.to_dict() == cli


# A random llama2.c checkpoint larger than the default spec (configs/hw/sram_digital.yaml: 1024
# macros of 256 x 256 one-bit cells, 8,192 int8 weights each): 3 layers of dim 512 and hidden
# 1536 are 10.5 M weights in 1,264 macros.
BIG = {"dim": 512, "hidden_dim": 1536, "n_layers": 3, "n_heads": 8, "n_kv_heads": 8,
       "vocab_size": 512, "seq_len": 32}


@pytest.fixture(scope="module")
def big_checkpoint(tmp_path_factory):
    config = kvcim.Config.from_dict(dict(BIG, shared_classifier=True))
    path = tmp_path_factory.mktemp("big") / "big.bin"
    header = np.array([BIG[k] for k in ("dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads",
                                        "vocab_size", "seq_len")], dtype="<i4")
    weights = np.random.default_rng(5).normal(0.0, 0.05, config.checkpoint_floats())
    path.write_bytes(header.tobytes() + weights.astype("<f4").tobytes())
    return path


def cli_run(tmp_path, *args):
    out = tmp_path / "cli.json"
    done = subprocess.run([str(kvcim_exe()), "run", "--quiet", *args, "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), done.stdout


# (the command's options, kvcim.run's arguments for the same)
SIZED = [
    ((), {}),                                          # the automatic fit, with its note
    (("--policy", "page=64"), {"policy": "page=64"}),  # text naming no overflow: the same
    (("--node", "22", "--fit"), {"node": 22, "fit": True}),
    (("--area-mm2", "5000", "--node", "7"), {"area_mm2": 5000.0, "node": 7}),
]


@pytest.mark.parametrize("args,kwargs", SIZED, ids=[" ".join(a) or "auto-fit" for a, _ in SIZED])
def test_a_model_larger_than_the_spec_gets_the_commands_chip_and_report(big_checkpoint, tmp_path,
                                                                        args, kwargs):
    # the spec's macros do not hold the model
    spilled = kvcim.map(str(big_checkpoint), None, "overflow=spill", context=8).to_dict()
    assert spilled["weights"]["blocks_offchip"] > 0
    common = ("--model", str(big_checkpoint), "--steps", "6", "--eval-text", "")
    command, stdout = cli_run(tmp_path, *common, *args)
    noted = not kwargs or "policy" in kwargs  # the automatic fit says so; fit and area_mm2 ask
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = kvcim.run(model=str(big_checkpoint), steps=6, eval_text_path="", **kwargs)
    notes = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(notes) == noted and all(n in stdout for n in notes), (notes, stdout)
    assert ("sized the chip for the model" in stdout) == noted
    assert command["mapping"]["macros_total"] > 1024  # the chip was sized for the model
    assert report.conditions["node_nm"] == kwargs.get("node", 5.0)  # the node asked, else the spec's
    # The whole report: no field differs (the inputs are the same paths: the checkpoint as given,
    # its tokenizer (the embedded tok512), the default spec's path, no evaluation text).
    assert report.to_dict() == command


def test_chip_arguments_are_checked_and_named():
    for name, bad in (("node", "22"), ("area_mm2", True), ("fit", 1)):
        with pytest.raises(kvcim.Error, match=f"run: {name} = "):
            kvcim.run(steps=6, eval_text_path="", **{name: bad})


def test_report_fields_and_per_step_arrays():
    report = kvcim.run(steps=10, prompt="Lily and Tom", **NO_EVAL)
    assert report.schema_version == 1
    assert len(report.tokens) == 10 and len(report.reference_tokens) == 10
    for name in ("position", "top1_agree", "kl", "max_abs_error", "mean_abs_error"):
        assert isinstance(report.steps[name], np.ndarray) and report.steps[name].shape == (10,)
    assert report.steps["top1_agree"].dtype == np.bool_
    assert report.steps["position"].tolist() == list(range(10))
    # The summary is the mean of the per-step figures.
    assert report.accuracy["top1_agreement"] == pytest.approx(report.steps["top1_agree"].mean())
    assert report.accuracy["kl_mean"] == pytest.approx(report.steps["kl"].mean())
    cim = report.energy["cim"]
    assert sum(cim["breakdown"].values()) == pytest.approx(cim["total_pj"], rel=1e-9)
    assert cim["per_token_pj"] == pytest.approx(cim["total_pj"] / report.energy["forward_passes"])
    # The prompt is fed first, then generated tokens.
    prompt_ids = kvcim.Tokenizer.load().encode("Lily and Tom")
    assert report.tokens[:len(prompt_ids)] == prompt_ids
    again = kvcim.Report.from_json(report.to_json())
    assert again.to_dict() == report.to_dict()


@pytest.mark.parametrize("skip", [{"eval_text_path": ""}, {"eval_text_path": None},
                                  {"eval_text": ""}])
def test_no_evaluation_when_skipped_and_perplexity_is_none(skip):
    report = kvcim.run(steps=6, **skip)
    assert report.evaluation is None and report.per_token is None
    perplexity = report.accuracy["perplexity"]
    assert perplexity["reference"] is None and perplexity["cim"] is None
    assert perplexity["eval_tokens"] == 0
    assert report["options"]["evaluation"] is False and report["options"]["eval_tokens"] is None
    assert "Report(" in repr(report)


def test_evaluation_statistics_with_intervals_and_per_token_arrays():
    report = kvcim.run(steps=6, eval_tokens=1200)  # alone: the shipped text is added (several sampled sequences)
    ev = report.evaluation
    # every paragraph a sequence from BOS (its windows predict all of its tokens)
    tok = kvcim.Tokenizer.load()
    paragraphs = [" ".join(p.split("\n")) for p in EVAL.read_text().strip().split("\n\n")]
    text_tokens = sum(len(tok.encode(p)) - 1 for p in paragraphs)
    assert ev["text_tokens"] == text_tokens == report.text_evaluation["tokens"]
    assert ev["tokens"] == 1200 + text_tokens and ev["sampled_tokens"] == 1200
    assert report.accuracy["perplexity"]["eval_tokens"] == text_tokens
    assert report.accuracy["perplexity"]["on"] == "text"
    assert report.accuracy["perplexity"]["cim"] == report.text_evaluation["perplexity_cim"]["value"]
    assert report.text_evaluation["sequences"] >= len(paragraphs)
    assert report["inputs"]["eval_text"] == kvcim._core.default_eval_text_path()
    arrays = report.per_token
    assert set(arrays) == {"nll_reference", "nll_cim", "kl", "top1_agree"}
    assert all(a.shape == (ev["tokens"],) for a in arrays.values())
    assert arrays["top1_agree"].dtype == np.bool_
    for name in ("kl_mean", "top1_agreement", "delta_nll", "perplexity_reference",
                 "perplexity_cim"):
        s = ev[name]
        assert s["ci_low"] <= s["value"] <= s["ci_high"] and s["ci_low"] < s["ci_high"], name
    # the top level: the sampled tokens (first); the text's apart (after them)
    sampled, text = slice(0, 1200), slice(1200, None)
    assert ev["kl_mean"]["value"] == pytest.approx(arrays["kl"][sampled].mean())
    assert ev["top1_agreement"]["value"] == pytest.approx(arrays["top1_agree"][sampled].mean())
    delta = arrays["nll_cim"] - arrays["nll_reference"]
    assert ev["delta_nll"]["value"] == pytest.approx(delta[sampled].mean())
    assert ev["text"]["delta_nll"]["value"] == pytest.approx(delta[text].mean())
    assert report.accuracy["perplexity"]["cim"] == pytest.approx(np.exp(arrays["nll_cim"][text].mean()))
    assert len(ev["sequence_starts"]) == ev["sequences"] >= 2


@pytest.mark.parametrize("bad", [0, -5, "100", 2.5, True])
def test_bad_eval_tokens_are_named(bad):
    with pytest.raises(kvcim.Error, match="eval_tokens"):
        kvcim.run(steps=6, eval_tokens=bad)


def test_fewer_adc_bits_cost_accuracy():
    hw = kvcim.HardwareSpec.from_yaml(ANALOG).to_dict()
    kl = {}
    for bits in (3, 8):
        hw["macro"]["adc_bits"] = bits
        kl[bits] = kvcim.run(spec=hw, steps=16, **NO_EVAL).accuracy["kl_mean"]
    assert kl[3] > 10 * kl[8]


def test_reference_backends_agree_with_the_float_model():
    report = kvcim.run(steps=12, backends="reference", **NO_EVAL)
    assert report.tokens == report.reference_tokens
    assert report.accuracy["top1_agreement"] == 1.0
    assert report.accuracy["kl_mean"] == pytest.approx(0.0, abs=1e-9)


def test_run_errors_are_kvcim_errors():
    with pytest.raises(kvcim.Error, match="attention only"):
        kvcim.run(steps=6, backends={"linear": "rtl"})
    with pytest.raises(kvcim.Error, match="backends.attention"):
        kvcim.run(steps=6, backends={"attention": "gpu"})
    with pytest.raises(kvcim.Error, match="page_size"):
        kvcim.run(steps=6, policy={"page_size": 8})
    with pytest.raises(kvcim.Error):
        kvcim.run(steps=100000)
    if not kvcim.HAVE_RTL:
        with pytest.raises(kvcim.Error, match="RTL"):
            kvcim.run(steps=6, backends="rtl")


def test_progress_callback_and_an_exception_from_it():
    calls = []
    kvcim.run(steps=6, progress=lambda done, total: calls.append((done, total)), **NO_EVAL)
    assert calls == [(i, 6) for i in range(1, 7)]

    def stop(done, total):
        if done == 3:
            raise KeyboardInterrupt  # what Ctrl-C raises in the callback's place
    with pytest.raises(KeyboardInterrupt):
        kvcim.run(steps=8, progress=stop, **NO_EVAL)
    assert kvcim.run(steps=6, **NO_EVAL).accuracy["steps"] == 6  # usable afterwards


@pytest.mark.skipif(not kvcim.HAVE_RTL, reason="needs a build with the Verilated tile")
def test_rtl_attention_gives_the_c_model_report(monkeypatch, tmp_path):
    monkeypatch.setenv("KVCIM_RTL_CACHE", str(tmp_path / "rtl-cache"))  # never the user's cache
    cim = kvcim.run(steps=10, backends="cim", **NO_EVAL).to_dict()
    rtl = kvcim.run(steps=10, backends="rtl", **NO_EVAL).to_dict()
    for key in ("tokens", "accuracy", "steps"):
        assert rtl[key] == cim[key]
    # another configuration of the table (a module beside the build): 32-token tiles, 2-bit KV
    hw = kvcim.HardwareSpec.default().to_dict()
    hw["kv"]["tokens_per_tile"], hw["kv"]["prob_bits"], hw["precision"]["kv_bits"] = 32, 8, 2
    cim = kvcim.run(spec=hw, steps=40, backends="cim", **NO_EVAL).to_dict()
    rtl = kvcim.run(spec=hw, steps=40, backends="rtl", **NO_EVAL).to_dict()
    assert rtl["tokens"] == cim["tokens"] and rtl["steps"] == cim["steps"]
    # parameters the RTL cannot be built at (a tile the table lacks is built on demand: the C++
    # tests and testbench/cli/rtl_build.sh run that; here only the refusal, before any work)
    hw["kv"]["tokens_per_tile"], hw["kv"]["prob_bits"] = 64, 6
    with pytest.raises(kvcim.Error, match=r"tile: prob_bits = 6: the RTL builds prob_bits 7\.\.16"):
        kvcim.run(spec=hw, steps=8, backends="rtl", **NO_EVAL)
    assert not (tmp_path / "rtl-cache").exists()


def test_run_sweep_equals_direct_runs(tmp_path):
    spec = {"evaluate": "run", "hardware": str(ANALOG), "run": {"steps": 10},
            "grid": {"macro.adc_bits": [4, 8]}}
    result = kvcim.sweep(spec, tmp_path / "r.jsonl", workers=2, progress=False)
    assert (result.ok, result.errors) == (2, 0)
    hw = kvcim.HardwareSpec.from_yaml(ANALOG).to_dict()
    for r in result.records:
        hw["macro"]["adc_bits"] = r["overrides"]["hardware.macro.adc_bits"]
        direct = kvcim.run(spec=hw, steps=10, **NO_EVAL).to_dict()
        assert r["result"]["accuracy"] == direct["accuracy"]
        assert r["result"]["energy"]["cim"] == direct["energy"]["cim"]
        assert r["result"]["tokens"] == direct["tokens"]


def test_energy_conditions_travel_with_the_report():
    r = kvcim.run(steps=8, **NO_EVAL)
    c = r.conditions
    assert c["node_nm"] == 5.0 and c["context"]["positions"] == 8
    assert "leakage" in c["included"] and "on-chip interconnect" in c["included"]
    e = r.energy
    assert e["conventional_over_cim"] > 1.0
    assert e["conventional_over_cim_iso_area"] > 0.0
    assert e["cim"]["breakdown"]["leakage"] > 0.0 and e["conventional"]["breakdown"]["interconnect"] > 0.0
    hw = kvcim.HardwareSpec.default()
    hw.compare_at(45)
    at45 = kvcim.run(spec=hw, steps=8, **NO_EVAL)
    assert at45.conditions["node_nm"] == 45.0
    # the same events, priced at 45 nm: both sides cost more (their SRAM reads and buffers 3.2x,
    # 0.156 against 0.048 pJ/bit by the SRAM table; logic more)
    assert at45.energy["cim"]["total_pj"] > 3 * e["cim"]["total_pj"]
    assert at45.energy["conventional"]["total_pj"] > 3 * e["conventional"]["total_pj"]


def test_run_and_map_give_one_comparison_under_one_set_of_names():
    r = kvcim.run(steps=12, **NO_EVAL)
    m = kvcim.map(context=12)
    assert r.comparison == m.figures["comparison"] == m.to_dict()["comparison"]
    c = r.comparison
    assert c["conditions"]["context"] == 12 and c["conditions"]["sequences"] == 1
    eq = c["equal_throughput"]
    assert eq["cim"]["tokens_per_s"] == pytest.approx(eq["conventional"]["tokens_per_s"], rel=1e-12)
    for side in ("cim", "conventional"):
        b = c["best"][side]
        assert b["edp_pj_s"] == pytest.approx(b["energy_pj_per_token"] * b["step_ns"] * 1e-9, rel=1e-12)


def test_a_batch_is_its_single_runs_and_shares_the_weight_fetches():
    # several prompts decode together: each sequence makes the tokens of its single run (prompt,
    # seed + b); on an attention-only chip the weights come from off-chip once per step, so the
    # energy per token of the batch is below a single run's
    prompts = ["Once upon a time", "Tom had a big", "The sun"]
    spec = str(SOURCE_DIR / "configs" / "hw" / "attention_only.yaml")
    batch = kvcim.run(spec=spec, prompt=prompts, steps=16, temperature=1.0, seed=3, **NO_EVAL)
    b = batch.to_dict()["batch"]
    assert b["sequences"] == 3 and b["active_per_position"] == [3] * 16
    for i, p in enumerate(prompts):
        single = kvcim.run(spec=spec, prompt=p, steps=16, temperature=1.0, seed=3 + i, **NO_EVAL)
        s = b["per_sequence"][i]
        assert (s["prompt"], s["seed"]) == (p, 3 + i)
        assert s["tokens"] == single.tokens and s["text"] == single.to_dict()["text"]
    assert batch.tokens == b["per_sequence"][0]["tokens"]
    one = kvcim.run(spec=spec, prompt=prompts[0], steps=16, **NO_EVAL).to_dict()["energy"]
    many = batch.to_dict()["energy"]
    assert many["forward_passes"] == 48 and many["conditions"]["context"]["sequences"] == 3
    assert many["conventional"]["per_token_pj"] < one["conventional"]["per_token_pj"]
    assert many["cim"]["per_token_pj"] < one["cim"]["per_token_pj"]
    # batch=B cycles through the prompts; the batch, the policy and the prompts must agree
    two = kvcim.run(prompt="Once", batch=2, steps=6, **NO_EVAL).to_dict()["batch"]["per_sequence"]
    assert [s["prompt"] for s in two] == ["Once", "Once"] and [s["seed"] for s in two] == [42, 43]
    with pytest.raises(kvcim.Error, match="batch"):
        kvcim.run(prompt=prompts, batch=2, steps=6, **NO_EVAL)
    with pytest.raises(kvcim.Error, match="batch"):
        kvcim.run(batch=0, steps=6, **NO_EVAL)
    with pytest.raises(kvcim.Error, match="prompt"):
        kvcim.run(prompt=[], steps=6, **NO_EVAL)
