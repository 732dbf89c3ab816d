"""The given-steps segmenter (segmenters/given.py): it reproduces a trace's steps exactly."""

from __future__ import annotations

import pytest

from rredcot_viz.errors import TraceError
from rredcot_viz.segmenters import segmenters

from .inputs import char_input


def test_given_reproduces_steps_exactly():
    steps = ["First we add.", "Then we carry the one.", "So the sum is \\boxed{12}."]
    text = "\n\n".join(steps)
    spans, cursor = [], 0
    for step in steps:
        start = text.index(step, cursor)
        spans.append(start)
        cursor = start + len(step)
    step_spans = tuple(zip([0, *spans[1:]], [*spans[1:], len(text)], strict=False))
    segmentation = segmenters.get("steps")().segment(char_input(text, step_spans=step_spans))
    assert [s.text.strip() for s in segmentation.segments] == steps
    with pytest.raises(TraceError, match="needs a trace with pre-split steps"):
        segmenters.get("given")().segment(char_input(text))
