"""Plotly figure builders: data in, figure out; no Streamlit and no math beyond layout."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from rredcot_viz.figures.colors import PLOTLY_DIVERGING

STATE_LABELS = "s"


def state_axis(n_states: int) -> list[str]:
    return [f"s{t}" for t in range(1, n_states + 1)]


def value_curves(
    curves: dict[str, Sequence[float]], bands: dict[str, np.ndarray] | None = None, title: str = "Value along the trace"
) -> go.Figure:
    """Lines of per-state values (s_1 = question only ... s_{K+1} = full reasoning), optional (K+1, 2) bands."""
    figure = go.Figure()
    for name, values in curves.items():
        x = state_axis(len(values))
        if bands and name in bands:
            band = np.asarray(bands[name], dtype=float)
            figure.add_trace(
                go.Scatter(
                    x=x + x[::-1],
                    y=list(band[:, 1]) + list(band[::-1, 0]),
                    fill="toself",
                    line={"width": 0},
                    opacity=0.2,
                    name=f"{name} 95% CI",
                    hoverinfo="skip",
                )
            )
        figure.add_trace(go.Scatter(x=x, y=list(values), mode="lines+markers", name=name))
    figure.update_layout(
        title=title,
        xaxis_title="state (s1 = question only)",
        yaxis_title="value",
        height=370,
        margin={"t": 40, "b": 80, "l": 50, "r": 10},
        legend={"orientation": "h", "y": -0.3},
    )
    return figure


def credit_bars(credits: dict[str, Sequence[float]], title: str = "Credit per segment") -> go.Figure:
    """Grouped bars of per-segment credit for several methods (e.g. sigma next to GRPO's uniform credit)."""
    figure = go.Figure()
    for name, values in credits.items():
        figure.add_trace(go.Bar(x=[f"{t}" for t in range(1, len(values) + 1)], y=list(values), name=name))
    figure.update_layout(
        title=title,
        xaxis_title="segment",
        xaxis_type="category",
        yaxis_title="credit",
        barmode="group",
        height=370,
        margin={"t": 40, "b": 80, "l": 50, "r": 10},
        legend={"orientation": "h", "y": -0.3},
    )
    return figure


def method_heatmap(scores: dict[str, Sequence[float]], title: str = "Methods x segments") -> go.Figure:
    """Rows = methods, columns = segments; each row scaled by its own largest |value| (units differ)."""
    names = list(scores)
    matrix = np.array([np.asarray(scores[n], dtype=float) for n in names])
    scale = np.nanmax(np.abs(matrix), axis=1, keepdims=True)
    scaled = np.divide(matrix, scale, out=np.zeros_like(matrix), where=scale > 0)
    figure = go.Figure(
        go.Heatmap(
            z=scaled,
            x=[f"{t}" for t in range(1, matrix.shape[1] + 1)],
            y=names,
            zmin=-1,
            zmax=1,
            colorscale=PLOTLY_DIVERGING,
            customdata=matrix,
            hovertemplate="%{y}, segment %{x}: %{customdata:.4f}<extra></extra>",
            colorbar={"title": "scaled"},
        )
    )
    figure.update_layout(
        title=title,
        xaxis_title="segment",
        xaxis_type="category",
        height=90 + 34 * len(names),
        margin={"t": 40, "b": 40, "l": 110, "r": 10},
    )
    return figure


def correlation_heatmap(names: list[str], matrix: np.ndarray, metric: str) -> go.Figure:
    figure = go.Figure(
        go.Heatmap(
            z=matrix,
            x=names,
            y=names,
            zmin=-1,
            zmax=1,
            colorscale=PLOTLY_DIVERGING,
            text=[[("n/a" if np.isnan(v) else f"{v:+.2f}") for v in row] for row in matrix],
            texttemplate="%{text}",
            hovertemplate="%{y} vs %{x}: %{z:.3f}<extra></extra>",
        )
    )
    figure.update_layout(
        title=f"{metric} between methods", height=120 + 36 * len(names), margin={"t": 40, "b": 40, "l": 110, "r": 10}
    )
    return figure


def scatter(a: Sequence[float], b: Sequence[float], name_a: str, name_b: str) -> go.Figure:
    labels = [f"segment {t}" for t in range(1, len(a) + 1)]
    figure = go.Figure(
        go.Scatter(
            x=list(a),
            y=list(b),
            mode="markers+text",
            text=[str(t) for t in range(1, len(a) + 1)],
            textposition="top center",
            hovertext=labels,
        )
    )
    figure.update_layout(
        xaxis_title=name_a, yaxis_title=name_b, height=340, margin={"t": 20, "b": 40, "l": 50, "r": 10}
    )
    return figure


def position_profile(
    positions: Sequence[float], values: Sequence[float], bins: int = 10, title: str = "sigma by relative position"
) -> go.Figure:
    """Mean of ``values`` in ``bins`` bins of relative position 0..1 (with the count in the hover)."""
    positions, values = np.asarray(positions, dtype=float), np.asarray(values, dtype=float)
    edges = np.linspace(0, 1, bins + 1)
    index = np.clip(np.digitize(positions, edges) - 1, 0, bins - 1)
    means = [float(values[index == b].mean()) if (index == b).any() else None for b in range(bins)]
    counts = [int((index == b).sum()) for b in range(bins)]
    centres = [(edges[b] + edges[b + 1]) / 2 for b in range(bins)]
    figure = go.Figure(
        go.Bar(
            x=centres,
            y=means,
            customdata=counts,
            width=0.9 / bins,
            hovertemplate="position %{x:.2f}: mean %{y:.4f} (%{customdata} segments)<extra></extra>",
        )
    )
    figure.update_layout(
        title=title,
        xaxis_title="relative position of the segment in the trace (0..1)",
        yaxis_title="mean",
        height=320,
        margin={"t": 40, "b": 40, "l": 50, "r": 10},
    )
    return figure


def histogram(values: Sequence[float], title: str, x_title: str) -> go.Figure:
    figure = go.Figure(go.Histogram(x=[v for v in values if np.isfinite(v)], nbinsx=20))
    figure.update_layout(title=title, xaxis_title=x_title, height=300, margin={"t": 40, "b": 40, "l": 50, "r": 10})
    return figure
