"""Pre-split steps as segments (docs/method.md §2.3 ``given``): segment t is step t, so ProcessBench labels line
up (label l <-> segment l + 1). Separators between steps belong to the step before them."""

from __future__ import annotations

from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.segmenters.base import Segmenter, SegmenterInput, segmenters


@segmenters.register("given", aliases=("steps",))
class GivenSegmenter(Segmenter):
    name = "given"
    needs = ("steps",)
    follows_steps = True
    scored_up_front = True  # on a trace with steps
    provenance = "the dataset's own steps (ProcessBench, PRM800K, Thought Anchors chunks)"
    scope = "think"  # every step is a segment; only a thinking block's end (</think>) limits the region

    def propose(self, inp: SegmenterInput) -> tuple[list[int], list[str], dict[str, Any]]:
        if inp.step_spans is None:
            raise TraceError("the 'given' segmenter needs a trace with pre-split steps; pick another segmenter")
        starts = [start for start, _ in inp.step_spans[1:] if start < len(inp.text)]
        cuts = [inp.char_to_token_cut(start) for start in starts]
        warnings = []
        if len(set(cuts)) < len(cuts):
            warnings.append("some steps are shorter than one token and were merged with a neighbour")
        return cuts, ["step"] * len(cuts), {"warnings": warnings}
