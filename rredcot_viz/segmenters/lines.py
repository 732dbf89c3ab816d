"""Line and paragraph segmenters (docs/method.md §2.3): VinePPO's ``\\n`` steps and Qwen2.5-Math-PRM's blank-line
steps."""

from __future__ import annotations

import re
from typing import Any

from rredcot_viz.segmenters.base import Segmenter, SegmenterInput, regex_cuts, segmenters

_LINE = re.compile(r"\n")
_PARAGRAPH = re.compile(r"\n\s*\n")


@segmenters.register("line", aliases=("newline",))
class LineSegmenter(Segmenter):
    """Cut after every newline."""

    name = "line"
    scored_up_front = True
    provenance = "VinePPO reasoning_step_delimiter (design choice)"

    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        cuts, kinds = regex_cuts(inp, _LINE, "newline", after=True)
        return cuts, kinds, {}


@segmenters.register("paragraph")
class ParagraphSegmenter(Segmenter):
    """Cut after every blank line (``\\n\\s*\\n``)."""

    name = "paragraph"
    scored_up_front = True
    provenance = "Qwen2.5-Math-PRM step convention (design choice)"

    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        cuts, kinds = regex_cuts(inp, _PARAGRAPH, "paragraph", after=True)
        return cuts, kinds, {}
