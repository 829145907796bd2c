#!/usr/bin/env bash
# kvcim macro: every published macro spec prints its figures with their conditions and writes
# JSON whose figures follow from its own numbers; `kvcim map` reads a macro spec too; bad input is
# one line naming the file and the field, exit code 2, and no JSON left behind.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"

validate() {
  $PY -c "
import json, sys
d = json.load(open(sys.argv[1]))
p = d['published']
assert p['id'] == sys.argv[2], 'id'
macs = d['macs']
assert abs(d['tops_per_w'] - 2 * macs / d['energy_pj']) <= 1e-9 * d['tops_per_w'], 'TOPS/W = 2 MACs / energy'
assert abs(d['gops'] - 2 * macs / d['latency_ns']) <= 1e-9 * d['gops'], 'GOPS = 2 MACs / latency'
assert abs(d['tops_per_mm2'] - d['gops'] / 1000 / d['area_mm2']['total']) <= 1e-9 * d['tops_per_mm2'], 'TOPS/mm2'
assert abs(d['fj_per_mac'] - 1000 * d['energy_pj'] / macs) <= 1e-9 * d['fj_per_mac'], 'fJ/MAC'
assert abs(sum(d['energy_pj_by_event'].values()) - d['energy_pj']) <= 1e-6 * d['energy_pj'], 'breakdown sums'
assert abs(sum(d['energy_pj_by_component'].values()) - d['energy_pj']) <= 1e-6 * d['energy_pj'], 'components sum'
assert abs(d['tops_per_w_error'] - (d['tops_per_w'] / p['tops_per_w'] - 1)) <= 1e-12, 'error'
c = d['conditions']
assert c['node_nm'] > 0 and c['voltage_v'] > 0 and c['included'], 'conditions'
print('valid')
" "$1" "$2" 2>&1
}

for f in "$SRC"/configs/macros/*.yaml; do
  n=$(basename "$f" .yaml)
  "$KVCIM" macro --hw "$f" --json "$T/$n.json" > "$T/$n.txt" 2> "$T/$n.err"
  check "$n: exit code 0" "0" "$?"
  check "$n: prints TOPS/W against the published figure" "1" "$(grep -c '^  TOPS/W .* published ' "$T/$n.txt")"
  check "$n: prints the conditions" "1" "$(grep -c '^  conditions: .* nm, .* V' "$T/$n.txt")"
  check "$n: JSON valid, figures follow from its numbers" "valid" "$(validate "$T/$n.json" "$n")"
done

"$KVCIM" map --hw "$SRC/configs/macros/C7.yaml" --policy overflow=spill > /dev/null 2> "$T/map.err"
check "kvcim map reads a macro spec" "0" "$?"

# a macro spec kvcim macro refuses: the case NAME, the FIELD its one line names, the arguments
bad_macro() { bad "$1" "$2" -- macro "${@:3}" --json "$T/bad.json"; }
# (bad specs are written beside the shipped ones' folder layout so ../tech paths resolve)
mkdir -p "$T/macros"; ln -s "$SRC/configs/tech" "$T/tech"
bad_macro "missing file" "none.yaml" --hw "$T/macros/none.yaml"
sed '/^published:/,$d' "$SRC/configs/macros/C7.yaml" > "$T/macros/nopub.yaml"
bad_macro "no published block" "published" --hw "$T/macros/nopub.yaml"
grep -v '^  tops_per_w:' "$SRC/configs/macros/C7.yaml" > "$T/macros/notopsw.yaml"
bad_macro "no published.tops_per_w" "tops_per_w" --hw "$T/macros/notopsw.yaml"
sed 's/^  role: calibrated/  role: fitted/' "$SRC/configs/macros/C7.yaml" > "$T/macros/role.yaml"
bad_macro "unknown role" "role" --hw "$T/macros/role.yaml"
sed 's/^    stated: false/    stated: true/' "$SRC/configs/macros/C1.yaml" > "$T/macros/stated.yaml"
bad_macro "assumption on a stated precision" "assumption" --hw "$T/macros/stated.yaml"
sed '/^published:/,$ s/^  node_nm: 22$/  node_nm: 28/' "$SRC/configs/macros/C11.yaml" > "$T/macros/node.yaml"
bad_macro "published node differs from the comparison node" "node_nm" --hw "$T/macros/node.yaml"
"$KVCIM" macro >/dev/null 2>"$T/err"
check "no --hw: exit code 2" "2" "$?"
finish "kvcim macro"
