#!/usr/bin/env python3
"""Derives the fitted constants of a class technology table from its calibration macro
(docs/calibration.md). Prints the values to write into configs/tech/<table>.yaml; it edits nothing.

    python3 scripts/fit_macro_tables.py build/kvcim configs/macros/C7.yaml

Energy: one factor f = predicted TOPS/W / published TOPS/W, by which every macro event energy of
the operation (at the macro's node) is multiplied; the printed values are each event's energy at
the node times f. Rerun after writing them: f prints as 1.000 (the fit is a fixed point).
Time and area (when the paper gives TOPS/mm^2): the macro area that makes the published
TOPS/mm^2 at the predicted GOPS, and what that leaves per ADC beside the cells (analog), or the
macro cycle that gives it with the table's cell area (digital).
"""
import json
import os
import subprocess
import sys
import tempfile

EVENTS = ["row_activation", "column_read", "adc_conversion", "adder_op", "shift_add_op"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    kvcim, spec = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "m.json")
        subprocess.run([kvcim, "macro", "--hw", spec, "--json", out], check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            j = json.load(f)
    pub = j["published"]
    f = j["tops_per_w"] / pub["tops_per_w"]
    print(f"{pub['id']}: predicted {j['tops_per_w']:.4g} TOPS/W, published {pub['tops_per_w']}; energy factor f = {f:.4f}")
    for e in EVENTS:
        n = j["events"].get(e, 0)
        pj = j["energy_pj_by_event"].get(e, 0.0)
        if n and pj:
            print(f"  {e}: {pj / n:.6g} pJ at the node -> x f = {pj / n * f:.6g} pJ")
    if "tops_per_mm2" in pub:
        need = j["gops"] / 1000.0 / pub["tops_per_mm2"]
        a = j["area_mm2"]
        print(f"  area: predicted {a['total']:.5g} mm^2 (cells {a['cells']:.5g}, ADCs {a['adcs']:.5g}); "
              f"the published TOPS/mm^2 needs {need:.5g} mm^2")
        cycle = j["latency_ns"] / j["events"]["macro_cycle"]
        print(f"  with the area kept: macro cycle {cycle:.5g} ns -> {cycle * j['tops_per_mm2'] / pub['tops_per_mm2']:.5g} ns")
        if a["adcs"] > 0:
            print(f"  with the cells and cycle kept: ADC area x {(need - a['cells']) / a['adcs']:.5g} "
                  f"({need - a['cells']:.5g} mm^2 of ADCs instead of {a['adcs']:.5g})")


if __name__ == "__main__":
    main()
