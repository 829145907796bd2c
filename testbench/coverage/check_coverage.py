#!/usr/bin/env python3
"""Runs the rtl suite against the coverage build of the tile (test_rtl_cov), merges the coverage
files it writes (one per tile, harness: $KVCIM_RTL_COVERAGE_DIR) with verilator_coverage and fails
below the targets (CTest rtl.coverage; docs/attention_tile.md, "Coverage").

Targets:
  * lines: >= --line-target percent of the source lines of rtl/ that carry line or branch coverage
    points are hit (a line counts as hit when every point on it is hit in some instance);
  * every named functional cover point (the `cover property` statements of
    rtl/cim_attention_tile_assertions.sv: each state of each state machine, back-pressure on every
    port, a full and an empty tile, each clamp at its limit, the exponent table's zero shift) is hit.
Toggle coverage is reported, not enforced.

Writes <dir>/merged.dat, <dir>/merged.info (lcov, --write-info), <dir>/annotated/ (--annotate) and
<dir>/summary.json.
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys


def points(dat):
    """Yields (keys dict, count) for every coverage point of a Verilator .dat file."""
    for line in open(dat, encoding="latin-1"):
        m = re.match(r"C '(.*)' (\d+)\s*$", line)
        if not m:
            continue
        keys = {}
        for field in m.group(1).split("\x01"):
            if "\x02" in field:
                k, v = field.split("\x02", 1)
                keys[k] = v
        yield keys, int(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--verilator-coverage", default="verilator_coverage")
    ap.add_argument("--rtl", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--line-target", type=float, default=95.0)
    ap.add_argument("--skip-run", action="store_true", help="reuse the files in --dir/raw")
    a = ap.parse_args()
    raw = os.path.join(a.dir, "raw")
    if not a.skip_run:
        shutil.rmtree(a.dir, ignore_errors=True)
        os.makedirs(raw)
        env = dict(os.environ, KVCIM_RTL_COVERAGE_DIR=raw)
        r = subprocess.run([a.binary, "--gtest_brief=1"], env=env)
        if r.returncode != 0:
            print("rtl.coverage: the rtl suite failed on the coverage build")
            return 1
    files = sorted(glob.glob(os.path.join(raw, "*.dat")))
    if not files:
        print(f"rtl.coverage: no coverage files in {raw}")
        return 1
    merged = os.path.join(a.dir, "merged.dat")
    subprocess.run([a.verilator_coverage, "--write", merged] + files, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([a.verilator_coverage, "--write-info", os.path.join(a.dir, "merged.info"), merged],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([a.verilator_coverage, "--annotate", os.path.join(a.dir, "annotated"), merged],
                   check=True, stdout=subprocess.DEVNULL)

    rtl = os.path.realpath(a.rtl)
    line_pts = collections.defaultdict(int)   # (file, line, col/comment) -> max count over instances
    toggle = [0, 0]
    covers = collections.defaultdict(int)     # cover point name -> count summed over instances
    for keys, count in points(merged):
        page = keys.get("page", "")
        f = os.path.realpath(keys.get("f", ""))
        if page.startswith("v_toggle"):
            toggle[0] += count > 0
            toggle[1] += 1
        elif page.startswith("v_user"):
            name = keys.get("o", "") or keys.get("h", "")
            name = name.split(".")[-1]
            covers[name] += count
        elif (page.startswith("v_line") or page.startswith("v_branch")) and f.startswith(rtl + os.sep):
            key = (os.path.basename(f), int(keys.get("l", 0)), keys.get("n", ""), keys.get("o", ""))
            line_pts[key] = max(line_pts[key], count)
    # Line view of verilator_coverage --write-info (lcov DA records), the assertions file left out.
    lcov = [0, 0]
    src = None
    for rec in open(os.path.join(a.dir, "merged.info")):
        if rec.startswith("SF:"):
            src = os.path.realpath(rec[3:].strip())
        elif rec.startswith("DA:") and src and src.startswith(rtl + os.sep) \
                and not src.endswith("_assertions.sv"):
            lcov[0] += int(rec[3:].split(",")[1]) > 0
            lcov[1] += 1
    lcov_pct = 100.0 * lcov[0] / max(1, lcov[1])
    lines = collections.defaultdict(lambda: True)
    for (f, l, _, _), c in line_pts.items():
        lines[(f, l)] = lines[(f, l)] and c > 0
    hit = sum(lines.values())
    pct = 100.0 * hit / max(1, len(lines))
    missed = sorted(k for k, v in lines.items() if not v)
    unhit_covers = sorted(n for n, c in covers.items() if c == 0)
    per_file = collections.defaultdict(lambda: [0, 0])
    for (f, _), v in lines.items():
        per_file[f][0] += v
        per_file[f][1] += 1
    summary = {"line_percent": round(pct, 2), "lines_hit": hit, "lines": len(lines),
               "lcov_line_percent": round(lcov_pct, 2), "lcov_lines": f"{lcov[0]}/{lcov[1]}",
               "per_file": {f: f"{h}/{n}" for f, (h, n) in sorted(per_file.items())},
               "missed_lines": [f"{f}:{l}" for f, l in missed],
               "toggle_percent": round(100.0 * toggle[0] / max(1, toggle[1]), 2),
               "cover_points": dict(sorted(covers.items())),
               "line_target": a.line_target}
    with open(os.path.join(a.dir, "summary.json"), "w") as out:
        json.dump(summary, out, indent=1)
    print(f"rtl coverage: lines with points {hit}/{len(lines)} = {pct:.2f}%, lcov lines "
          f"{lcov[0]}/{lcov[1]} = {lcov_pct:.2f}% (target {a.line_target}% for both), "
          f"toggle {summary['toggle_percent']}%, cover points {len(covers) - len(unhit_covers)}/"
          f"{len(covers)} hit")
    for f, v in summary["per_file"].items():
        print(f"  {f}: {v} lines")
    for name, c in sorted(covers.items()):
        print(f"  cover {name}: {c}")
    ok = True
    if pct < a.line_target or lcov_pct < a.line_target:
        print("rtl.coverage: line coverage below target; missed: " + ", ".join(summary["missed_lines"]))
        ok = False
    if not covers:
        print("rtl.coverage: no functional cover points found")
        ok = False
    if unhit_covers:
        print("rtl.coverage: cover points never hit: " + ", ".join(unhit_covers))
        ok = False
    print(f"report: {os.path.join(a.dir, 'summary.json')}, annotated sources in "
          f"{os.path.join(a.dir, 'annotated')}, lcov {os.path.join(a.dir, 'merged.info')}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
