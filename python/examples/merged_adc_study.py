"""Merged-bit study: accuracy against energy per token as the ADC resolution of analog SRAM macros
falls, for a macro that converts every 1-bit weight slice (kind analog, shift-add recombining the
slices) and for one that merges the weight bits in analog before one conversion per output (kind
analog_merged: binary-weighted capacitors, C-2C ladders). Both are configs/hw/sram_analog.yaml
(256 x 256 one-bit cells, 2-bit input DAC, 256 rows per conversion, one ADC per 8 columns, read
noise 0.15 levels, priced by its technology table) with only `macro.kind`, `macro.adc_bits` and
the converter's range changed:

  * analog: the shipped range, 255 levels of a column's 768 (its step is one level at 8 bits);
  * analog_merged: its converter spans the merged range calibrated to --merged-clip of it (an
    assumption stated with the figures: a clipped range as the per-column converter has; the
    merged full scale, 255 x 768 levels, is reached only by every input and weight bit at 1).

Accuracy: the teacher-forced ΔNLL and KL against the float reference (95% bootstrap intervals) on
the embedded model (stories260K); energy: the CIM chip's pJ per token (`kvcim run`).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/merged_adc_study.py [--out DIR]
        [--bits 3,4,5,6,7,8,9,10] [--merged-clip 0.03125] [--steps N] [--eval-tokens N] [--eval-text F]

Writes DIR/results.json and DIR/merged_adc_study.png (docs/cim_macro.md, "Weight bits merged in
analog").
"""
import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kvcim  # noqa: E402
from kvcim.plot import interval_errorbar  # noqa: E402
from study_cli import study_parser, parse_study_args, save_figure  # noqa: E402

SPEC = pathlib.Path(kvcim.default_hardware_spec_path()).parent / "sram_analog.yaml"
KINDS = ("analog", "analog_merged")


def point(kind, bits, merged_clip, steps, eval_tokens, eval_text):
    spec = kvcim.HardwareSpec.from_yaml(SPEC).to_dict()
    spec["macro"].update(kind=kind, adc_bits=bits)
    if kind == "analog_merged":
        spec["macro"].update(adc_range="calibrated", adc_clip=merged_clip)
    options = {"eval_text_path": eval_text} if eval_text else {}
    report = kvcim.run(spec=spec, steps=steps, eval_tokens=eval_tokens, **options)
    ev = report.accuracy["evaluation"]
    cim = report.energy["cim"]
    return {"kind": kind, "adc_bits": bits, "adc_clip": spec["macro"]["adc_clip"],
            "delta_nll": ev["delta_nll"], "kl_mean": ev["kl_mean"], "top1": ev["top1_agreement"],
            "tokens": ev["tokens"], "pj_per_token": cim["per_token_pj"],
            "adc_pj_per_token": cim["breakdown"]["adc"] / report.energy["forward_passes"]}


def plot(points, path):
    fig, (ax_bits, ax_front) = plt.subplots(1, 2, figsize=(11, 4.2))
    for kind, marker in zip(KINDS, ("o", "s")):
        pts = sorted((p for p in points if p["kind"] == kind), key=lambda p: p["adc_bits"])
        if not pts:
            continue
        label = "per-slice conversion (analog)" if kind == "analog" else "merged weight bits (analog_merged)"
        interval_errorbar(ax_bits, [p["adc_bits"] for p in pts], [p["kl_mean"] for p in pts],
                          marker=marker, label=label)
        interval_errorbar(ax_front, [p["pj_per_token"] / 1e3 for p in pts], [p["kl_mean"] for p in pts],
                          marker=marker, label=label)
        for p in pts:
            ax_front.annotate(f"{p['adc_bits']}b", (p["pj_per_token"] / 1e3, p["kl_mean"]["value"]),
                              textcoords="offset points", xytext=(4, 4), fontsize=7)
    for ax in (ax_bits, ax_front):
        ax.set_yscale("symlog", linthresh=0.01)
        ax.set_ylabel("KL to the float reference (nats/token, 95% CI)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    ax_bits.set_xlabel("ADC bits")
    ax_front.set_xlabel("CIM energy per token (nJ)")
    ax_bits.set_title("accuracy against ADC resolution")
    ax_front.set_title("accuracy against energy (labels: ADC bits)")
    save_figure(fig, path)


def main():
    parser = study_parser(__doc__, "merged_adc_study", steps=64, steps_help="forward passes per run",
                          eval_help="teacher-forced evaluation tokens per point")
    parser.add_argument("--bits", default="3,4,5,6,7,8,9,10", help="ADC resolutions (each a row of the "
                        "technology table's energy_pj_by_adc_bits)")
    parser.add_argument("--merged-clip", type=float, default=1 / 32,
                        help="the merged converter's range as a fraction of the merged full scale")
    parser.add_argument("--eval-text", default="", help="evaluation text (default: the shipped one)")
    args, out = parse_study_args(parser)
    bits = [int(b) for b in args.bits.split(",")]
    points = []
    print(f"{'kind':>14} {'bits':>4} {'ΔNLL [95% CI]':>26} {'KL [95% CI]':>26} {'top-1':>6} "
          f"{'nJ/token':>9} {'ADC nJ/token':>12}")
    for kind in KINDS:
        for b in bits:
            p = point(kind, b, args.merged_clip, args.steps, args.eval_tokens, args.eval_text)
            points.append(p)
            d, k = p["delta_nll"], p["kl_mean"]
            print(f"{kind:>14} {b:>4} {d['value']:>+8.4f} [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}] "
                  f"{k['value']:>8.4f} [{k['ci_low']:.4f}, {k['ci_high']:.4f}] {p['top1']['value']:>6.3f} "
                  f"{p['pj_per_token'] / 1e3:>9.2f} {p['adc_pj_per_token'] / 1e3:>12.2f}", flush=True)
    (out / "results.json").write_text(json.dumps(points, indent=1))
    print(f"assumed: {SPEC.name} as shipped but for macro.kind and macro.adc_bits; the merged converter's "
          f"range {args.merged_clip:g} of the merged full scale; {args.steps} forward passes per run")
    plot(points, out / "merged_adc_study.png")


if __name__ == "__main__":
    main()
