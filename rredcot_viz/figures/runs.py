"""Figures of an RL run (``workflows.runs``): reward and credit per step, and groups of rollouts side by side,
each rollout's segments shaded by RREDCoT's advantage with the GRPO advantage it got in its badge."""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rredcot_viz.figures.colors import shade_scale
from rredcot_viz.figures.training import ROW_STYLE, rollout_row
from rredcot_viz.workflows.rollout_groups import RolloutGroup

COLUMN_STYLE = """<style>
.rc-columns{display:flex;gap:12px;align-items:flex-start;overflow-x:auto}
.rc-column{flex:1 1 0;min-width:280px;border:1px solid rgba(128,128,128,.25);border-radius:6px;padding:6px}
.rc-question{font-family:sans-serif;font-size:.85rem;margin:0 0 6px 0;white-space:pre-wrap}
.rc-legend{font-family:sans-serif;font-size:.75rem;color:#666;margin-bottom:4px}
</style>"""
STEP_SERIES = {
    "reward_mean": ("reward (mean)", 1),
    "correct_share": ("share correct", 1),
    "grpo_abs_mean": ("|GRPO advantage| (mean)", 2),
    "rredcot_abs_mean": ("|RREDCoT advantage| (mean per character)", 2),
    "disagreement": ("disagreement: |RREDCoT − GRPO| per character", 2),
}


def run_step_figure(steps: pd.DataFrame) -> go.Figure:
    """Two panels over the steps: the reward, and the credit (GRPO's, RREDCoT's and how far apart they are)."""
    figure = make_subplots(rows=1, cols=2, subplot_titles=["Reward per step", "Credit per step"])
    for column, (name, panel) in STEP_SERIES.items():
        if column not in steps or not steps[column].notna().any():
            continue
        points = steps[["step", column]].dropna()
        figure.add_trace(
            go.Scatter(x=points["step"].tolist(), y=points[column].astype(float).tolist(), mode="lines+markers",
                       name=name),
            row=1, col=panel,
        )  # fmt: skip
    figure.update_layout(
        title="Reward and credit per step", height=360, margin={"t": 70, "b": 90, "l": 40, "r": 10},
        legend={"orientation": "h", "y": -0.3},
    )  # fmt: skip
    figure.update_xaxes(title_text="step", tickformat="d", rangemode="tozero")  # whole steps, never 1.2, 1.4
    return figure


def prompt_groups_html(groups: Sequence[RolloutGroup], relative: bool = False) -> str:
    """The groups side by side, one column each (one prompt across steps, or the most disagreeing groups):
    every rollout a row of segments shaded by its RREDCoT advantage on one shared scale (absolute, full colour
    at |advantage| >= 1, like the Train inspector, unless ``relative`` to the largest |advantage| shown), its
    GRPO advantage (and reward) in the badge; a rollout without RREDCoT credit is shown unshaded."""
    values = [a for g in groups for r in g.rollouts for a in (r.rredcot or [])]
    values += [r.grpo_advantage for g in groups for r in g.rollouts]
    scale = shade_scale(values, "diverging", relative=relative, quantity="advantage")
    questions = {g.question for g in groups}
    parts = [ROW_STYLE, COLUMN_STYLE, scale.legend_html()]
    if len(questions) == 1:
        parts.append(f'<p class="rc-question"><b>Prompt.</b> {html.escape(next(iter(questions)))}</p>')
    parts.append(
        '<div class="rc-legend">Segments shaded by RREDCoT\'s advantage (green up, red down; one scale '
        "shared by every column); the badge gives the GRPO advantage the rollout got, the same on all its "
        'tokens.</div><div class="rc-columns">'
    )
    for group in groups:
        rewards = group.rewards
        disagreement = "n/a" if group.disagreement is None else f"{group.disagreement:.2f}"
        head = (
            f"step {group.step} · prompt {group.prompt}{'' if group.name == 'base' else f' · {group.name}'} · "
            f"{len(group.rollouts)} rollouts · reward mean {rewards.mean():.2f}, std {rewards.std():.2f} · "
            f"disagreement {disagreement}"
        )
        column = [f'<div class="rc-column" data-step="{group.step}" data-prompt="{group.prompt}">']
        column.append(f'<div class="rc-group">{html.escape(head)}</div>')
        if len(questions) > 1:
            column.append(f'<p class="rc-question">{html.escape(group.question[:300])}</p>')
        for rollout in group.rollouts:
            label = f"#{rollout.index + 1} · GRPO {rollout.grpo_advantage:+.2f}"
            tip = f"\nGRPO advantage = {rollout.grpo_advantage:+.3f}"
            column.append(rollout_row(rollout.record(), scale, label, tip))
        column.append("</div>")
        parts.append("".join(column))
    parts.append("</div>")
    return "".join(parts)
