"""Figure builders: escaping and collapsing in the HTML heatmap, and the data carried by Plotly figures."""

from __future__ import annotations

import numpy as np

from rredcot_viz.figures import correlation_heatmap, credit_bars, method_heatmap, position_profile, value_curves
from rredcot_viz.figures.colors import diverging, sequential
from rredcot_viz.figures.trace_html import trace_heatmap


def test_heatmap_escapes_every_text_and_keeps_segment_count():
    texts = ["<script>alert(1)</script>", "a & b <img src=x onerror=y>", 'say "hi"']
    html = trace_heatmap(
        texts, [0.1, -0.2, 0.0], [{"sigma": 0.1}, {"sigma": -0.2}, {"<k>": 0.0}], answer_text="<b>7</b>"
    )
    assert html.count('class="rc-seg"') == 3
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=y&gt;" in html and "&amp;" in html and "&lt;k&gt; = +0.0000" in html
    assert "&lt;b&gt;7&lt;/b&gt;" in html


def test_long_segments_collapse_but_keep_all_text():
    long = "x" * 5000
    html = trace_heatmap([long, "short"], [1.0, -1.0], [{}, {}], collapse_chars=1000)
    assert "<details>" in html and "[… 4250 more characters]" in html
    assert html.count("x") >= 5000


def test_colour_scales():
    assert diverging(0.5, 1.0).startswith("rgba(26,152,80") and diverging(-1.0, 1.0).startswith("rgba(215,48,39")
    assert diverging(float("nan"), 1.0) == "rgba(0,0,0,0)"
    assert sequential(1.0, 0.0, 1.0) > sequential(0.0, 0.0, 1.0)


def test_plotly_builders_carry_the_data():
    figure = value_curves({"Q": [0.1, 0.5, 1.0]}, {"Q": np.array([[0, 0.2], [0.4, 0.6], [1, 1]])})
    assert [t.name for t in figure.data] == ["Q 95% CI", "Q"] and list(figure.data[1].y) == [0.1, 0.5, 1.0]
    bars = credit_bars({"a": [1, -1]})
    assert list(bars.data[0].x) == ["1", "2"] and bars.layout.xaxis.type == "category"
    heat = method_heatmap({"m": [2.0, -1.0], "flat": [0.0, 0.0]})
    np.testing.assert_allclose(np.array(heat.data[0].z), [[1.0, -0.5], [0.0, 0.0]])
    corr = correlation_heatmap(["a", "b"], np.array([[1.0, np.nan], [np.nan, 1.0]]), "spearman")
    assert corr.data[0].text[0][1] == "n/a"
    profile = position_profile([0.05, 0.15, 0.95], [1.0, 3.0, -2.0], bins=10)
    assert profile.data[0].y[0] == 1.0 and profile.data[0].y[9] == -2.0 and profile.data[0].y[5] is None
