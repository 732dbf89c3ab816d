"""The colour scales (figures/colors.py): absolute by default, noise untinted, a legend that says which."""

from __future__ import annotations

import pytest

from rredcot_viz.figures.colors import CLEAR, NOISE_FLOOR, ShadeScale, diverging, sequential, shade_scale


def test_colour_scales():
    assert diverging(0.5, 1.0).startswith("rgba(26,152,80") and diverging(-1.0, 1.0).startswith("rgba(215,48,39")
    assert diverging(float("nan"), 1.0) == CLEAR
    assert sequential(1.0, 0.0, 1.0) > sequential(0.0, 0.0, 1.0)


def test_absolute_scale_is_the_same_for_every_trace_and_leaves_noise_untinted():
    scale = shade_scale([0.0006, -0.0004], "diverging")  # an uploaded trace's sigma of +-0.0006
    assert (scale.low, scale.high, scale.relative) == (-1.0, 1.0, False)
    assert scale.colour(0.0006) == scale.colour(-0.0004) == CLEAR  # below the noise floor: no tint at all
    assert scale.colour(1.0) == "rgba(26,152,80,0.720)" and scale.colour(-0.5) == "rgba(215,48,39,0.410)"
    assert scale.colour(3.0) == scale.colour(1.0)  # beyond the range: full colour
    assert shade_scale([0.9, 0.1], "diverging").colour(0.5) == scale.colour(0.5)  # same value, same colour
    values = shade_scale([0.2, 0.7], "sequential")
    assert (values.low, values.high) == (0.0, 1.0) and values.colour(0.001) == CLEAR
    assert values.colour(1.0).startswith("rgba(49,104,181,0.720")


def test_relative_scale_says_so_and_prints_its_largest_value():
    scale = shade_scale([0.0006, -0.02, 0.01], "diverging", relative=True)
    assert scale.relative and scale.high == pytest.approx(0.02)
    assert scale.colour(-0.02) == "rgba(215,48,39,0.720)" and scale.colour(0.0006) == CLEAR  # the floor still holds
    legend = scale.legend_html()
    assert 'data-scale="relative"' in legend and "Relative to this trace: full colour = max |σ| = 0.02" in legend
    absolute = shade_scale([0.3], "diverging").legend_html()
    assert 'data-scale="absolute"' in absolute and "Absolute scale: σ from −1 (red) to +1 (green)" in absolute
    assert f"|σ| &lt; {NOISE_FLOOR:g} is not tinted" in absolute


def test_legend_escapes_its_text():
    legend = ShadeScale(quantity="<b>").legend_html()
    assert "<b>" not in legend and "&lt;b&gt;" in legend
