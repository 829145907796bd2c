#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time, starting from the committed corpus
# (testbench/fuzz/corpus/<target>/: seeds and every crash reproducer found so far, each of which
# is therefore replayed first). New interesting inputs go to a working corpus in the build
# directory, never into the source tree. A crash, leak, timeout or sanitizer report fails the
# run and leaves the input in <build>/fuzz-artifacts/<target>/: commit it to the corpus folder
# as a regression once the bug is fixed (docs/reliability.md).
#
#   scripts/fuzz.sh [BUILD_DIR] TARGET [SECONDS]       (BUILD_DIR as for scripts/sanitize.sh)
#   scripts/fuzz.sh build/asan checkpoint 60
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build/asan}
TARGET=${2:?usage: $0 [BUILD_DIR] TARGET [SECONDS]}
SECS=${3:-20}
EXE=$BUILD/fuzz_$TARGET
SEEDS=$SRC/testbench/fuzz/corpus/$TARGET
[ -x "$EXE" ] || { echo "fuzz: $EXE is not built (scripts/sanitize.sh $BUILD build)"; exit 1; }
[ -d "$SEEDS" ] || { echo "fuzz: no seed corpus $SEEDS"; exit 1; }
WORK=$BUILD/fuzz-corpus/$TARGET
ART=$BUILD/fuzz-artifacts/$TARGET
mkdir -p "$WORK" "$ART"
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
LOG=$BUILD/fuzz-$TARGET.log
# -timeout: an input taking longer than 10 s is a hang; -rss_limit_mb: a reader that believes a
# size field and allocates gigabytes is a failure, not a slow success.
set +e
# A fixed seed (KVCIM_FUZZ_SEED) so that CI explores the same way run after run.
"$EXE" -seed="${KVCIM_FUZZ_SEED:-1}" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=8192 \
  -print_final_stats=1 -artifact_prefix="$ART/" "$WORK" "$SEEDS" >"$LOG" 2>&1
rc=$?
set -e
runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$LOG" | grep -Eo '[0-9]+$' || echo "?")
cov=$(grep -Eo 'cov: [0-9]+' "$LOG" | tail -1 || true)
if [ $rc -ne 0 ]; then
  grep -vE '^#[0-9]+' "$LOG" | tail -60
  echo "fuzz: $TARGET FAILED after $runs executions (exit $rc); reproducer(s) in $ART:"
  ls -l "$ART"
  exit 1
fi
echo "fuzz: $TARGET: $runs executions in $SECS s, $cov, corpus $(ls "$WORK" | wc -l) inputs, no failure"
