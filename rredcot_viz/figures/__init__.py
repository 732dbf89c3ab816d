"""Figure builders: computed objects in, HTML strings or Plotly figures out (no Streamlit)."""

from rredcot_viz.figures.plots import (
    correlation_heatmap,
    credit_bars,
    histogram,
    method_heatmap,
    position_profile,
    scatter,
    value_curves,
)
from rredcot_viz.figures.trace_html import trace_heatmap

__all__ = [
    "correlation_heatmap",
    "credit_bars",
    "histogram",
    "method_heatmap",
    "position_profile",
    "scatter",
    "trace_heatmap",
    "value_curves",
]
