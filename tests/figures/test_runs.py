"""Figures of an RL run (figures/runs.py): groups side by side with RREDCoT's shading and GRPO's badge, escaped,
on one shared scale; the reward and credit per step."""

from __future__ import annotations

import re

import pandas as pd
from hostile import HOSTILE

from rredcot_viz.figures.colors import diverging
from rredcot_viz.figures.runs import prompt_groups_html, run_step_figure
from rredcot_viz.workflows.rollout_groups import RolloutGroup, RunRollout


def rollout(step: int, index: int, reward: float, grpo: float, rredcot: list[float] | None) -> RunRollout:
    text = HOSTILE.cot
    half = len(text) // 2
    return RunRollout(step, 0, "base", index, HOSTILE.question, text, reward, reward, grpo,
                      segment_chars=[(0, half), (half, len(text))], sigma=rredcot, rredcot=rredcot)  # fmt: skip


def test_groups_side_by_side_on_one_scale():
    first = [rollout(1, 0, 1.0, 1.0, [2.0, 0.5]), rollout(1, 1, 0.0, -1.0, None)]
    groups = [
        RolloutGroup(1, 0, "base", HOSTILE.question, first),
        RolloutGroup(3, 0, "base", HOSTILE.question, [rollout(3, 0, 1.0, 0.0, [0.0, 0.0])]),
    ]
    html = prompt_groups_html(groups)
    assert re.findall(r'data-step="(\d+)"', html) == ["1", "3"]  # one column per group, in order
    assert html.count('class="rc-question"') == 1  # one prompt: its question once, above the columns
    assert 'data-advantage="2.0000"' in html and f"background:{diverging(0.5, 1.0)}" in html  # absolute: |A| >= 1 full
    assert "#1 · GRPO +1.00" in html and "#2 · GRPO -1.00" in html
    assert "GRPO advantage = +1.000" in html  # in every segment's hover
    assert html.count("rc-aseg") - html.count(".rc-aseg") == 4  # the uncredited rollout is not shaded
    assert "<script>alert" not in html and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "What does &lt;b&gt;this&lt;/b&gt; do?" in html


def test_reward_and_credit_per_step():
    steps = pd.DataFrame(
        {"step": [1, 2], "reward_mean": [0.25, 0.5], "correct_share": [0.25, 0.5], "grpo_abs_mean": [0.8, 0.7],
         "rredcot_abs_mean": [float("nan"), 0.6], "disagreement": [float("nan"), 0.3]}
    )  # fmt: skip
    figure = run_step_figure(steps)
    lines = {trace.name: (list(trace.x), list(trace.y), trace.xaxis) for trace in figure.data}
    assert lines["reward (mean)"] == ([1, 2], [0.25, 0.5], "x")
    assert lines["disagreement: |RREDCoT − GRPO| per character"] == ([2], [0.3], "x2")  # no credit at step 1
    assert figure.layout.xaxis.tickformat == figure.layout.xaxis2.tickformat == "d"  # whole steps, not 1.2, 1.4
