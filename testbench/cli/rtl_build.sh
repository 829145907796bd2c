#!/usr/bin/env bash
# kvcim rtl build | list and the on-demand build through kvcim run: two `kvcim rtl build` of one
# configuration at once both succeed, one building and one finding it cached, and the cache holds
# one module; `rtl list` shows it; `kvcim run --attention-backend rtl` then loads it without a
# build line and reports what the C-model tile reports. Bad input: one line, exit 2, nothing in the
# cache. One small build (head_dim 8, 16 tokens: ~10 s). Skipped in a build without the RTL.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"
if ! "$KVCIM" cosim --trials 1 >/dev/null 2>&1; then
  echo "no RTL in this build: skipped"; finish "rtl build"; exit 0
fi
export KVCIM_RTL_CACHE="$T/cache"  # never the user's cache
HW="$SRC/configs/hw/sram_digital.yaml"
mkdir -p "$T/hw"
sed "s|\.\./tech/|$SRC/configs/tech/|; s|\.\./macros/|$SRC/configs/macros/|; s/^  tokens_per_tile: 64 /  tokens_per_tile: 16 /" "$HW" > "$T/hw/t16.yaml"
sed "s|\.\./tech/|$SRC/configs/tech/|; s|\.\./macros/|$SRC/configs/macros/|; s/^  prob_bits: 12/  prob_bits: 6/" "$HW" > "$T/hw/p6.yaml"

# bad input first: nothing may reach the cache
bad "rtl build: a parameter the RTL cannot be built at" "tile: prob_bits = 6" "the RTL builds prob_bits 7..16" -- rtl build --hw "$T/hw/p6.yaml"
bad "run: a parameter the RTL cannot be built at" "tile: prob_bits = 6" -- run --quiet --eval-text "" --steps 8 --hw "$T/hw/p6.yaml" --attention-backend rtl --json "$T/out.json"
: > "$T/file"
KVCIM_RTL_CACHE="$T/file/cache" bad "rtl build: a cache folder that cannot be created" "KVCIM_RTL_CACHE: folder = $T/file/cache" -- rtl build --hw "$T/hw/t16.yaml"
check "bad input leaves no cache" "no" "$([ -e "$T/cache" ] && echo yes || echo no)"

# two builds of one configuration at once
"$KVCIM" rtl build --hw "$T/hw/t16.yaml" > "$T/b1" 2> "$T/e1" & p1=$!
"$KVCIM" rtl build --hw "$T/hw/t16.yaml" > "$T/b2" 2> "$T/e2" & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
check "two builds at once: both exit 0" "0 0" "$r1 $r2"
check "two builds at once: one builds, one finds it cached" "1 1" \
  "$(cat "$T/b1" "$T/b2" | grep -c ': built in ') $(cat "$T/b1" "$T/b2" | grep -c ': already cached: ')"
check "one progress line, from the build" "1" "$(cat "$T/e1" "$T/e2" | grep -c '^kvcim: building the RTL tile hd8_t16_kv8_p12 (first use; cached in ')"
check "the cache holds one module and no temporary folder" "1" "$(ls "$T/cache" | grep -v '\.lock$' | grep -c '^hd8_t16_kv8_p12-[0-9a-f]\{16\}$')"
check "nothing else in the cache" "0" "$(ls -A "$T/cache" | grep -v '\.lock$' | grep -vc '^hd8_t16_kv8_p12-')"
"$KVCIM" rtl list > "$T/list"
check "rtl list: the cached build" "1" "$(grep -c "^  hd8_t16_kv8_p12-[0-9a-f]\{16\}  $T/cache/hd8_t16_kv8_p12-.*/kvcim_rtl_tile_hd8_t16_kv8_p12.so$" "$T/list")"
check "rtl list: the linked tile" "linked: hd8_t64_kv8_p12" "$(head -1 "$T/list")"

# the run loads it (no build line) and reports what the C-model tile reports
RUN=(run --eval-text "" --steps 20 --hw "$T/hw/t16.yaml")
"$KVCIM" "${RUN[@]}" --attention-backend rtl --json "$T/rtl.json" > /dev/null 2> "$T/run_err"; rc=$?
check "run on the cached tile: exit 0" "0" "$rc"
check "run on the cached tile: no build" "0" "$(grep -c 'building' "$T/run_err")"
"$KVCIM" "${RUN[@]}" --attention-backend cim --quiet --json "$T/cim.json" > /dev/null
check "run on the cached tile: the C-model tile's report" "same" "$($PY - "$T/rtl.json" "$T/cim.json" <<'PYEOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for r in (a, b):
    del r["options"]["attention_backend"]
print("same" if a == b else "different")
PYEOF
)"

# a damaged module where the cache keeps it: refused in one line naming it
so=$(ls "$T"/cache/hd8_t16_kv8_p12-*/kvcim_rtl_tile_hd8_t16_kv8_p12.so)
head -c 4096 "$so" > "$T/trunc" && cat "$T/trunc" > "$so"
bad "run: a truncated module in the cache" "$so: module = (truncated)" "delete $(dirname "$so") to rebuild it" -- "${RUN[@]}" --quiet --attention-backend rtl --json "$T/out.json"

finish "rtl build"
