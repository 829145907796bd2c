#!/usr/bin/env bash
# kvcim compare prints the headline table the README shows (so the README cannot go stale: it must
# hold the command's output verbatim); kvcim run and kvcim map report the same comparison of the
# same workload under the same JSON names; bad lists are one line naming the option, exit code 2.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"

"$KVCIM" compare > "$T/table.md"
check "compare: exit code 0" "0" "$?"
check "compare: a row per batch (1, 8, 64)" "3" "$(grep -cE '^\| (1|8|64) \| best: ' "$T/table.md")"
check "README.md holds the table as printed" "yes" \
  "$($PY -c "import sys; print('yes' if open(sys.argv[1]).read() in open(sys.argv[2]).read() else 'no')" "$T/table.md" "$SRC/README.md")"

"$KVCIM" run --steps 12 --eval-text '' --json "$T/run.json" > /dev/null
"$KVCIM" map --context 12 --json "$T/map.json" > "$T/map.txt"
check "run and map: one comparison, one vocabulary" "same" "$($PY -c "
import json, sys
r = json.load(open(sys.argv[1]))['comparison']
m = json.load(open(sys.argv[2]))['comparison']
print('same' if r == m else 'run %s\nmap %s' % (r, m))
" "$T/run.json" "$T/map.json" 2>&1)"
check "map summary: both at their best with EDP" "1" "$(grep -c 'each at its best throughput: conventional / CIM energy .*x, EDP ' "$T/map.txt")"
check "map summary: at equal throughput" "1" "$(grep -c 'at equal throughput (' "$T/map.txt")"

# a broken SRAM table (configs/memory/sram_nodes.yaml) in a data folder of its own: one line, exit 2
mkdir -p "$T/data/configs/memory"
for f in "$SRC"/*; do [ "$(basename "$f")" = configs ] || ln -s "$(realpath "$f")" "$T/data/"; done
for f in "$SRC"/configs/*; do [ "$(basename "$f")" = memory ] || ln -s "$(realpath "$f")" "$T/data/configs/"; done
sram="$SRC/configs/memory/sram_nodes.yaml"
sed 's/{value: 0.1953125, source/{value: -0.19, source/' "$sram" > "$T/data/configs/memory/sram_nodes.yaml"
KVCIM_DATA_DIR="$T/data" bad "negative SRAM read energy" "sram_nodes.yaml" "nodes[1].read_pj_per_bit" -- compare
grep -v "read_pj_per_bit: {value: 0.15625" "$sram" > "$T/data/configs/memory/sram_nodes.yaml"
KVCIM_DATA_DIR="$T/data" bad "the largest node without its SRAM read energy" "nodes[0].read_pj_per_bit" -- map --json "$T/bad.json"
cp "$sram" "$T/data/configs/memory/sram_nodes.yaml"
KVCIM_DATA_DIR="$T/data" "$KVCIM" compare --batches 1 --contexts 64 > /dev/null
check "the copied data folder itself is good" "0" "$?"

bad "batch 0" "--batches" "batch = '0'" -- compare --batches 1,0
bad "context not a number" "--contexts" "context = 'x'" -- compare --contexts 64,x
finish "kvcim compare"
