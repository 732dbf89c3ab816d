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
    np.testing.assert_allclose(np.array(heat.data[0].z), [[2.0, -1.0], [0.0, 0.0]])  # absolute; zmax 1 saturates
    corr = correlation_heatmap(["a", "b"], np.array([[1.0, np.nan], [np.nan, 1.0]]), "spearman")
    assert corr.data[0].text[0][1] == "n/a"
    profile = position_profile([0.05, 0.15, 0.95], [1.0, 3.0, -2.0], bins=10)
    assert profile.data[0].y[0] == 1.0 and profile.data[0].y[9] == -2.0 and profile.data[0].y[5] is None


def test_method_heatmap_absolute_by_default_relative_on_request_noise_untinted():
    scores = {"sigma": [0.3, -0.0004, 0.0], "phi": [0.002, 0.004, -0.001]}
    absolute = method_heatmap(scores)
    np.testing.assert_allclose(np.array(absolute.data[0].z), [[0.3, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert (absolute.data[0].zmin, absolute.data[0].zmax) == (-1, 1) and "absolute" in absolute.layout.title.text
    np.testing.assert_allclose(np.array(absolute.data[0].customdata), [[0.3, -0.0004, 0.0], [0.002, 0.004, -0.001]])
    relative = method_heatmap(scores, relative=True)
    assert list(relative.data[0].y) == ["sigma (max |v| 0.3)", "phi (max |v| 0.004)"]
    np.testing.assert_allclose(np.array(relative.data[0].z), [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # all of phi < floor
    assert "relative" in relative.layout.title.text and list(relative.data[0].colorbar.tickvals) == [-1, 0, 1]
