#!/usr/bin/python3
"""The RTL attention backend against the C-model tile, whole processes, in one run.

Runs `kvcim run --quiet` with `--attention-backend cim` (the C-model tile) and with
`--attention-backend rtl` (every attention step on the Verilated tile) in alternation, N pairs
(the order inside a pair alternates), on the embedded model and the default spec unless extra
kvcim arguments are given after `--`. Prints each run's wall and CPU (user + system) time, the
medians, the median of the per-pair ratios rtl / cim, and the load average before and after
(the ratio of wall times depends on the machine's load; CPU times less so).

    /usr/bin/python3 benchmarks/rtl_backend_time.py --kvcim build/kvcim --pairs 3
    /usr/bin/python3 benchmarks/rtl_backend_time.py --kvcim build/kvcim -- --eval-tokens 2000
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time


def run(kvcim, backend, extra):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([kvcim, "run", "--quiet", "--attention-backend", backend, *extra],
                   check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kvcim", required=True)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("extra", nargs="*", help="more kvcim run arguments (after --)")
    a = ap.parse_args()
    if a.pairs < 1:
        sys.exit("rtl_backend_time.py: --pairs must be at least 1")
    print(f"load average before: {os.getloadavg()[0]:.2f}; kvcim run {' '.join(a.extra) or '(defaults)'}")
    rows = {"cim": [], "rtl": []}
    ratios_wall, ratios_cpu = [], []
    for i in range(a.pairs):
        order = ["cim", "rtl"] if i % 2 == 0 else ["rtl", "cim"]
        got = {b: run(a.kvcim, b, a.extra) for b in order}
        for b in order:
            rows[b].append(got[b])
            print(f"pair {i + 1}: {b:3s} wall {got[b][0]:7.2f} s  cpu {got[b][1]:7.2f} s", flush=True)
        ratios_wall.append(got["rtl"][0] / got["cim"][0])
        ratios_cpu.append(got["rtl"][1] / got["cim"][1])
    for b in ("cim", "rtl"):
        print(f"{b}: median wall {statistics.median(w for w, _ in rows[b]):.2f} s, "
              f"median cpu {statistics.median(c for _, c in rows[b]):.2f} s")
    print(f"rtl / cim: wall {statistics.median(ratios_wall):.2f} x, cpu {statistics.median(ratios_cpu):.2f} x "
          f"(median of {a.pairs} pairs)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
