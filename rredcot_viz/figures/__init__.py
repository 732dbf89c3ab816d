"""Figure builders: computed objects in, HTML strings or Plotly figures out (no Streamlit)."""

from rredcot_viz.figures.plots import (
    confusion_heatmap,
    correlation_heatmap,
    credit_bars,
    histogram,
    method_heatmap,
    position_profile,
    reset_tree,
    scatter,
    value_curves,
)
from rredcot_viz.figures.trace_html import trace_heatmap
from rredcot_viz.figures.training import advantage_rows, training_curves

__all__ = [
    "advantage_rows",
    "confusion_heatmap",
    "correlation_heatmap",
    "credit_bars",
    "histogram",
    "method_heatmap",
    "position_profile",
    "reset_tree",
    "scatter",
    "trace_heatmap",
    "training_curves",
    "value_curves",
]
