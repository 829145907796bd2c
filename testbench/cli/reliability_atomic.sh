#!/usr/bin/env bash
# Output files of the kvcim command under SIGKILL: a logits or run process killed at random
# moments (seeded delays across its whole run) never leaves a truncated file at the target path:
# the target is absent or byte-identical to a complete output. Also: every writer in the sources
# goes through kvcim::write_file_atomic (the mid-write kills of that function itself are in
# testbench/tests/reliability/test_atomic_write.cpp).
set -u
KVCIM=$1; SRC=$2
source "$(dirname "$0")/lib/common.sh"

# --- no writer bypasses write_file_atomic ------------------------------------------------------
# Allowed: the function itself, and write_checkpoint (its own temporary file + rename).
raw=$(grep -rnE 'std::ofstream|fopen\(|FILE ?\*|O_WRONLY|O_CREAT' "$SRC"/cmodel "$SRC"/mapper "$SRC"/runtime "$SRC"/python/src \
        --include='*.cpp' --include='*.hpp' 2>/dev/null \
      | grep -vE '^[^:]*/cmodel/io\.cpp:|^[^:]*/cmodel/model/checkpoint\.cpp:' || true)
check "every output of the libraries and the CLI goes through write_file_atomic" "" "$raw"

# --- SIGKILL at random moments -----------------------------------------------------------------
# kill_loop NAME TARGET ROUNDS -- COMMAND...: the reference output first, then killed runs.
kill_loop() {
  local name=$1 target=$2 rounds=$3; shift 4
  rm -f "$target"
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || { check "$name: reference run" 0 $?; return; }
  end=$(date +%s%N)
  local ms=$(( (end - start) / 1000000 + 1 ))
  cp "$target" "$T/reference"
  local truncated=0 whole=0 absent=0 r delay
  RANDOM=4242  # seeded delays
  for r in $(seq 1 "$rounds"); do
    [ $((r % 2)) -eq 0 ] && rm -f "$target"   # half the rounds start without a previous output
    "$@" >/dev/null 2>&1 &
    local pid=$!
    delay=$(( RANDOM % (ms + ms / 5) ))
    sleep "$(awk -v d="$delay" 'BEGIN { printf "%.3f", d / 1000 }')"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if [ ! -e "$target" ]; then absent=$((absent + 1))
    elif cmp -s "$target" "$T/reference"; then whole=$((whole + 1))
    else truncated=$((truncated + 1)); fi
  done
  echo "     $name: $rounds kills over ~${ms} ms runs: $whole whole, $absent absent, $truncated truncated"
  check "$name: never a truncated file at the target" 0 "$truncated"
  rm -f "$(dirname "$target")"/*.tmp.* 2>/dev/null
}
kill_loop "logits --out" "$T/l.npy" 12 -- "$KVCIM" logits --tokens "$(seq -s, 1 256)" --out "$T/l.npy"
kill_loop "run --json" "$T/r.json" 8 -- "$KVCIM" run --quiet --steps 12 --eval-text "" --json "$T/r.json"

finish atomic-output
