"""Colour scales shared by every heatmap (the HTML trace heatmaps, the training rows, the Plotly method heatmap).

One rule everywhere: a heatmap is shaded on an **absolute** scale by default (sigma and advantages in
[-1, 1] for a 0/1 reward, values in [0, 1]), so the same colour means the same number on every trace; a
value whose magnitude is below a noise floor is not tinted at all, so noise never looks like signal. A
heatmap may instead be scaled **relative** to the values shown; its legend then says so and prints the
largest |value| the full colour stands for. Every heatmap carries its legend (``legend_html``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

NEGATIVE = (215, 48, 39)  # red: a segment that lowered the value
POSITIVE = (26, 152, 80)  # green: a segment that raised it
SEQUENTIAL = (49, 104, 181)  # blue: a probability-like value
PLOTLY_DIVERGING = [[0.0, "rgb(215,48,39)"], [0.5, "rgb(255,255,255)"], [1.0, "rgb(26,152,80)"]]
# The line and bar colours the app's charts show (Streamlit's light theme), for figures drawn outside it (reports)
APP_COLOURS = ("#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a", "#6d3fc0",
               "#d5dae5")  # fmt: skip
NOISE_FLOOR = 0.005  # |sigma| (or a value) below this is left untinted: half a percentage point of a 0/1 reward
CLEAR = "rgba(0,0,0,0)"
LOWEST_ALPHA, ALPHA_RANGE = 0.10, 0.62  # the faintest tint above the floor, and how much darker full colour is

Kind = Literal["diverging", "sequential"]


@dataclass(frozen=True)
class ShadeScale:
    """How a heatmap turns numbers into colour. ``diverging``: red below 0, green above, full colour at
    |value| >= ``high``; ``sequential``: blue from ``low`` to ``high``. Values within ``floor`` of zero (of
    ``low`` when sequential) stay untinted. ``relative``: the range was taken from the values shown."""

    kind: Kind = "diverging"
    low: float = -1.0
    high: float = 1.0
    floor: float = NOISE_FLOOR
    relative: bool = False
    quantity: str = "σ"

    def colour(self, value: float) -> str:
        """CSS background of one value."""
        if value is None or not math.isfinite(value) or self.high <= self.low:
            return CLEAR
        if self.kind == "diverging":
            if abs(value) < self.floor or self.high <= 0:
                return CLEAR
            strength = min(abs(value) / self.high, 1.0)
            red, green, blue = NEGATIVE if value < 0 else POSITIVE
        else:
            if value - self.low < self.floor:
                return CLEAR
            strength = min(max((value - self.low) / (self.high - self.low), 0.0), 1.0)
            red, green, blue = SEQUENTIAL
        return f"rgba({red},{green},{blue},{LOWEST_ALPHA + ALPHA_RANGE * strength:.3f})"

    def tinted(self, value: float) -> bool:
        return self.colour(value) != CLEAR

    def describe(self) -> str:
        """The legend in words: the range, whether it is relative, and the noise floor."""
        if self.kind == "diverging":
            span = f"{self.quantity} from −{_number(self.high)} (red) to +{_number(self.high)} (green)"
            floor = f"|{self.quantity}| < {_number(self.floor)} is not tinted"
        else:
            span = f"{self.quantity} from {_number(self.low)} (white) to {_number(self.high)} (dark blue)"
            floor = f"{self.quantity} < {_number(self.low + self.floor)} is not tinted"
        if self.relative:
            largest = max(abs(self.low), abs(self.high)) if self.kind == "diverging" else self.high
            return f"Relative to this trace: full colour = max |{self.quantity}| = {_number(largest)}; {span}; {floor}"
        return f"Absolute scale: {span}; {floor}"

    def legend_html(self) -> str:
        """A small colour bar with its end labels and the scale in words (all text escaped)."""
        if self.kind == "diverging":
            stops = [self.colour(-self.high), CLEAR, self.colour(self.high)]
            left, right = f"−{_number(self.high)}", f"+{_number(self.high)}"
        else:
            stops = [CLEAR, self.colour(self.high)]
            left, right = _number(self.low), _number(self.high)
        mode = "relative" if self.relative else "absolute"
        return (
            f'<div class="rc-legend" data-scale="{mode}" data-high="{self.high:g}" data-floor="{self.floor:g}" '
            'style="display:flex;align-items:center;gap:8px;font-family:sans-serif;font-size:0.75rem;'
            'color:#555;margin:4px 0 6px 0">'
            f"<span>{html.escape(left)}</span>"
            f'<span style="display:inline-block;width:160px;height:10px;border:1px solid rgba(128,128,128,.4);'
            f'border-radius:2px;background:linear-gradient(to right,{",".join(stops)})"></span>'
            f"<span>{html.escape(right)}</span><span>{html.escape(self.describe())}</span></div>"
        )


def _number(value: float) -> str:
    return f"{value:.3g}"


def shade_scale(
    values: Sequence[float],
    kind: Kind = "diverging",
    *,
    relative: bool = False,
    quantity: str = "σ",
    low: float | None = None,
    high: float = 1.0,
    floor: float = NOISE_FLOOR,
) -> ShadeScale:
    """The scale of one heatmap: absolute (``low``..``high``; -high..high when diverging) unless ``relative``,
    then the range of ``values`` (their largest |value| when diverging). The noise floor is the same either way."""
    low = (-high if kind == "diverging" else 0.0) if low is None else low
    if not relative:
        return ShadeScale(kind, low, high, floor, False, quantity)
    finite = [float(v) for v in values if v is not None and math.isfinite(v)]
    if kind == "diverging":
        largest = max((abs(v) for v in finite), default=0.0)
        largest = largest if largest > 0 else high
        return ShadeScale(kind, -largest, largest, floor, True, quantity)
    lowest, highest = (min(finite), max(finite)) if finite else (low, high)
    return ShadeScale(kind, lowest, highest if highest > lowest else lowest + 1.0, floor, True, quantity)


def diverging(value: float, scale: float) -> str:
    """CSS background for ``value`` on a scale centred at 0 (|value| >= scale is full colour), noise untinted."""
    return ShadeScale("diverging", -scale, scale).colour(value)


def sequential(value: float, low: float, high: float) -> str:
    return ShadeScale("sequential", low, high, floor=0.0).colour(value)
