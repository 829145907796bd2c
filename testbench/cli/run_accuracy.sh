#!/usr/bin/env bash
# kvcim run prints the evaluation's accuracy with its intervals (value ± half-width, or [lo, hi]
# when lopsided): the sampled sequences' KL, top-1 and ΔNLL, then apart the human-written text's
# ΔNLL, perplexities and KL, the same figures as the JSON report at the printed precision; with
# --eval-text '' it prints that nothing was evaluated and the report's perplexity is null.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"

"$KVCIM" run --quiet --steps 8 --eval-tokens 600 --json "$T/r.json" > "$T/out" || check "run" 0 $?
line() { grep -E "$1" "$T/out" | head -1; }
check "evaluation line: sampled tokens, sequences, seed" 1 \
  "$(line '^  evaluation, teacher-forced \(95% intervals\): [0-9,]+ tokens sampled from the reference in [0-9]+ sequences \(seed 1\)' | wc -l)"
INTERVAL='(± [0-9.e-]+|\[[0-9.e+-]+, [0-9.e+-]+\])'
check "KL, top-1 and ΔNLL each with an interval" 1 \
  "$(line "^  KL mean [0-9.e-]+ $INTERVAL nats   top-1 [0-9.]+ $INTERVAL   ΔNLL [+-][0-9.]+ $INTERVAL nats/token" | wc -l)"
check "the human-written text apart: tokens, sequences" 1 \
  "$(line '^  human-written text: [0-9,]+ tokens in [0-9]+ sequences' | wc -l)"
check "its ΔNLL, perplexities and KL with intervals" 1 \
  "$(line "^  ΔNLL [+-][0-9.]+ $INTERVAL nats/token   perplexity reference [0-9.]+ $INTERVAL, CIM [0-9.]+ $INTERVAL   KL mean" | wc -l)"
# the printed figures are the report's
expected=$($PY - "$T/r.json" <<'PYEOF'
import json, sys
e = json.load(open(sys.argv[1]))["accuracy"]["evaluation"]
print(f"{e['sampled_tokens']:,} tokens sampled from the reference in {e['sampled_sequences']} sequences")
print(f"top-1 {e['top1_agreement']['value']:.4f}")
t = e["text"]
print(f"human-written text: {t['tokens']:,} tokens in {t['sequences']} sequences")
print(f"perplexity reference {t['perplexity_reference']['value']:.3f}")
PYEOF
)
while IFS= read -r want; do
  grep -qF -- "$want" "$T/out" && check "printed: $want" 1 1 || check "printed: $want" "$want" "$(cat "$T/out")"
done <<< "$expected"

"$KVCIM" run --quiet --steps 8 --eval-text "" --json "$T/n.json" > "$T/none" || check "run without evaluation" 0 $?
check "without evaluation: says so" 1 "$(grep -c "no evaluation (--eval-text '')" "$T/none")"
check "without evaluation: perplexity null, evaluation null" "None None None" \
  "$($PY -c "import json,sys; a=json.load(open(sys.argv[1]))['accuracy']; print(a['perplexity']['reference'], a['perplexity']['cim'], a['evaluation'])" "$T/n.json")"

finish "run accuracy"
