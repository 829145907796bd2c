"""KV Pareto study: what each choice of KV storage costs in accuracy and saves in energy, on the
embedded model (stories260K) simulated in `kvcim run`. Digital SRAM-CIM attention tiles at K/V
bits 8..4 with per-token or per-channel K scales (KIVI), and the analog gain-cell tile
(configs/hw/gain_cell_kv.yaml, its noise as shipped) at several score/output ADC resolutions and
cell sizes. For each: the teacher-forced accuracy against the float reference (ΔNLL with its 95%
bootstrap interval), the KV attention energy per token (scores, softmax, weighted sum, K/V writes)
and the bits one token's K and V take; the non-dominated points (no other point has both less
energy and less ΔNLL) form the Pareto front.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/kv_pareto_study.py [--out DIR]

The README shows the full-size plot (docs/images/kv_pareto.png); --steps, --eval-tokens and
--quick make a small run (the test runs it small).
"""
import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kvcim  # noqa: E402
from kvcim.plot import interval_errorbar, pareto_front  # noqa: E402
from study_cli import study_parser, parse_study_args, save_figure, finish_axes, interval_text  # noqa: E402

KV_OPS = ("attn_scores", "softmax", "attn_weighted_sum", "kv_write")
HW = pathlib.Path(kvcim.default_hardware_spec_path()).parent
# (label, spec file, kv fields)
DIGITAL = [(f"digital K{k}/V{v} {s}", "sram_digital.yaml", {"k_bits": k, "v_bits": v, "k_scale": s})
           for k, v, s in ((8, 8, "token"), (8, 8, "channel"), (8, 6, "token"), (8, 4, "token"),
                           (8, 4, "channel"), (6, 6, "channel"), (6, 4, "channel"), (4, 4, "channel"))]
ANALOG = [(f"analog {c}-bit cells, {a}-bit ADC", "gain_cell_kv.yaml", {"cell_bits": c, "adc_bits": a})
          for c, a in ((4, 6), (4, 8), (4, 10), (8, 6), (8, 8), (8, 10))]


def point(label, spec_file, kv, steps, eval_tokens):
    spec = kvcim.HardwareSpec.from_yaml(HW / spec_file).to_dict()
    spec["kv"].update(kv)
    report = kvcim.run(spec=spec, steps=steps, eval_tokens=eval_tokens)
    energy = report.energy
    kv_pj = sum(energy["cim"]["by_op"].get(op, 0.0) for op in KV_OPS) / energy["forward_passes"]
    bits = spec["kv"].get("k_bits", spec["precision"]["kv_bits"]) + spec["kv"].get("v_bits", spec["precision"]["kv_bits"])
    return {"label": label, "tile": "analog" if "analog" in label else "digital", "kv": kv,
            "delta_nll": report.accuracy["evaluation"]["delta_nll"],
            "tokens": len(report.accuracy["evaluation"]["per_token"]["kl"]),
            "kv_pj_per_token": kv_pj, "kv_bits_per_channel": bits}


def main():
    parser = study_parser(__doc__, "kv_pareto_study", steps=64,
                          eval_help="tokens sampled for the teacher-forced evaluation (plus the shipped text)")
    parser.add_argument("--quick", action="store_true", help="three configurations of each tile")
    args, out = parse_study_args(parser)
    configs = DIGITAL[:3] + ANALOG[:3] if args.quick else DIGITAL + ANALOG
    points = [point(*c, args.steps, args.eval_tokens) for c in configs]
    front = [points[i] for i in pareto_front(
        [(p["kv_pj_per_token"], p["delta_nll"]["value"]) for p in points], minimise_y=True)]
    for p in points:
        p["pareto"] = any(p is f for f in front)
    (out / "results.json").write_text(json.dumps(points, indent=1) + "\n")

    print(f"{'KV tile':<34} {'bits/ch':>7} {'ΔNLL nats/token (95% CI)':>30} {'KV pJ/token':>12} front")
    for p in points:
        print(f"{p['label']:<34} {p['kv_bits_per_channel']:>7} {interval_text(p['delta_nll'])} "
              f"{p['kv_pj_per_token']:>12.4g} {'*' if p['pareto'] else ''}")

    fig, ax = plt.subplots(figsize=(8, 5))
    for tile, marker in (("digital", "o"), ("analog", "s")):
        pts = [p for p in points if p["tile"] == tile]
        interval_errorbar(ax, [p["kv_pj_per_token"] for p in pts], [p["delta_nll"] for p in pts],
                          fmt=marker, label=f"{tile} tile")
        for p in pts:
            ax.annotate(p["label"].replace("digital ", "").replace("analog ", ""),
                        (p["kv_pj_per_token"], p["delta_nll"]["value"]), fontsize=6,
                        xytext=(3, 3), textcoords="offset points")
    ax.plot([p["kv_pj_per_token"] for p in front], [p["delta_nll"]["value"] for p in front],
            color="black", linestyle="--", linewidth=1, label="Pareto front")
    ax.set_yscale("symlog", linthresh=0.01)
    finish_axes(ax, "KV attention energy per token (pJ; scores, softmax, weighted sum, K/V writes)",
                "ΔNLL vs float (nats/token, 95% CI)",
                f"stories260K, {args.steps} steps, {points[0]['tokens']} evaluated tokens")
    save_figure(fig, out / "kv_pareto.png")


if __name__ == "__main__":
    main()
