#!/usr/bin/env bash
# kvcim run --html, in a real browser (headless Chromium, Debian package `chromium`, started twice):
# the page renders to a screenshot that is not blank, and every number of the rendered DOM that
# carries a data-key equals the JSON report's number at that key, exactly; the sections are there,
# the comparison's design points (best, equal throughput, iso-area, EDP) among them.
# An unwritable --html (or --json) path: one line naming it, exit 2, and no file written.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)

"$KVCIM" run --quiet --steps 8 --eval-tokens 300 --html "$T/r.html" --json "$T/r.json" > /dev/null ||
  check "run --html --json" 0 $?
check "both files written" "yes yes" "$([ -s "$T/r.html" ] && echo yes) $([ -s "$T/r.json" ] && echo yes)"
check "self-contained: no script, no external reference" 0 \
  "$(grep -ciE '<script|<link|src="http|href="http|@import|url\(' "$T/r.html")"

if [ -z "$CHROMIUM" ]; then
  check "chromium installed (scripts/setup.sh installs it)" found missing
else
  B=(--headless --no-sandbox --disable-gpu --user-data-dir="$T/profile" --no-first-run)
  "$CHROMIUM" "${B[@]}" --screenshot="$T/shot.png" --window-size=1200,3000 "file://$T/r.html" \
    > "$T/chromium.log" 2>&1 || check "chromium --screenshot" 0 $?
  "$CHROMIUM" "${B[@]}" --dump-dom "file://$T/r.html" > "$T/dom.html" 2> "$T/chromium2.log" ||
    check "chromium --dump-dom" 0 $?
  # The screenshot: many colours, a good share of pixels not white.
  got=$($PY - "$T/shot.png" <<'PYEOF'
import sys
import numpy as np
import matplotlib.image as mpimg
img = mpimg.imread(sys.argv[1])[:, :, :3]
colours = len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0))
nonwhite = float((img.min(axis=2) < 0.95).mean())
print("ok" if colours > 50 and nonwhite > 0.05 and img.shape[:2] == (3000, 1200)
      else f"colours {colours}, non-white {nonwhite:.3f}, size {img.shape}")
PYEOF
)
  check "screenshot 1200x3000, not blank" ok "$got"
  # The rendered DOM's numbers are the report's.
  got=$($PY - "$T/dom.html" "$T/r.json" <<'PYEOF'
import json, sys
from html.parser import HTMLParser
report = json.load(open(sys.argv[2]))

class Keys(HTMLParser):
    def __init__(self):
        super().__init__()
        self.keys, self.ids = [], set()
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-key" in a:
            self.keys.append((a["data-key"], a.get("data-value")))
        if "id" in a:
            self.ids.add(a["id"])

p = Keys()
p.feed(open(sys.argv[1], encoding="utf-8").read())
bad = []
for key, value in p.keys:
    node = report
    for part in key.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    shown = None if value == "null" else float(value)
    if not ((node is None and shown is None) or (node is not None and shown == float(node))):
        bad.append(f"{key}: DOM {value}, JSON {node}")
needed = ["energy.cim.per_token_pj", "energy.conventional.per_token_pj", "energy.conventional_over_cim",
          "energy.cim.breakdown.array", "energy.conventional.by_op.ffn_w1", "energy.cim.by_layer.0",
          "steps.kl.7", "steps.kv_occupancy.7", "accuracy.evaluation.delta_nll.ci_low",
          "accuracy.perplexity.cim", "mapping.macros_total",
          "comparison.best.conventional_over_cim", "comparison.best.edp_conventional_over_cim",
          "comparison.best.cim.edp_pj_s", "comparison.equal_throughput.tokens_per_s",
          "comparison.equal_throughput.conventional_over_cim", "comparison.equal_throughput.conventional.voltage_v"]
keys = {k for k, _ in p.keys}
missing = [k for k in needed if k not in keys]
sections = [s for s in ("summary", "comparison", "comparison-conditions", "comparison-iso-area",
                        "texts", "energy", "accuracy", "macro-map", "kv", "conditions",
                        "text-cim", "text-reference") if s not in p.ids]
print("ok" if not bad and not missing and not sections and len(p.keys) > 100
      else f"differ {bad[:5]}; missing keys {missing}; missing sections {sections}; {len(p.keys)} keys")
PYEOF
)
  check "every data-key number in the rendered DOM equals the JSON report's" ok "$got"
fi

# Bad output paths: one line naming the path, exit 2, nothing written (neither file).
"$KVCIM" run --quiet --steps 4 --eval-text '' --json "$T/bad.json" --html /nonexistent/dir/r.html \
  > /dev/null 2> "$T/err"
check "unwritable --html: exit 2" 2 $?
check "unwritable --html: one line naming the path" "1 1" \
  "$(wc -l < "$T/err" | tr -d ' ') $(grep -c '/nonexistent/dir/r.html' "$T/err")"
check "unwritable --html: no JSON written either" "" "$(ls "$T" | grep -E '^bad\.json' || true)"
"$KVCIM" run --quiet --steps 4 --eval-text '' --json /nonexistent/dir/r.json --html "$T/bad.html" \
  > /dev/null 2> "$T/err"
check "unwritable --json: exit 2, nothing written" "2 " "$? $(ls "$T" | grep -E '^bad\.html' || true)"
"$KVCIM" run --quiet --steps 4 --eval-text '' --html "$T" > /dev/null 2> "$T/err"
check "--html naming a folder: exit 2" "2 1" "$? $(wc -l < "$T/err" | tr -d ' ')"
finish "html report"
