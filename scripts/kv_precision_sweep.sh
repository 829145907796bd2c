#!/bin/bash
# K/V precision and layout on the embedded model: kvcim run on sram_digital.yaml with
# kv.k_bits = kv.v_bits = b (8 6 4 3 2) and kv.k_scale token|channel, plus the analog KV spec.
# Prints one line per run: bits, layout, the evaluation's KL / top-1 / dNLL (95% intervals) and the
# CIM energy per token. Usage: scripts/kv_precision_sweep.sh [build dir] (docs/attention_tile.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/hw"
ln -s "$root/configs/tech" "$tmp/tech"
run() {  # name spec
  local out
  out=$("$build/kvcim" run --hw "$2" --quiet)
  printf '%-22s %s | %s\n' "$1" "$(grep -E '^  KL mean' <<<"$out" | sed 's/^ *//')" \
    "$(grep -E '^  total' <<<"$out" | awk '{print $2, $3}')"
}
for scale in token channel; do
  for b in 8 6 4 3 2; do
    spec="$tmp/hw/kv_${b}_${scale}.yaml"
    sed -e "s/^  exp_frac: 6$/  exp_frac: 6\n  k_bits: $b\n  v_bits: $b\n  k_scale: $scale/" \
      "$root/configs/hw/sram_digital.yaml" >"$spec"
    run "digital K/V $b $scale" "$spec"
  done
done
run "analog gain_cell_kv" "$root/configs/hw/gain_cell_kv.yaml"
