"""KV page-size study: how the KV-cache page size trades fragmentation against block-table size,
and what it does to capacity and energy, on the embedded model (stories260K) and on Llama-2-7B's
shape, with the mapper's analytic model (no simulation: the whole sweep takes seconds).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/kv_page_size_study.py [--out DIR]

A starting point: change the grid (page sizes, contexts, concurrent sequences, the hardware file)
and re-run; points already evaluated are read back from DIR/results.jsonl, not recomputed.
"""
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kvcim  # noqa: E402
from kvcim import plot  # noqa: E402
from study_cli import study_parser, parse_study_args, save_figure, finish_axes  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [4, 8, 16, 32, 64]


def study(shape, hardware, contexts, **policy):
    return {
        "evaluate": "map",
        "hardware": str(ROOT / "configs" / "hw" / hardware),
        # Every sequence grown to run.context tokens; pages that do not fit spill off-chip.
        "policy": {"overflow": "spill", **policy},
        "run": {"shape": shape},
        "grid": {"policy.tokens_per_page": PAGES, "run.context": contexts},
    }


def main():
    parser = study_parser(__doc__, "kv_page_size_study")
    parser.add_argument("--workers", type=int, default=2)
    args, out = parse_study_args(parser)

    cases = {
        "stories260k": study("stories260k", "sram_digital.yaml", [24, 100, 400], sequences=4),
        # 7B weights cannot all sit in 8 MiB of cells: half the macros are kept for the KV cache
        # and the weights that do not fit are fetched from HBM.
        "llama2-7b": study("llama2-7b", "sram_digital.yaml", [100, 1000, 4000],
                           kv_fraction=0.5),
    }
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (name, spec) in zip(axes, cases.items()):
        result = kvcim.sweep(spec, out / f"{name}.jsonl", workers=args.workers)
        print(f"\n{name}: {result.ok} points ok, {result.errors} failed")
        print(f"{'page':>5} {'context':>8} {'frag.':>7} {'util.':>7} {'pages':>7} "
              f"{'offchip tok':>11} {'pJ/token CIM':>13} {'conventional':>13}")
        lines = {}
        for r in sorted(plot.ok_records(result.records),
                        key=lambda r: (r["overrides"]["run.context"],
                                       r["overrides"]["policy.tokens_per_page"])):
            page = r["overrides"]["policy.tokens_per_page"]
            context = r["overrides"]["run.context"]
            f = r["result"]["figures"]
            e = r["result"]["energy"]
            print(f"{page:>5} {context:>8} {f['fragmentation']:>7.3f} {f['utilization']:>7.3f} "
                  f"{f['kv']['pages_in_use']:>7} {f['kv']['tokens']['offchip']:>11} "
                  f"{e['cim']['per_token_pj']:>13.4g} {e['conventional']['per_token_pj']:>13.4g}")
            lines.setdefault(context, []).append((page, f["fragmentation"]))
        for context, pts in sorted(lines.items()):
            ax.plot([p for p, _ in pts], [v for _, v in pts], marker="o",
                    label=f"context {context}")
        ax.set_xscale("log", base=2)
        finish_axes(ax, "tokens per KV page", "fragmentation (allocated, unused cells)", name)
    save_figure(fig, out / "fragmentation_vs_page_size.png")


if __name__ == "__main__":
    main()
