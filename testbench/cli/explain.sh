#!/usr/bin/env bash
# kvcim explain prints the six parts of the story and writes JSON that holds them all.
set -u
KVCIM=$1; T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$KVCIM" explain --steps 12 --json "$T/e.json" > "$T/out" || { echo "FAIL: exit $?"; exit 1; }
for part in "1. A language model" "2. Text becomes token ids" "3. Ids become vectors" \
            "4. Every token leaves" "5. The KV cache keeps" "6. But the cache grows"; do
  grep -q "$part" "$T/out" || { echo "FAIL: missing '$part'"; cat "$T/out"; exit 1; }
done
/usr/bin/python3 - "$T/e.json" <<'PY' || exit 1
import json, sys
e = json.load(open(sys.argv[1]))
for key in ("predictions", "tokens", "vectors", "kv_notes", "kv_cache", "costs"):
    assert key in e, key
assert len(e["kv_cache"]["steps"]) == 12
assert all("cim" in s and "conventional" in s for s in e["costs"]["steps"])
print("ok explain json")
PY
"$KVCIM" explain --steps 0 2> "$T/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l < "$T/err")" -eq 1 ] || { echo "FAIL: --steps 0 gave exit $rc"; cat "$T/err"; exit 1; }
echo ok
