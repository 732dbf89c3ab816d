"""Plotly figure builders: data in, figure out; no Streamlit and no math beyond layout."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from rredcot_viz.figures.colors import NOISE_FLOOR, PLOTLY_DIVERGING

STATE_LABELS = "s"


def _chart_layout(figure: go.Figure, title: str, x_title: str, y_title: str, **extra) -> go.Figure:
    """The layout the value and credit charts share (legend below, so long method names never cover data)."""
    figure.update_layout(
        title=title, xaxis_title=x_title, yaxis_title=y_title, height=370,
        margin={"t": 40, "b": 80, "l": 50, "r": 10}, legend={"orientation": "h", "y": -0.3}, **extra,
    )  # fmt: skip
    return figure


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
    return _chart_layout(figure, title, "state (s1 = question only)", "value")


def credit_bars(credits: dict[str, Sequence[float]], title: str = "Credit per segment") -> go.Figure:
    """Grouped bars of per-segment credit for several methods (e.g. sigma next to GRPO's uniform credit)."""
    figure = go.Figure()
    for name, values in credits.items():
        figure.add_trace(go.Bar(x=[f"{t}" for t in range(1, len(values) + 1)], y=list(values), name=name))
    return _chart_layout(figure, title, "segment", "credit", xaxis_type="category", barmode="group")


def method_heatmap(
    scores: dict[str, Sequence[float]],
    title: str | None = None,
    *,
    relative: bool = False,
    floor: float = NOISE_FLOOR,
) -> go.Figure:
    """Rows = methods, columns = segments, on the one rule of ``figures.colors``: an absolute scale by default
    (sigma and other scores in [-1, 1], full colour beyond), or each row relative to its own largest |value|
    (printed beside the row's name: methods' units differ); |value| below ``floor`` is never tinted. The hover
    always shows the raw value."""
    names = list(scores)
    matrix = np.array([np.asarray(scores[n], dtype=float) for n in names])
    shown = np.where(np.abs(np.nan_to_num(matrix)) < floor, 0.0, matrix)
    labels = names
    if relative:
        scale = np.nanmax(np.abs(matrix), axis=1, keepdims=True)
        shown = np.divide(shown, scale, out=np.zeros_like(shown), where=scale > 0)
        labels = [f"{n} (max |v| {float(s):.3g})" for n, s in zip(names, scale[:, 0], strict=True)]
    if title is None:
        title = (
            "Methods × segments, each row relative to its largest |value|"
            if relative
            else "Methods × segments (absolute scale: full colour at |value| ≥ 1)"
        )
    figure = go.Figure(
        go.Heatmap(
            z=shown,
            x=[f"{t}" for t in range(1, matrix.shape[1] + 1)],
            y=labels,
            zmin=-1,
            zmax=1,
            colorscale=PLOTLY_DIVERGING,
            customdata=matrix,
            hovertemplate="%{y}, segment %{x}: %{customdata:.4f}<extra></extra>",
            colorbar={
                "title": {"text": "relative" if relative else "value", "side": "right"},
                "tickvals": [-1, 0, 1],
                "ticktext": ["−max", "0", "+max"] if relative else ["≤ −1", "0", "≥ +1"],
                "thickness": 12,
                "len": 1.0,
            },
        )
    )
    figure.update_layout(
        title=title,
        xaxis_title="segment",
        xaxis_type="category",
        height=110 + 34 * len(names),
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


def reset_tree(
    prefix_label: str,
    branches: Sequence[tuple[str, bool, str]],
    original: tuple[str, bool] | None = None,
    title: str = "Reset resampling",
) -> go.Figure:
    """A shared prefix with one branch per suffix, coloured by outcome; ``branches`` = (label, correct, hover)."""
    figure = go.Figure()
    rows = (
        list(branches)
        if original is None
        else [(f"original: {original[0]}", original[1], "the trace itself"), *branches]
    )
    for index, (label, correct, hover) in enumerate(rows):
        y = len(rows) - 1 - index
        colour = "rgb(26,152,80)" if correct else "rgb(215,48,39)"
        dash = "dot" if original is not None and index == 0 else "solid"
        figure.add_trace(
            go.Scatter(
                x=[0, 1],
                y=[(len(rows) - 1) / 2, y],
                mode="lines+markers+text",
                line={"color": colour, "dash": dash, "width": 3},
                text=["", label],
                textposition="middle right",
                hovertext=["", hover],
                hoverinfo="text",
                showlegend=False,
            )
        )
    figure.add_annotation(x=0, y=(len(rows) - 1) / 2, text=prefix_label, showarrow=False, xanchor="right", xshift=-8)
    figure.update_xaxes(visible=False, range=[-0.9, 2.2])
    figure.update_yaxes(visible=False, range=[-0.8, len(rows) - 0.2])
    figure.update_layout(title=title, height=90 + 44 * len(rows), margin={"t": 40, "b": 10, "l": 10, "r": 10})
    return figure


def confusion_heatmap(matrix: np.ndarray, title: str = "Predicted vs labelled first error") -> go.Figure:
    labels = ["none", *[str(i) for i in range(1, matrix.shape[0])]]
    figure = go.Figure(
        go.Heatmap(
            z=matrix,
            x=labels,
            y=labels,
            colorscale="Blues",
            texttemplate="%{z}",
            hovertemplate="labelled %{y}, predicted %{x}: %{z}<extra></extra>",
        )
    )
    figure.update_layout(
        title=title,
        xaxis_title="predicted step",
        yaxis_title="labelled step",
        xaxis_type="category",
        yaxis_type="category",
        height=420,
        margin={"t": 40, "b": 40, "l": 60, "r": 10},
    )
    return figure
