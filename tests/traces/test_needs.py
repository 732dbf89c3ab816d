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


def test_a_forms_reference_and_label_fill_only_what_a_trace_lacks():
    """The paste and upload forms' optional reference answer and correct/wrong label."""
    bare = FAILED.with_changes(correct=None)  # its own answer is 8
    assert missing(bare, ("outcome", "reference_answer")) == ["outcome", "reference_answer"]
    referenced = bare.with_defaults(reference_answer="7")
    assert (referenced.reference_answer, referenced.outcome) == ("7", 0.0)  # checked against the reference
    assert bare.with_defaults(reference_answer="7", correct=True).outcome == 0.0  # the check decides, not the form
    assert bare.with_defaults(correct=True).outcome == 1.0 and bare.with_defaults(reference_answer="").outcome is None
    labelled = FAILED.with_defaults(reference_answer="8", correct=True)  # the file's label stays
    assert (labelled.correct, labelled.reference_answer) == (False, "8") and labelled.outcome == 0.0
