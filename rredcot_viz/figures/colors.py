"""Colour scales shared by the HTML heatmaps and the Plotly figures."""

from __future__ import annotations

import math

NEGATIVE = (215, 48, 39)  # red: a segment that lowered the value
POSITIVE = (26, 152, 80)  # green: a segment that raised it
SEQUENTIAL = (49, 104, 181)  # blue: a probability-like value
PLOTLY_DIVERGING = [[0.0, "rgb(215,48,39)"], [0.5, "rgb(255,255,255)"], [1.0, "rgb(26,152,80)"]]


def diverging(value: float, scale: float) -> str:
    """CSS background for ``value`` on a scale centred at 0 (|value| >= scale is full colour)."""
    if not math.isfinite(value) or scale <= 0:
        return "rgba(0,0,0,0)"
    strength = min(abs(value) / scale, 1.0)
    red, green, blue = NEGATIVE if value < 0 else POSITIVE
    return f"rgba({red},{green},{blue},{0.08 + 0.62 * strength:.3f})"


def sequential(value: float, low: float, high: float) -> str:
    if not math.isfinite(value) or high <= low:
        return "rgba(0,0,0,0)"
    strength = min(max((value - low) / (high - low), 0.0), 1.0)
    red, green, blue = SEQUENTIAL
    return f"rgba({red},{green},{blue},{0.06 + 0.6 * strength:.3f})"
