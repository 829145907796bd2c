"""What the example studies share: their command line (output folder, steps, evaluation tokens),
their output folder, how an interval is printed, how axes are finished and how a figure is saved. Imported by the scripts beside it."""
import argparse
import pathlib


def study_parser(doc, out, steps=None, steps_help="generated positions per run", eval_help=None):
    """The parser every study starts from: --out, and --steps / --eval-tokens when given."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", default=out, help="output folder")
    if steps is not None:
        parser.add_argument("--steps", type=int, default=steps, help=steps_help)
    if eval_help is not None:
        parser.add_argument("--eval-tokens", type=int, default=10000, help=eval_help)
    return parser


def parse_study_args(parser):
    """(arguments, the output folder, made)"""
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return args, out


def save_figure(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nwrote {path}")


def interval_text(d):
    """A figure with its 95% interval, as the studies' tables print it: +0.0123 [+0.0100, +0.0150]."""
    return f"{d['value']:>+10.4f} [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}]"


# The headings of accuracy_text's columns, aligned with them.
ACCURACY_HEADINGS = f"{'ΔNLL nats/token (95% CI)':>30} {'KL mean':>9}"


def accuracy_text(p):
    """A point's ΔNLL with its interval and its mean KL, the accuracy columns of the drift studies."""
    return f"{interval_text(p['delta_nll'])} {p['kl_mean']['value']:>9.4f}"


def finish_axes(ax, xlabel=None, ylabel=None, title=None, xscale=None):
    """The labels given, a light grid and a small legend, as every study's axes have them."""
    if xscale:
        ax.set_xscale(xscale)
    for setter, text in ((ax.set_xlabel, xlabel), (ax.set_ylabel, ylabel), (ax.set_title, title)):
        if text:
            setter(text)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)


def finish_accuracy_energy(acc, energy, base, energy_key, energy_ylabel, energy_title, xlabel,
                           baseline_label, acc_ylabel="ΔNLL vs float (nats/token)", xscale=None):
    """The accuracy and energy panels of a sweep, each with the baseline point as a dashed line."""
    for ax, value, ylabel, title in (
            (acc, base["delta_nll"]["value"], acc_ylabel,
             f"accuracy ({base['tokens']} evaluated tokens, 95% CI)"),
            (energy, base[energy_key], energy_ylabel, energy_title)):
        ax.axhline(value, color="gray", linestyle="--", label=baseline_label)
        finish_axes(ax, xlabel, ylabel, title, xscale=xscale)
