"""What a method needs of a trace (traces/needs.py): read from its fields and described."""

from __future__ import annotations

import pytest
from planted import FAILED

from rredcot_viz.traces.needs import describe, missing


def test_needs_are_read_from_fields_and_described():
    assert missing(FAILED, ("outcome", "answer", "reference_answer", "reference_solution")) == [
        "reference_answer",
        "reference_solution",
    ]
    assert describe(["reference_answer"]) == "a reference answer"
    with pytest.raises(ValueError, match="unknown need 'gold'"):
        missing(FAILED, ("gold",))
