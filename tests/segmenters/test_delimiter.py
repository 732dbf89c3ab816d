"""The delimiter segmenter (segmenters/delimiter.py): after a string, before a regex, none at the end."""

from __future__ import annotations

import numpy as np
import pytest

from rredcot_viz.errors import ConfigError
from rredcot_viz.segmenters import SegmenterInput, segmenters

from .inputs import char_input


def test_a_delimiter_that_ends_the_text_adds_no_piece():
    """A cut at the very end is after the last token, not before it (a multi-character last token stays whole)."""
    text = "one</thought>two</thought>"
    inp = SegmenterInput(text, (0, 3, 13, 16, 25), np.ones(5))  # "one" "</thought>" "two" "</thought" ">"
    assert inp.char_to_token_cut(len(text)) == 5 and inp.char_to_token_cut(len(text) - 1) == 4
    assert [s.text for s in segmenters.get("delimiter")().segment(inp).segments] == ["one</thought>", "two</thought>"]


def test_delimiter_after_string_and_before_regex():
    text = "one</thought>two</thought>three"
    assert [s.text for s in segmenters.get("delimiter")().segment(char_input(text)).segments] == [
        "one</thought>",
        "two</thought>",
        "three",
    ]
    steps = "Step 1: a\nStep 2: b\nStep 3: c"
    regex = segmenters.get("delimiter")(delimiter=r"^Step \d+:", regex=True).segment(char_input(steps))
    assert [s.text for s in regex.segments] == ["Step 1: a\n", "Step 2: b\n", "Step 3: c"]
    with pytest.raises(ConfigError, match="does not compile"):
        segmenters.get("delimiter")(delimiter="(", regex=True)
