#!/usr/bin/env bash
# kvcim macro: every published macro spec prints its figures beside the paper's with the model's
# stated uncertainty, and writes JSON whose figures follow from its own components; sweeps of
# supply and input bits price one point each; bad input is one line naming the file and the
# field, exit code 2, and no JSON left behind.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"

validate() {
  json_asserts "$1" "
assert d['published']['tops_per_w'] > 0 and d['published']['source'], 'published'
assert 0 <= d['uncertainty']['held_out_median_abs_error'] <= d['uncertainty']['held_out_worst_abs_error'], 'uncertainty'
for p in d['points']:
    macs, e = p['macs'], p['compared_energy_pj']
    assert abs(p['tops_per_w'] - 2 * macs / e) <= 1e-9 * p['tops_per_w'], 'TOPS/W = 2 MACs / energy'
    assert abs(p['gops'] - 2 * macs / p['latency_ns']) <= 1e-9 * p['gops'], 'GOPS = 2 MACs / latency'
    assert abs(p['tops_per_mm2'] - p['gops'] / 1000 / p['area_mm2']) <= 1e-9 * p['tops_per_mm2'], 'TOPS/mm2'
    assert abs(p['fj_per_mac'] - 1000 * e / macs) <= 1e-9 * p['fj_per_mac'], 'fJ/MAC'
    assert abs(sum(c['energy_pj'] for c in p['components']) - p['energy_pj']) <= 1e-9 * p['energy_pj'], 'components sum'
    assert abs(sum(c['area_mm2'] for c in p['components']) - p['area_mm2']) <= 1e-9 * p['area_mm2'], 'areas sum'
    for c in p['components']:
        k = [x['value'] for x in d['uncertainty']['constants'] if x['name'] == c['constant']]
        assert not c['constant'] or abs(c['feature'] * k[0] - c['energy_pj']) <= 1e-9 * c['energy_pj'], c['name']
    if p['published_point']:
        assert abs(p['tops_per_w_error'] - (p['tops_per_w'] / d['published']['tops_per_w'] - 1)) <= 1e-12, 'error'
print('valid', len(d['points']))
"
}

for f in "$SRC"/configs/macros/*.yaml; do
  n=$(basename "$f" .yaml)
  ran_ok "$n" macro --hw "$f"
  check "$n: prints TOPS/W against the published figure" "1" "$(grep -c '^    TOPS/W .* published .* error .*(model)' "$T/$n.txt")"
  check "$n: prints the model's uncertainty" "1" "$(grep -c '^  model uncertainty: held-out median' "$T/$n.txt")"
  check "$n: JSON valid, figures follow from its components" "valid 1" "$(validate "$T/$n.json")"
done

"$KVCIM" macro --hw "$SRC/configs/macros/jia_jssc20.yaml" --vdd 0.9:1.2:0.1 --input-bits 1,2,4,8 --json "$T/sweep.json" > "$T/sweep.txt"
check "sweep: exit code 0" "0" "$?"
check "sweep: 4 supplies x 4 input widths" "valid 16" "$(validate "$T/sweep.json")"
check "sweep: points off the published one carry no error" "16" "$(grep -c '(not a published point: no error)' "$T/sweep.txt")"

# a user's own macro, in a folder of its own with its own citation, is priced without editing a list
sed -e 's/^  role: fit/  role: held_out/' -e 's/^  source: .*/  source: "My own macro, my lab notebook p. 12"/' \
  "$SRC/configs/macros/jia_jssc20.yaml" > "$T/mine.yaml"
"$KVCIM" macro --hw "$T/mine.yaml" > "$T/mine.txt"
check "a user's own macro: exit code 0" "0" "$?"
check "a user's own macro: its citation printed" "1" "$(grep -c 'source: My own macro' "$T/mine.txt")"

$PY "$SRC/scripts/fit_macro_model.py" "$KVCIM" --check > "$T/fit.txt" 2>&1
check "the fit script reproduces the shipped constants and held-out errors" "0" "$?"

# a macro spec kvcim macro refuses: the case NAME, the FIELD its one line names, the arguments
bad_macro() { bad "$1" "$2" -- macro "${@:3}" --json "$T/bad.json"; }
J="$SRC/configs/macros/jia_jssc20.yaml"
bad_macro "missing file" "none.yaml" --hw "$T/none.yaml"
sed '/^published:/,$d' "$J" > "$T/nopub.yaml"
bad_macro "no published block" "published" --hw "$T/nopub.yaml"
grep -v '^  tops_per_w:' "$J" > "$T/notopsw.yaml"
bad_macro "no published.tops_per_w" "tops_per_w" --hw "$T/notopsw.yaml"
sed 's/^  role: fit/  role: calibrated/' "$J" > "$T/role.yaml"
bad_macro "unknown role" "role" --hw "$T/role.yaml"
grep -v '^  adc_bits:' "$J" > "$T/noadc.yaml"
bad_macro "converter without its bits" "adc_bits" --hw "$T/noadc.yaml"
sed 's/^  readout: sar/  readout: flash/' "$J" > "$T/flash.yaml"
bad_macro "unknown converter kind" "readout" --hw "$T/flash.yaml"
sed 's/^  input_encoding: bit_serial/  input_encoding: thermometer/' "$J" > "$T/enc.yaml"
bad_macro "unknown input encoding" "input_encoding" --hw "$T/enc.yaml"
sed 's/^  vdd_v: 0.85/  vdd_v: 0.6/' "$J" > "$T/vdd.yaml"
bad_macro "supply outside the node's fitted range" "vdd_v = 0.6" --hw "$T/vdd.yaml"
bad_macro "swept supply outside the range" "vdd_v = 0.6" --hw "$J" --vdd 0.6:1.0:0.1
bad_macro "bad sweep" "--vdd" --hw "$J" --vdd 1.0:0.6:0.1
bad_macro "bad input bits" "--input-bits" --hw "$J" --input-bits 1,x
"$KVCIM" macro >/dev/null 2>"$T/err"
check "no --hw: exit code 2" "2" "$?"
finish "kvcim macro"
