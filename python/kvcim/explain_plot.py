"""Figures of a `kvcim explain --json` file: the attention heat map over the prompt, the KV-cache
size and the data moved per step, and the energy per step (moving vs computing, conventional vs
CIM) with and without the cache. `python3 -m kvcim.plot explain.json --out DIR` draws them."""
import os

from ._core import Error
from .figure_file import plt, save as _save


def is_explain(data):
    return isinstance(data, dict) and "kv_notes" in data and "kv_cache" in data


def attention_heatmap(data, out):
    notes = data["kv_notes"]
    layers = notes["layers"]
    if not layers:
        raise Error("explain: kv_notes.layers = []: no attention to draw")
    weights = [l["weights"] for l in layers]
    n = max(len(w) for w in weights)
    grid = [w + [0.0] * (n - len(w)) for w in weights]
    fig, ax = plt.subplots(figsize=(max(6, n * 0.35), 1.2 + 0.45 * len(grid)))
    im = ax.imshow(grid, aspect="auto", cmap="viridis")
    ax.set_yticks(range(len(grid)), [f"layer {l['layer']}" for l in layers])
    ax.set_xlabel("earlier position")
    ax.set_title(f"head-averaged attention of the token at position {notes['position']} ({notes['token']!r})")
    fig.colorbar(im, ax=ax, label="weight")
    return _save(fig, out)


def kv_and_traffic(data, out):
    steps = data["costs"]["steps"]
    pos = [s["position"] for s in steps]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(pos, [s["kv_cache_bytes_fp32"] for s in steps], label="KV cache size (fp32)")
    if steps and "weight_bytes_moved" in steps[0]:
        ax.plot(pos, [s["weight_bytes_moved"] for s in steps], label="weight bytes moved per step")
        ax.plot(pos, [s["kv_bytes_moved"] for s in steps], label="KV bytes moved per step")
    ax.set_xlabel("position")
    ax.set_ylabel("bytes")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("the KV cache grows with the context; every step moves the weights and all of it")
    return _save(fig, out)


def energy_per_step(data, out):
    steps = data["costs"]["steps"]
    if not steps or "conventional" not in steps[0]:
        raise Error("explain: costs.steps = no energy: run kvcim explain with a hardware spec")
    pos = [s["position"] for s in steps]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, suffix, title in ((axes[0], "", "with the KV cache"),
                              (axes[1], "_without_cache", "without the cache (recompute K, V)")):
        for side, style in (("conventional", "-"), ("cim", "--")):
            key = side + suffix
            if key not in steps[0]:
                continue
            ax.plot(pos, [s[key]["moving_pj"] for s in steps], style, label=f"{side}: moving data")
            ax.plot(pos, [s[key]["computing_pj"] for s in steps], style, label=f"{side}: computing")
        ax.set_xlabel("position")
        ax.set_yscale("log")
        ax.set_title(title)
    axes[0].set_ylabel("energy per step (pJ)")
    axes[1].legend(fontsize=8)
    return _save(fig, out)


def plot_explain(data, out_dir, fmt="png"):
    return [attention_heatmap(data, os.path.join(out_dir, f"attention.{fmt}")),
            kv_and_traffic(data, os.path.join(out_dir, f"kv_cache_and_traffic.{fmt}")),
            energy_per_step(data, os.path.join(out_dir, f"energy_per_step.{fmt}"))]
