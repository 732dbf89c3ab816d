"""RREDCoT Explorer: look inside chain-of-thought traces with segment-level value estimates and reward
redistribution (RREDCoT, arXiv 2606.06475), Monte Carlo and attribution baselines, first-error diagnosis and
reset resampling (RRPO/SRPO, arXiv 2605.25507).

The library imports without Streamlit; heavy dependencies (torch, transformers) load on first use.
"""

from rredcot_viz.errors import RredcotError
from rredcot_viz.registry import Registry

__version__ = "0.1.0"
__all__ = ["Registry", "RredcotError", "__version__"]
