#!/usr/bin/env bash
# The whole default `kvcim run --attention-backend rtl` (the generation and the 10,000-token
# evaluation, every attention step on the Verilated tile) completes with 1 and with 2 threads,
# gives the C-model tile's report (every figure; only the backend option differs), and keeps a
# fixed number of threads and a bounded memory while it runs (sampled every 0.2 s). A deep test
# (CTest label deep, `make test-deep`): about 3 minutes of CPU per run.
set -u
KVCIM=$1; SRC=$2; PY=/usr/bin/python3
source "$(dirname "$0")/lib/common.sh"

"$KVCIM" run --quiet --json "$T/cim.json" > /dev/null || check "run with the C-model tile" 0 $?
for threads in 2 1; do
  # kvcim under a watchdog (timeout), its threads and resident memory sampled from /proc
  out=$($PY - "$KVCIM" "$T/rtl$threads.json" "$threads" <<'PYEOF'
import subprocess, sys, time
kvcim, out, threads = sys.argv[1:4]
p = subprocess.Popen(["timeout", "1200", kvcim, "run", "--quiet", "--attention-backend", "rtl",
                      "--threads", threads, "--json", out], stdout=subprocess.DEVNULL)
most_threads = most_rss = 0
while p.poll() is None:
    try:
        child = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
        for line in open(f"/proc/{child[0]}/status"):
            k, v = line.split(":", 1)
            if k == "Threads": most_threads = max(most_threads, int(v))
            if k == "VmRSS": most_rss = max(most_rss, int(v.split()[0]))
    except (OSError, IndexError, ValueError):
        pass
    time.sleep(0.2)
print(p.returncode, most_threads, most_rss // 1024)
PYEOF
)
  read -r rc most_threads rss_mb <<< "$out"
  check "--threads $threads: exit code" 0 "$rc"
  check "--threads $threads: at most $threads threads" 1 "$([ "$most_threads" -ge 1 ] && [ "$most_threads" -le "$threads" ] && echo 1 || echo "$most_threads")"
  check "--threads $threads: peak resident memory under 256 MB" 1 "$([ "$rss_mb" -gt 0 ] && [ "$rss_mb" -lt 256 ] && echo 1 || echo "$rss_mb MB")"
  same=$($PY - "$T/cim.json" "$T/rtl$threads.json" <<'PYEOF'
import json, sys
c, r = (json.load(open(f)) for f in sys.argv[1:3])
for rep in (c, r):
    rep["options"].pop("attention_backend", None)
    rep["options"].pop("threads", None)
print("same" if c == r else "differ")
PYEOF
)
  check "--threads $threads: the report equals the C-model tile's" same "$same"
done
finish "rtl default run"
