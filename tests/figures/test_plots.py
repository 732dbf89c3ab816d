"""The Plotly builders (figures/plots.py) carry the data they are given."""

from __future__ import annotations

import numpy as np

from rredcot_viz.figures import correlation_heatmap, credit_bars, method_heatmap, position_profile, value_curves


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
