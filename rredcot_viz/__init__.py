"""RREDCoT Explorer: look inside chain-of-thought traces with segment-level value estimates and reward
redistribution (RREDCoT, arXiv 2606.06475), Monte Carlo and attribution baselines, first-error diagnosis and
reset resampling (RRPO/SRPO, arXiv 2605.25507).

    import rredcot_viz
    rredcot_viz.analyze(question, reasoning).to_pandas()   # the embedded model, loaded once

The library imports without Streamlit; heavy dependencies (torch, transformers) load on first use: ``load``,
``analyze``, ``Trace`` and ``TraceAnalysis`` are looked up when first used (``api``).
"""

from typing import Any

from rredcot_viz.errors import RredcotError
from rredcot_viz.registry import Registry

__version__ = "0.1.0"
__all__ = ["Registry", "RredcotError", "Trace", "TraceAnalysis", "__version__", "analyze", "load"]
_LAZY = {"analyze": "rredcot_viz.api", "load": "rredcot_viz.api", "TraceAnalysis": "rredcot_viz.api",
         "Trace": "rredcot_viz.traces.trace"}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'rredcot_viz' has no attribute {name!r}")
