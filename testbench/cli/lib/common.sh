# Sourced by the CLI contract tests (testbench/cli/*.sh): a scratch folder $T removed on exit,
# `check NAME EXPECTED GOT` (prints ok/FAIL, counts failures) and `finish WHAT` (the summary line;
# exit 1 if any check failed). Kept out of testbench/cli/ itself, whose *.sh files are the tests.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fails=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fails=$((fails+1)); fi; }
finish() { [ $fails -eq 0 ] && echo "all $1 checks passed" || { echo "$fails $1 check(s) failed"; exit 1; }; }
