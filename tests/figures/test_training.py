"""Training figures: overlaid curves per metric and the step inspector's advantage rows."""

from __future__ import annotations

import pandas as pd

from rredcot_viz.figures import advantage_rows, training_curves


def test_curves_overlay_runs_one_panel_per_metric():
    metrics = pd.DataFrame(
        [
            {"run_id": "a", "step": 0, "held_out_accuracy": 0.2},
            {"run_id": "a", "step": 1, "reward_mean": 0.5},
            {"run_id": "a", "step": 2, "reward_mean": 0.7, "held_out_accuracy": 0.4},
            {"run_id": "b", "step": 1, "reward_mean": 0.1},
        ]
    )
    figure = training_curves(metrics, ["reward_mean", "held_out_accuracy", "loss"], {"a": "run A"})
    assert [a.text for a in figure.layout.annotations] == [
        "reward (mean over the step's rollouts)",
        "held-out accuracy",
    ]
    by_panel = {(t.name, t.xaxis): (list(t.x), list(t.y)) for t in figure.data}
    assert by_panel[("run A", "x")] == ([1, 2], [0.5, 0.7])
    assert by_panel[("run A", "x2")] == ([0, 2], [0.2, 0.4])
    assert by_panel[("b", "x")] == ([1], [0.1]) and by_panel[("b", "x2")] == ([], [])
    assert [t.showlegend for t in figure.data] == [True, False, True, False]


def row(group: str, text: str, reward: float, advantages: list[float], chars: list[list[int]], **extra) -> dict:
    return {"group": group, "text": text, "reward": reward, "segment_advantages": advantages,
            "segment_chars": chars, "problem": 0, "suffix_start": 0, **extra}  # fmt: skip


def test_rows_shade_segments_grey_the_prefix_and_escape_text():
    parent = row("parent", "a<i>b", 0.0, [], [[0, 5]])
    records = [
        row("base", "x <script>", 1.0, [0.5], [[0, 10]]),
        row("base", "yy", 1.0, [0.0], [[0, 2]]),
        row("reset", "PRE-tail", 1.0, [2.0, -1.0], [[0, 2], [2, 8]], suffix_start=2, suffix_char=4, parent=parent),
    ]
    html = advantage_rows(records)
    assert "&lt;script&gt;" in html and "<script>" not in html and "a&lt;i&gt;b" in html
    assert "base group · problem 0 · 2 rollouts · reward mean 1.00, std 0.00 (all equal: zero advantages)" in html
    assert "reset group · problem 0 · 1 rollouts" in html and "failed parent" in html
    # the prefix "PRE-" spans segment 1 and the start of segment 2: both parts greyed, the rest shaded
    assert html.count('class="rc-prefix"') == 2 and ">PR</span>" in html and ">E-</span>" in html
    # one absolute scale: full colour at |advantage| >= 1, the legend says so
    assert 'data-advantage="-1.0000" style="background:rgba(215,48,39,0.720)">tail' in html
    assert 'data-advantage="0.5000" style="background:rgba(26,152,80,0.410)">x &lt;script&gt;' in html
    assert 'data-scale="absolute"' in html and "advantage from −1 (red) to +1 (green)" in html
    relative = advantage_rows(records, relative=True)  # scaled to the step's largest |advantage|, 2
    assert 'data-advantage="-1.0000" style="background:rgba(215,48,39,0.410)">tail' in relative
    assert "full colour = max |advantage| = 2" in relative
