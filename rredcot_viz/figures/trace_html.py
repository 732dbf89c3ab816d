"""The trace as HTML with every segment shaded by a score: a pure function of computed data.

All trace text is escaped (``html.escape``) before it enters the markup, so a trace that contains
``<script>`` or ``<img onerror=...>`` renders as text. Hovering a segment shows its values in a CSS tooltip
(no JavaScript). Long segments are collapsed to their first and last lines behind a ``<details>`` element,
so a 4,000-token trace stays light in the browser. The shading follows the one rule of ``figures.colors``
(an absolute scale unless asked otherwise, noise untinted) and the legend above the text says which.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np

from rredcot_viz.figures.colors import Kind, ShadeScale, shade_scale

STYLE = """<style>
.rc-trace{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:0.86rem;line-height:1.55;
white-space:pre-wrap;word-break:break-word;border:1px solid rgba(128,128,128,.25);border-radius:6px;padding:10px}
.rc-seg{position:relative;border-radius:3px;padding:1px 0;cursor:help}
.rc-seg:hover{outline:2px solid rgba(60,60,60,.55)}
.rc-seg .rc-tip{visibility:hidden;position:absolute;left:0;top:100%;z-index:10;white-space:pre;background:#222;
color:#fff;font-size:0.75rem;padding:4px 6px;border-radius:4px;margin-top:2px;pointer-events:none}
.rc-seg:hover .rc-tip{visibility:visible}
.rc-num{font-size:0.68rem;font-weight:600;color:#555;vertical-align:super;margin-right:2px}
.rc-answer{color:#777;font-style:italic}
.rc-trace details{display:inline}
.rc-trace summary{display:inline;cursor:pointer;color:#555}
</style>"""


def _format(value: float | int) -> str:
    """A tooltip number: counts as integers, other values signed with four decimals."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return str(int(value))
    return "n/a" if value is None or not math.isfinite(value) else f"{value:+.4f}"


def _body(text: str, collapse_chars: int) -> str:
    if len(text) <= collapse_chars:
        return html.escape(text)
    head, tail = text[: collapse_chars // 2], text[-collapse_chars // 4 :]
    middle = text[len(head) : len(text) - len(tail)]
    return (
        f"{html.escape(head)}<details><summary>[… {len(middle)} more characters]</summary>"
        f"{html.escape(middle)}</details>{html.escape(tail)}"
    )


def trace_heatmap(
    texts: Sequence[str],
    scores: Sequence[float],
    tooltips: Sequence[dict[str, float | int]],
    *,
    scale: Kind | ShadeScale = "diverging",
    answer_text: str = "",
    collapse_chars: int = 1200,
    legend: bool = True,
) -> str:
    """HTML of the segments shaded by ``scores``: on ``scale`` (a kind means its absolute scale: sigma in
    [-1, 1], values in [0, 1]), with the scale's legend above the text unless ``legend`` is False."""
    values = np.asarray(scores, dtype=float)
    shades = scale if isinstance(scale, ShadeScale) else shade_scale(values, scale)
    parts = [STYLE, shades.legend_html() if legend else "", '<div class="rc-trace">']
    for index, (text, value, tip) in enumerate(zip(texts, values, tooltips, strict=True)):
        colour = shades.colour(value)
        lines = "\n".join(f"{html.escape(k)} = {_format(v)}" for k, v in tip.items())
        lead = text[: len(text) - len(text.lstrip("\n"))]  # a line break before the segment goes before its
        parts.append(  # number, so the number starts the line its text is on (not a line of its own)
            f'{lead}<span class="rc-seg" data-segment="{index + 1}" style="background:{colour}">'
            f'<span class="rc-num">{index + 1}</span>{_body(text[len(lead) :], collapse_chars)}'
            f'<span class="rc-tip">segment {index + 1}\n{lines}</span></span>'
        )
    if answer_text:
        parts.append(
            '<span class="rc-answer" title="final answer: the Y action, not a segment">'
            f"{html.escape(answer_text)}</span>"
        )
    parts.append("</div>")
    return "".join(parts)
