"""What the example studies share: their command line (output folder, steps, evaluation tokens),
their output folder and how a figure is saved. Imported by the scripts beside it."""
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
