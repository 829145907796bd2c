#!/usr/bin/env bash
# kvcim baseline lists the named machines and prints the validation tables docs/baseline.md shows;
# kvcim map --baseline NAME adds the machine's step to the summary and the JSON, its energy the
# sum of its parts; an unknown name, or a regime the machine's HBM cannot hold, is one line
# naming it, exit code 2, and no JSON left behind.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"

"$KVCIM" baseline > "$T/list.txt"
check "baseline lists the machines" "2" "$(grep -cE '^(a100-80gb|h100-sxm): ' "$T/list.txt")"
"$KVCIM" baseline --validate > "$T/table.md"
check "validation table: one row per measurement" "4" "$(grep -c '^| C[0-9]' "$T/table.md")"
check "validation table: each row's modelled power" "4" "$(grep -cE '^\| C[0-9].*\| [0-9]+ W \|' "$T/table.md")"
check "validation: the batch sweep's rows" "7" "$(grep -cE '^\| [0-9]+ \| [0-9]+ W \|' "$T/table.md")"
check "docs/baseline.md holds both tables as printed" "yes 2" \
  "$($PY -c "
import sys
out, docs = open(sys.argv[1]).read(), open(sys.argv[2]).read()
tables = [t for t in out.split('\n\n') if t.strip()]
print('yes' if all(t.strip() in docs for t in tables) else 'no', len(tables))" "$T/table.md" "$SRC/docs/baseline.md")"

"$KVCIM" map --preset llama3-8b --context 1024 --policy sequences=64 --fit --baseline h100-sxm \
  --json "$T/map.json" > "$T/map.txt"
check "map --baseline: exit code 0" "0" "$?"
check "map --baseline: a machine line" "1" "$(grep -c '^machine   h100-sxm: .* mJ/token' "$T/map.txt")"
check "map --baseline: JSON step adds up" "valid" "$($PY -c "
import json, sys
m = json.load(open(sys.argv[1]))['baseline_machine']
s = m['energy_pj_per_token_split']
assert abs(sum(s.values()) - m['energy_pj_per_token']) <= 1e-9 * m['energy_pj_per_token'], 'split sums'
assert m['step_ns'] >= m['roofline_ns'], 'roofline'
assert m['regime'] == {'sequences': 64, 'context': 1024, 'weight_bits': 8, 'kv_bits': 8}, m['regime']
assert abs(s['static'] * 64 - m['machine']['idle_power_w'] * m['step_ns'] * 1e3) <= 1e-6 * s['static'] * 64, 'static'
assert abs(s['active'] * 64 - m['machine']['active_power_w'] * m['step_ns'] * 1e3) <= 1e-6 * s['active'] * 64, 'active'
assert m['power_w'] <= m['machine']['tdp_w'], 'power within the TDP'
assert set(m['provenance']) == set(m['machine']), 'every field has its provenance'
print('valid')
" "$T/map.json" 2>&1)"

bad "unknown machine" "--baseline" "'h200'" "a100-80gb" "h100-sxm" -- map --preset llama3-8b --baseline h200 --json "$T/bad.json"
bad "more than the HBM holds" "HBM capacity" "more than the machine's HBM holds" -- \
  map --preset llama2-70b --context 4096 --policy sequences=64 --fit --baseline h100-sxm --json "$T/bad.json"
bad "run: unknown machine" "--baseline" "'h200'" "a100-80gb" -- run --baseline h200 --steps 1 --json "$T/bad.json"
bad "a KV cache the HBM cannot hold" "HBM capacity = 80 GB" "KV cache of 256 sequence(s) x 8192 tokens" "65.47 GB more" -- \
  map --preset llama3-8b --context 8192 --policy sequences=256 --fit --baseline a100-80gb --json "$T/bad.json"
finish "kvcim baseline"
