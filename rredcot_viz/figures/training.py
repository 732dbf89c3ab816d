"""Figures of training runs: metric curves overlaid across runs, and a step's rollouts as rows of segments
shaded by the advantage each segment received (the shared prefix of a reset greyed: it is not trained on)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from itertools import groupby
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rredcot_viz.figures.colors import ShadeScale, shade_scale

METRIC_TITLES = {
    "reward_mean": "reward (mean over the step's rollouts)",
    "held_out_accuracy": "held-out accuracy",
    "advantage_abs_mean": "mean |advantage| per trained token",
    "advantage_std": "advantage std",
    "zero_variance_groups": "share of groups with all-equal rewards",
    "loss": "loss",
    "entropy": "entropy per token",
    "kl": "KL to the starting policy",
    "seconds": "seconds per step",
    "reset_empty_prefix_share": "share of resets from an empty prefix (RRPO/SRPO)",
    "reset_prefix_fraction": "share of the parent kept by a reset (RRPO/SRPO)",
    "reset_uniform_empty_chance": "chance a uniform reset starts empty, mean 1/H (RRPO/SRPO)",
    "localiser_parse_rate": "share of localiser replies whose last box names a step (SRPO)",
    "clip_fraction": "share of trained tokens the PPO clip binds on",
}

ROW_STYLE = """<style>
.rc-steps{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:0.8rem;line-height:1.5}
.rc-group{margin:8px 0 2px 0;font-weight:600;font-family:sans-serif;font-size:0.85rem}
.rc-row{display:flex;gap:8px;align-items:flex-start;border-bottom:1px solid rgba(128,128,128,.2);padding:3px 0}
.rc-badge{flex:0 0 84px;font-family:sans-serif;font-size:0.75rem;padding-top:2px}
.rc-ok{color:#1a9850;font-weight:600}.rc-bad{color:#d73027;font-weight:600}
.rc-text{white-space:pre-wrap;word-break:break-word;flex:1}
.rc-prefix{background:rgba(128,128,128,.22);color:#777;text-decoration:line-through rgba(120,120,120,.5)}
.rc-aseg{position:relative;border-radius:3px;cursor:help}
.rc-aseg .rc-tip{visibility:hidden;position:absolute;left:0;top:100%;z-index:10;white-space:pre;background:#222;
color:#fff;font-size:0.72rem;padding:3px 6px;border-radius:4px;pointer-events:none}
.rc-aseg:hover .rc-tip{visibility:visible}
.rc-parent{opacity:.8;font-style:italic}
</style>"""


def training_curves(metrics: Any, names: Sequence[str], labels: dict[str, str] | None = None) -> go.Figure:
    """One panel per metric in ``names``, one line per run (``metrics``: rows of run_id, step, metric...)."""
    present = [n for n in names if n in metrics.columns and metrics[n].notna().any()] if len(metrics) else []
    columns = max(1, min(len(present), 3))
    rows = max(1, math.ceil(len(present) / columns))
    figure = make_subplots(
        rows=rows, cols=columns, subplot_titles=[METRIC_TITLES.get(n, n) for n in present] or ["no metrics yet"]
    )
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]
    for run_index, (run_id, frame) in enumerate(metrics.groupby("run_id", sort=False) if len(metrics) else []):
        colour = palette[run_index % len(palette)]
        for index, name in enumerate(present):
            points = frame[["step", name]].dropna()
            figure.add_trace(
                go.Scatter(
                    x=points["step"].tolist(),
                    y=points[name].astype(float).tolist(),
                    mode="lines+markers",
                    name=(labels or {}).get(run_id, run_id),
                    legendgroup=run_id,
                    showlegend=index == 0,
                    line={"color": colour},
                    marker={"size": 5},
                ),
                row=index // columns + 1,
                col=index % columns + 1,
            )
    figure.update_layout(
        title="Training curves",
        height=280 * rows + 80,
        margin={"t": 70, "b": 100, "l": 40, "r": 10},
        legend={"orientation": "h", "yanchor": "top", "y": -0.22 if rows == 1 else -0.1},
    )
    figure.update_xaxes(title_text="step", tickformat="d", rangemode="tozero")  # whole steps, never 1.2, 1.4
    return figure


def _segment_spans(record: dict[str, Any]) -> list[tuple[int, int, float | None]]:
    """(start, end, advantage) character pieces covering the whole completion text."""
    text = record["text"]
    chars = record.get("segment_chars") or []
    advantages = record.get("segment_advantages") or []
    pieces, cursor = [], 0
    for index, (start, end) in enumerate(chars):
        if start > cursor:
            pieces.append((cursor, start, None))
        value = advantages[index] if index < len(advantages) else None
        pieces.append((start, end, value))
        cursor = end
    if cursor < len(text):
        pieces.append((cursor, len(text), None))
    return pieces


def rollout_row(record: dict[str, Any], scale: ShadeScale, label: str, tip_extra: str = "") -> str:
    """One rollout: a badge (``label``, reward) and its text, each segment shaded by its advantage on ``scale``."""
    text = record["text"]
    prefix_end = int(record.get("suffix_char") or 0) if record.get("suffix_start") else 0
    parts = []
    for number, (start, end, value) in enumerate(_segment_spans(record), start=1):
        if prefix_end > start:  # the part of this piece inside the shared prefix: masked out of the loss
            cut = min(prefix_end, end)
            parts.append(
                f'<span class="rc-prefix" title="shared prefix of the reset: masked out of the loss">'
                f"{html.escape(text[start:cut])}</span>"
            )
            start = cut
        if start >= end:
            continue
        body = html.escape(text[start:end])
        if value is None:
            parts.append(body)
            continue
        tip = f"segment {number}\nadvantage = {value:+.3f}{tip_extra}"
        parts.append(
            f'<span class="rc-aseg" data-advantage="{value:.4f}" style="background:{scale.colour(value)}">'
            f'{body}<span class="rc-tip">{html.escape(tip)}</span></span>'
        )
    reward = float(record.get("reward", 0.0))
    verdict = '<span class="rc-ok">✓ 1</span>' if reward >= 0.5 else '<span class="rc-bad">✗ 0</span>'
    return (
        f'<div class="rc-row" data-group="{html.escape(record.get("group", ""))}">'
        f'<div class="rc-badge">{html.escape(label)}<br>reward {verdict}</div>'
        f'<div class="rc-text">{"".join(parts)}</div></div>'
    )


def advantage_rows(records: Sequence[dict[str, Any]], relative: bool = False) -> str:
    """HTML of one step's rollouts, grouped as sampled (base, reset, fallback), one row per rollout with its
    segments shaded by their advantage on one shared scale (absolute, full colour at |advantage| >= 1, unless
    ``relative`` to the step's largest |advantage|), legend first; a reset group first shows its failed parent."""
    values = [v for r in records for v in (r.get("segment_advantages") or []) if v is not None]
    scale = shade_scale(values, "diverging", relative=relative, quantity="advantage")
    parts = [ROW_STYLE, scale.legend_html(), '<div class="rc-steps">']
    group_of = lambda r: (r.get("group", ""), int(r.get("problem", 0)))  # noqa: E731
    for (name, problem), members in groupby(records, key=group_of):
        members = list(members)
        rewards = np.array([float(r.get("reward", 0.0)) for r in members])
        parts.append(
            f'<div class="rc-group">{html.escape(name)} group · problem {problem} · {len(members)} rollouts · '
            f"reward mean {rewards.mean():.2f}, std {rewards.std():.2f}"
            + (" (all equal: zero advantages)" if rewards.std() < 1e-8 else "")
            + "</div>"
        )
        parent = members[0].get("parent")
        if parent:
            step, steps = members[0].get("reset_step"), members[0].get("reset_steps", "?")
            row = rollout_row({**parent, "segment_advantages": []}, scale, "failed parent")
            title = f"reset at step {step} of {steps}: not trained on"
            parts.append(f'<div class="rc-parent" title="{title}">{row}</div>')
        parts.extend(rollout_row(record, scale, f"{name} {i}") for i, record in enumerate(members, start=1))
    parts.append("</div>")
    return "".join(parts)
