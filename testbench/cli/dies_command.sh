#!/usr/bin/env bash
# Dies and links in `kvcim map` and `kvcim run`: a model larger than a reticle is cut into dies,
# each within the limit, and the report gives the dies, link bits, energy and latency per token;
# a package the spec describes wrongly (a die larger than the wafer, a link without its energy or
# bandwidth, a reticle not positive or smaller than one macro) is one line and exit code 2.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"

"$KVCIM" map --preset llama2-7b --json "$T/l7.json" > "$T/l7.txt" 2> "$T/l7.err"
check "llama2-7b: exit code 0" "0" "$?"
check "llama2-7b: dies and links lines" "2" "$(grep -cE '^dies +[0-9]+ dies of at most 858 mm2|^links +[0-9]+ crossed per token' "$T/l7.txt")"
check "llama2-7b: dies within the reticle, links priced" "valid" "$($PY -c "
import json, sys
d = json.load(open(sys.argv[1]))['dies']
assert d['count'] == len(d['dies']) > 1, 'several dies'
assert all(x['area_mm2'] <= d['limit_mm2'] * (1 + 1e-12) for x in d['dies']), 'within the limit'
assert abs(sum(c['bits_per_token'] for c in d['cuts']) - d['link_bits_per_token']) < 1e-6, 'bits'
assert abs(d['link_bits_per_token'] * d['link']['energy_pj_per_bit'] - d['link_energy_pj_per_token']) < 1e-6, 'energy'
assert d['link_latency_ns_per_token'] >= len(d['cuts']) * d['link']['latency_ns'] > 0, 'latency'
print('valid')" "$T/l7.json" 2>&1)"
"$KVCIM" map --preset llama2-7b --hw "$SRC/configs/hw/wafer_scale.yaml" > "$T/w.txt" 2>&1
check "wafer-scale: llama2-7b on one wafer, stated as such" "1" "$(grep -cE '^dies +1 die of at most 46225 mm2 \(wafer-scale\)' "$T/w.txt")"
"$KVCIM" run --steps 8 --eval-text '' --json "$T/run.json" > "$T/run.txt" 2>&1
check "run: exit code 0" "0" "$?"
check "run: the report's mapping has its dies" "1" "$($PY -c "import json;print(json.load(open('$T/run.json'))['mapping']['dies']['count'])")"
check "run: the summary names the dies" "1" "$(grep -cE '^ +dies +1 die of at most 858 mm2' "$T/run.txt")"

# bad input: one line on stderr naming the field, exit code 2, nothing written
spec="$SRC/configs/hw/sram_digital.yaml"
mkdir "$T/hw" && ln -s "$(cd "$SRC" && pwd)/configs/tech" "$T/tech"  # the specs' relative technology paths
# NAME|TEXT OF THE SPEC|REPLACED BY|WHAT THE ERROR NAMES
cases=(
  "a die larger than the wafer|reticle_mm2: 858 |reticle_mm2: 50000 |larger than the wafer"
  "reticle of 0 mm2|reticle_mm2: 858 |reticle_mm2: 0 |die.reticle_mm2"
  "negative reticle|reticle_mm2: 858 |reticle_mm2: -5 |die.reticle_mm2"
  "a wafer larger than 300 mm|wafer_mm2: 46225 |wafer_mm2: 100000 |die.wafer_mm2"
  "a link without its energy|energy_pj_per_bit: 0.25 ||energy_pj_per_bit"
  "a link without its bandwidth|bandwidth_gb_s: 1317 ||bandwidth_gb_s"
  "a die smaller than one macro|reticle_mm2: 858 |reticle_mm2: 0.001 |smaller than one macro"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name from to want <<< "$c"
  sed "s/^  $from/  $to/" "$spec" > "$T/hw/$name.yaml"
  bad "$name" "$want" -- map --hw "$T/hw/$name.yaml" --json "$T/bad.json"
done
bad "run: a link without its bandwidth" "bandwidth_gb_s" -- run --hw "$T/hw/a link without its bandwidth.yaml" --steps 2 --json "$T/bad.json"

finish dies
