"""ADC-bits study: what the ADC resolution of analog SRAM CIM macros costs in accuracy and saves in
energy, on the embedded model (stories260K), simulated token by token beside the float reference.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/adc_bits_study.py [--out DIR]
        [--steps N] [--workers N] [--scheduler tcp://HOST:PORT]

Every point is a whole generation (`evaluate: run`) on configs/hw/sram_analog.yaml with the ADC
resolution and the rows summed per conversion changed. The results file DIR/results.jsonl is
resumable: re-running evaluates only the points not yet there. The figures (Pareto front,
accuracy against ADC bits, energy breakdown) are written by kvcim.plot into DIR.
"""
import pathlib

import kvcim
from kvcim import plot
from study_cli import study_parser, parse_study_args  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    parser = study_parser(__doc__, "adc_bits_study", steps=24, steps_help="forward passes per run")
    parser.add_argument("--workers", type=int, default=2, help="local worker processes")
    parser.add_argument("--scheduler", help="a Dask scheduler instead of local processes")
    args, out = parse_study_args(parser)

    spec = {
        "evaluate": "run",
        "hardware": str(ROOT / "configs" / "hw" / "sram_analog.yaml"),
        "run": {"prompt": "Once upon a time", "steps": args.steps},
        "grid": {
            "macro.adc_bits": [3, 4, 5, 6, 8],
            # Fewer rows per conversion: smaller column sums, so fewer ADC bits are lossless,
            # but more conversions per matrix-vector product.
            "macro.rows_per_cycle": [16, 64],
        },
    }
    result = kvcim.sweep(spec, out / "results.jsonl", workers=None if args.scheduler
                         else args.workers, scheduler=args.scheduler)
    print(f"{result.ok} points ok, {result.errors} failed -> {result.path}")
    for r in result.records:
        if r["status"] != "ok":
            print(f"  failed {r['overrides']}: {r['error']}")

    print(f"\n{'adc bits':>8} {'rows/conv':>9} {'top-1':>6} {'KL mean':>9} {'pJ/token CIM':>13} "
          f"{'ADC share':>9} {'conv./CIM':>9}")
    for r in sorted(plot.ok_records(result.records),
                    key=lambda r: (r["overrides"]["hardware.macro.rows_per_cycle"],
                                   r["overrides"]["hardware.macro.adc_bits"])):
        a, e = r["result"]["accuracy"], r["result"]["energy"]
        cim = e["cim"]
        print(f"{r['overrides']['hardware.macro.adc_bits']:>8} "
              f"{r['overrides']['hardware.macro.rows_per_cycle']:>9} "
              f"{a['top1_agreement']:>6.3f} {a['kl_mean']:>9.3g} {cim['per_token_pj']:>13.4g} "
              f"{cim['breakdown']['adc'] / cim['total_pj']:>9.1%} "
              f"{e['conventional_over_cim']:>9.2f}")

    for path in plot.plot_file(out / "results.jsonl", out):
        print("wrote", path)
    # Lower KL is better: a second front with the KL divergence as the accuracy figure.
    print("wrote", plot.pareto(result.records, out / "pareto_kl.png",
                               accuracy_key="accuracy.kl_mean"))


if __name__ == "__main__":
    main()
