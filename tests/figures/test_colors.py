"""The colour scales (figures/colors.py)."""

from __future__ import annotations

from rredcot_viz.figures.colors import diverging, sequential


def test_colour_scales():
    assert diverging(0.5, 1.0).startswith("rgba(26,152,80") and diverging(-1.0, 1.0).startswith("rgba(215,48,39")
    assert diverging(float("nan"), 1.0) == "rgba(0,0,0,0)"
    assert sequential(1.0, 0.0, 1.0) > sequential(0.0, 0.0, 1.0)
