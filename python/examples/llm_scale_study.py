"""LLM-scale study with the mapper's analytic model (no simulation; the whole study takes seconds):

  1. energy per token and tokens/s against the batch (1-64 sequences) for Llama-2-7B at 4096
     tokens of context, on a full-CIM chip (weights and KV in macros), an attention-only CIM chip
     (weights in HBM on a digital engine, the KV cache and attention in CIM tiles) and the
     conventional engine;
  2. energy per token against the context (512-32k tokens), batch 1, same three designs;
  3. the full-CIM chip's area against the context for Llama-3-8B (GQA, 8 KV heads) and
     Llama-2-7B (MHA, 32 KV heads): grouped-query attention keeps a 4x smaller KV cache.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/llm_scale_study.py [--out DIR]

Every chip is sized for its model and batch (`organization.macros: auto`); every figure is at the
specs' comparison node with every energy term (`conditions` in the printed table).
"""
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kvcim  # noqa: E402
from study_cli import study_parser, parse_study_args, finish_axes, save_figure  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BATCHES = [1, 2, 4, 8, 16, 32, 64]
CONTEXTS = [512, 1024, 2048, 4096, 8192, 16384, 32768]
DESIGNS = {"full CIM": "full_cim.yaml", "attention-only CIM": "attention_only.yaml"}


def point(shape, spec, sequences, context):
    """Figures of one design point and its chip's area (mm2)."""
    p = kvcim.map(shape, str(ROOT / "configs" / "hw" / spec), f"sequences={sequences}",
                  context=context)
    f = p.figures
    return f, p.conditions()["area_mm2"]  # with the KV tiles' logic


def log_log(ax, rows, x, y, series, xlabel, ylabel, title=None):
    """One line per series name (rows: tuples, the name at index 1) on log-log axes."""
    for name in series:
        pts = [(r[x], r[y]) for r in rows if r[1] == name]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    finish_axes(ax, xlabel, ylabel, title)


def batch_study(out):
    rows = []
    for b in BATCHES:
        for name, spec in DESIGNS.items():
            f, area = point("llama2-7b", spec, b, 4096)
            rows.append((b, name, f["energy_per_token_pj"]["cim"] * 1e-12,
                         f["batch"]["tokens_per_s"]["cim"], area["cim"]))
        rows.append((b, "conventional", f["energy_per_token_pj"]["conventional"] * 1e-12,
                     f["batch"]["tokens_per_s"]["conventional"], area["baseline"]))
    print("Llama-2-7B, 4096 tokens of context")
    print(f"{'batch':>5} {'design':>20} {'J/token':>10} {'tokens/s':>12} {'mm2':>10}")
    for b, name, j, tps, mm2 in rows:
        print(f"{b:>5} {name:>20} {j:>10.4g} {tps:>12.4g} {mm2:>10.4g}")
    fig, (ax_e, ax_t) = plt.subplots(1, 2, figsize=(11, 4))
    designs = [*DESIGNS, "conventional"]
    log_log(ax_e, rows, 0, 2, designs, "batch (sequences per step)", "energy per token (J)")
    log_log(ax_t, rows, 0, 3, designs, "batch (sequences per step)", "tokens/s")
    fig.suptitle("Llama-2-7B decode at 4096 tokens of context (mapper, sized chips)")
    save_figure(fig, out / "energy_throughput_vs_batch.png")
    return rows


def context_study(out):
    rows = []
    for ctx in CONTEXTS:
        for name, spec in DESIGNS.items():
            f, _ = point("llama2-7b", spec, 1, ctx)
            rows.append((ctx, name, f["energy_per_token_pj"]["cim"] * 1e-12))
        rows.append((ctx, "conventional", f["energy_per_token_pj"]["conventional"] * 1e-12))
    print("\nLlama-2-7B, batch 1")
    print(f"{'context':>7} {'design':>20} {'J/token':>10}")
    for ctx, name, j in rows:
        print(f"{ctx:>7} {name:>20} {j:>10.4g}")
    fig, ax = plt.subplots(figsize=(6, 4))
    log_log(ax, rows, 0, 2, [*DESIGNS, "conventional"], "context (tokens)", "energy per token (J)",
            "Llama-2-7B, batch 1")
    save_figure(fig, out / "energy_vs_context.png")
    return rows


def area_study(out):
    rows = []
    for ctx in CONTEXTS:
        for shape in ("llama2-7b", "llama3-8b"):
            _, area = point(shape, "full_cim.yaml", 1, ctx)
            rows.append((ctx, shape, area["cim"]))
    print("\nfull-CIM chip area, batch 1")
    print(f"{'context':>7} {'model':>10} {'mm2':>10}")
    for ctx, shape, mm2 in rows:
        print(f"{ctx:>7} {shape:>10} {mm2:>10.4g}")
    fig, ax = plt.subplots(figsize=(6, 4))
    log_log(ax, rows, 0, 2, ("llama2-7b", "llama3-8b"), "context (tokens)", "CIM chip area (mm2)",
            "Weights and KV cache in CIM: MHA against GQA")
    save_figure(fig, out / "area_vs_context.png")
    return rows


def main():
    parser = study_parser(__doc__, "llm_scale_study")
    args, out = parse_study_args(parser)
    batch_study(out)
    context_study(out)
    area_study(out)
    cond = kvcim.HardwareSpec.from_yaml(ROOT / "configs" / "hw" / "full_cim.yaml").conditions()
    print(f"\nconditions: both sides at {cond['node_nm']:g} nm, {cond['voltage_v']:.2f} V; "
          f"conventional: {cond['baseline']['mac']} MACs, weights and KV from off-chip memory; "
          f"included: {', '.join(cond['included'])}")
    for name in ("energy_throughput_vs_batch.png", "energy_vs_context.png", "area_vs_context.png"):
        print(f"wrote {out / name}")


if __name__ == "__main__":
    main()
