"""python/examples/kv_token_study.py, small: the token-granular KV recipes against full attention
(its own file, so that it has its own CTest timeout beside the other examples)."""
import json

from conftest import SOURCE_DIR
from test_examples import run_example


def test_kv_token_study(tmp_path):
    short = SOURCE_DIR / "testdata" / "eval" / "tinystories_eval.txt"
    out = run_example("kv_token_study.py", tmp_path, "--steps", "64", "--eval-tokens", "1000",
                      "--eval-text", str(short), "--windows", "16")
    points = {p["policy"]: p for p in json.loads((tmp_path / "results.json").read_text())}
    assert len(points) == 4 and "full attention" in out
    full = points["full attention"]
    for policy in ("window=16,granularity=token", "window=16,sinks=4,granularity=token",
                   "window=16,evict=h2o,granularity=token"):
        # keeping 16 tokens of sequences of some 350 costs accuracy beyond the intervals
        assert points[policy]["kl_mean"]["ci_low"] > full["kl_mean"]["ci_high"], policy
        assert points[policy]["delta_nll"]["ci_low"] > full["delta_nll"]["ci_high"], policy
        assert points[policy]["text_delta_nll"] is not None
    # the recipes keep different tokens, so they measure differently
    assert len({json.dumps(p["kl_mean"]) for p in points.values()}) == 4
