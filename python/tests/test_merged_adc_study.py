"""python/examples/merged_adc_study.py, small: converting every weight slice falls off a cliff one
ADC bit below lossless; merging the weight bits before one conversion per output degrades
gradually and costs less energy per token (its own file, for its own CTest timeout)."""
import json

from conftest import SOURCE_DIR
from test_examples import run_example


def test_merged_adc_study(tmp_path):
    short = SOURCE_DIR / "testdata" / "eval" / "tinystories_eval.txt"
    run_example("merged_adc_study.py", tmp_path, "--steps", "8", "--eval-tokens", "300",
                "--eval-text", str(short), "--bits", "6,8")
    points = {(p["kind"], p["adc_bits"]): p for p in json.loads((tmp_path / "results.json").read_text())}
    assert len(points) == 4
    kl = {k: p["kl_mean"] for k, p in points.items()}
    # per-slice: lossless at 8 bits (one level per code), lost two bits below (every slice's
    # rounding weighted by its significance)
    assert kl[("analog", 6)]["ci_low"] > kl[("analog", 8)]["ci_high"] + 5.0
    # merged: the same two bits cost an order of magnitude less than the per-slice cliff
    assert kl[("analog_merged", 6)]["ci_high"] < kl[("analog", 6)]["ci_low"]
    assert kl[("analog_merged", 6)]["value"] < kl[("analog", 6)]["value"] / 4
    assert kl[("analog_merged", 8)]["value"] <= kl[("analog_merged", 6)]["value"]
    # one conversion per output instead of one per weight bit: less energy at the same resolution
    for bits in (6, 8):
        assert points[("analog_merged", bits)]["adc_pj_per_token"] < points[("analog", bits)]["adc_pj_per_token"] / 4
        assert points[("analog_merged", bits)]["pj_per_token"] < points[("analog", bits)]["pj_per_token"]
    assert (tmp_path / "merged_adc_study.png").stat().st_size > 1000
