"""Traces with a first error planted at a known step, and toy-model rules that score them (the diagnosis tests
and the reference-free estimator's)."""

from __future__ import annotations

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace

# a trace with a reference whose error is planted at step 2 (0-based), and a rule that scores it
STEPS = ("aa", "bb", "XX", "cc", "dd")  # "XX" is the planted error: segment 3, 0-based 2
COT = "\n\n".join(STEPS) + "\n\nThe answer is \\boxed{8}."
TRACE = Trace(
    "Add 3 and 4.",
    COT,
    reference_answer="7",
    reference_solution="\\boxed{7}",
    steps=(*STEPS[:-1], STEPS[-1] + "\n\nThe answer is \\boxed{8}."),
    first_error=2,
)


def answer_rule(context: str) -> dict[str, float]:
    """p(reference answer) is high until the planted error appears, then low; v-hat alike."""
    response = context.split(" A ", 1)[1] if " A " in context else ""
    bad = "XX" in response
    if response.endswith("="):
        return {"7": 0.05 if bad else 0.8}
    if response.endswith("=7"):
        return {"}": 0.9}
    if "#" in response:
        path = response.split("#", 1)[1]
        return {"\\boxed{7}"[len(path)]: 0.05 if bad else 0.6} if len(path) < 9 else {}
    return {}


def rredcot_options():
    return {"estimator_options": {"trigger": "=", "path_separator": "#"}}


# the same kind of trace with no reference of any kind: "XX" leads to its own wrong answer 8
FAILED_STEPS = ("aa", "bb", "XX", "cc", "dd\n\nThe answer is \\boxed{8}.")
FAILED = Trace("Add 3 and 4.", "\n\n".join(FAILED_STEPS), steps=FAILED_STEPS, first_error=2, correct=False)


def own_rule(context: str) -> dict[str, float]:
    """p(8) after the trigger is low until "XX" appears, then high."""
    response = context.split(" A ", 1)[1] if " A " in context else ""
    if response.endswith("="):
        return {"8": 0.7 if "XX" in response else 0.1}
    if response.endswith("=8"):
        return {"}": 0.9}
    return {}


RECORD = Trace(  # a ProcessBench-style record, written for the tests
    "Mia reads 12 pages a day. How many pages does she read in a week?",
    "Mia reads 12 pages each day. A week has 7 days.\n\n12 * 7 = 74. So she reads 74 pages.\n\n"
    "The answer is \\boxed{74}.",
    steps=(
        "Mia reads 12 pages each day. A week has 7 days.",
        "12 * 7 = 74. So she reads 74 pages.",
        "The answer is \\boxed{74}.",
    ),
    first_error=1,
    correct=False,
)


GIVEN = segmenters.get("given")()


def analyzer(lm) -> Analyzer:
    return Analyzer(lm, AnalysisConfig(boundaries="states"))


# Six ProcessBench-style records: the first three wrong at step 0 (label 0), the last three correct (label -1).
STEP_RECORDS = [
    {
        "id": f"r{i}",
        "problem": f"What is {i} + {i}?",
        "steps": [f"{i} + {i} = {2 * i + e}.", f"So {2 * i + e}."],
        "final_answer_correct": e == 0,
        "label": -1 if e == 0 else 0,
    }
    for i, e in zip(range(1, 7), [1, 1, 1, 0, 0, 0], strict=True)
]
