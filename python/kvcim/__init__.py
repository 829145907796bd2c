"""kvcim: compute-in-memory co-design for Transformer inference, from Python.

The compiled core (``kvcim._core``, pybind11) exposes the C++ library with the C++ names; this
package re-exports it and adds sweeps (``kvcim.sweep``) and plots (``kvcim.plot``).
See docs/python.md.
"""
from . import _core
from ._core import (  # noqa: F401  (re-exported API)
    BOS,
    EOS,
    Config,
    Error,
    Model,
    Tokenizer,
    default_model_path,
    default_tokenizer_path,
    read_checkpoint_config,
    # CIM C models and co-simulation
    AdcRange,
    CModelTile,
    Macro,
    MacroKind,
    MacroSpec,
    NoiseModel,
    QueryScale,
    TileParams,
    TileResult,
    WeightEncoding,
    combine_tiles,
    compute_events,
    cosim,
    dequantize,
    query_scale,
    write_events,
)

__version__ = _core.__version__
HAVE_RTL = _core.HAVE_RTL


def _use_package_data():
    # An installed package carries models, configs and the evaluation text in kvcim/data; the
    # build tree's package has none and the C++ side finds the sources (kvcim::data_dir()).
    from importlib import resources
    data = resources.files(__name__) / "data"
    if data.is_dir():
        _core.set_data_dir(str(data))


_use_package_data()

# The mapper and the run, re-exported at the top level (every build binds them: a missing name is
# an ImportError here, not a silently smaller module).
from ._core import (HardwareSpec, Placement, Policy, ModelShape, map, parse_shape,  # noqa: E402,F401
                    shape_preset, preset_names, shape_from_checkpoint, default_hardware_spec_path,
                    Organization, KvSpec, Precision, BaselineConfig, NodePoint, machine_names,
                    baseline_step, MacroFile, MacroDesc, Published, load_macro, Machine, load_machine,
                    SramNodes, SramNodeEntry, load_sram_nodes, MacroModel, MacroConstants,
                    load_macro_model)
from .report import Report, run  # noqa: E402,F401


def __getattr__(name):
    # The pure-Python tools load on first use: `import kvcim` stays quick, and
    # `python3 -m kvcim.sweep` does not find kvcim.sweep imported before it runs.
    if name in ("sweep", "plot", "results", "grid", "evaluate", "experiment"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'kvcim' has no attribute {name!r}")
