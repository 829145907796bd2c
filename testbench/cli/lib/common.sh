# Sourced by the CLI contract tests (testbench/cli/*.sh): a scratch folder $T removed on exit,
# `check NAME EXPECTED GOT` (prints ok/FAIL, counts failures), `finish WHAT` (the summary line;
# exit 1 if any check failed) and `bad` (below: a bad-input case). Kept out of testbench/cli/ itself, whose *.sh files are the tests.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fails=$((fails+1)); fi; }
finish() { [ $fails -eq 0 ] && echo "all $1 checks passed" || { echo "$fails $1 check(s) failed"; exit 1; }; }
# ran_ok NAME ARGS...: kvcim ARGS --json $T/NAME.json, its output in $T/NAME.txt and $T/NAME.err,
# exits 0.
ran_ok() {
  local name=$1; shift
  "$KVCIM" "$@" --json "$T/$name.json" > "$T/$name.txt" 2> "$T/$name.err"
  check "$name: exit code 0" "0" "$?"
}
# bad NAME [SUBSTRING... --] ARGS...: kvcim ARGS fails as bad input must: exit code 2 within 120 s,
# one line on stderr containing every SUBSTRING, and no output left behind (no $T/out* and no
# $T/bad.json: the names the tests give their output files). kvcim's own arguments never hold a
# bare "--", so without one every argument after NAME is kvcim's.
bad() {
  local name=$1; shift
  local want=() a
  for a in "$@"; do
    if [ "$a" = "--" ]; then
      while [ "$1" != "--" ]; do want+=("$1"); shift; done
      shift
      break
    fi
  done
  rm -rf "$T"/out* "$T/bad.json"
  timeout 120 "$KVCIM" "$@" >/dev/null 2>"$T/err"; local rc=$?
  check "$name: exit code 2" "2" "$rc"
  check "$name: one line on stderr" "1" "$(wc -l < "$T/err")"
  for a in "${want[@]}"; do
    grep -qF -- "$a" "$T/err" && check "$name: names '$a'" 1 1 || check "$name: names '$a'" "$a" "$(cat "$T/err")"
  done
  check "$name: nothing written" "none" "$(ls -d "$T"/out* "$T/bad.json" 2>/dev/null || echo none)"
}
# json_asserts FILE BODY: runs the Python BODY with the parsed FILE as `d` (json and sys imported);
# prints what BODY prints, or the failed assertion.
json_asserts() {
  /usr/bin/python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$2" "$1" 2>&1
}
