#!/usr/bin/env python3
"""The synthesis table of docs/attention_tile.md ("Synthesis"), from the reports the rtl.synth.*
tests write: one row per configuration and unit.

Usage: table.py <build>/rtl_synth/*.json
"""
import json
import sys

UNITS = ["k_macro", "v_macro", "softmax_unit", "tile_glue", "cim_attention_tile"]


def main(paths):
    reports = []
    for p in paths:
        with open(p) as f:
            reports.append(json.load(f))
    reports.sort(key=lambda r: (r["params"]["HEAD_DIM"], r["params"]["TOKENS"], r["params"]["KV_BITS"]))
    print("| configuration | unit | cells | flip-flops | levels | NAND2 eq. | area (µm², 0.49/NAND2) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in reports:
        for name in UNITS:
            u = r["units"][name]
            label = f"**{name}**" if name == "cim_attention_tile" else f"`{name}`"
            print(f"| {r['config']} | {label} | {u['cells']:,} | {u['flip_flops']:,} | {u['levels']} | "
                  f"{u['nand2_eq']:,} | {u['area_um2']:,} |")
    for r in reports:
        w = r.get("whole_tile")
        if w:
            s = w["synthesised"]
            dev = ", ".join(f"{k.replace('_', '-')} {v:+.1%}" for k, v in w["deviation"].items())
            print(f"\n{r['config']}, whole tile flattened: {s['cells']:,} cells, {s['flip_flops']:,} "
                  f"flip-flops, {s['levels']} levels, {s['nand2_eq']:,} NAND2 eq. (against the sum of "
                  f"the units: {dev})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
