"""What a method needs from a trace, checked on the trace's fields alone (no model), so a whole file can be
checked in well under a second before any model work starts (estimators and detectors declare ``needs``).

Needs: ``outcome`` (a correct/wrong label, or a reference answer to check the final answer against),
``reference_answer``, ``reference_solution``, ``answer`` (a final answer stated in the trace), ``steps``
(pre-split steps) and ``step_values`` (published per-step values).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rredcot_viz.traces.trace import Trace

NEED_TEXT = {
    "outcome": "an outcome (a correct/wrong label, or a reference answer to check the final answer against)",
    "reference_answer": "a reference answer",
    "reference_solution": "a reference solution (the reference path for v-hat)",
    "answer": "a final answer stated in the trace (\\boxed{}, 'the answer is', ####)",
    "steps": "pre-split steps",
    "step_values": "published per-step values (e.g. a Thought Anchors import)",
}


def lacks(trace: Trace, need: str) -> bool:
    """True when ``trace`` does not have ``need``."""
    if need not in NEED_TEXT:
        raise ValueError(f"unknown need {need!r}; known: {', '.join(NEED_TEXT)}")
    if need == "outcome":
        return trace.outcome is None
    if need == "answer":
        return trace.answer is None
    return not getattr(trace, need)


def missing(trace: Trace, needs: tuple[str, ...]) -> list[str]:
    """The needs in ``needs`` that ``trace`` lacks, in order."""
    return [need for need in needs if lacks(trace, need)]


def describe(needs: list[str] | tuple[str, ...]) -> str:
    """'a reference answer and a reference solution ...' for a message."""
    return " and ".join(NEED_TEXT[need] for need in needs)
