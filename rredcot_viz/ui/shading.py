"""The one switch every heatmap page offers: the absolute colour scale (the default) or one relative to the
values shown (``figures.colors``)."""

from __future__ import annotations

import streamlit as st

from rredcot_viz.figures.colors import NOISE_FLOOR


def relative_switch(key: str, what: str = "this trace") -> bool:
    """A toggle for the heatmap's scale; True means relative to ``what``'s largest |value|."""
    return st.toggle(
        f"Colours relative to {what}",
        key=key,
        help=(
            "Off: one absolute scale (σ and advantages in [−1, 1], values in [0, 1]), so a colour means the same "
            f"number on every trace, and |value| < {NOISE_FLOOR} is not tinted. On: full colour at the largest "
            "|value| shown, printed beside the legend; the noise floor still applies."
        ),
    )
