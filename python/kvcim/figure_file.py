"""Writing a matplotlib figure to a file, for every module that draws (kvcim.plot,
kvcim.explain_plot): the Agg backend (files only, no display needed), the format from the file
name's extension, and a temporary file renamed into place so a figure is never left half-written."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ._core import Error  # noqa: E402


def save(fig, out):
    """Writes `fig` to `out` (.png or .svg, else kvcim.Error), closes it and returns the path."""
    out = os.fspath(out)
    ext = os.path.splitext(out)[1].lower()
    if ext not in (".png", ".svg"):
        plt.close(fig)
        raise Error(f"plot: out = {out}: expected a .png or .svg file name")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp" + ext
    fig.savefig(tmp, dpi=120, bbox_inches="tight")  # temporary file, then rename: never torn
    plt.close(fig)
    os.replace(tmp, out)
    return out
