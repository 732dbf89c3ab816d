"""Our own schema (importers/native.py): no other importer claims it."""

from __future__ import annotations

from rredcot_viz.traces.importers import detect_format
from rredcot_viz.traces.trace import Trace

from .samples import QUESTION, claimants


def test_native_records_are_not_claimed() -> None:
    trace = Trace(
        question=QUESTION,
        cot="He has 2 apples. Then 2 + 3 = 5. The answer is 5.",
        reference_answer="5",
        reference_solution="2 + 3 = 5",
        steps=("He has 2 apples.", "Then 2 + 3 = 5.", "The answer is 5."),
        first_error=-1,
        step_labels=(1, 1, 1),
        step_values={"mc_accuracy": (0.5, 0.9, 1.0)},
        prompt="Q: ",
        metadata={"problem": "x", "answer": "5"},
    )
    for record in (trace.to_dict(), {"question": QUESTION, "cot": "2 + 3 = 5"}):
        assert claimants(record) == ["native"]
        assert detect_format(record) == "native"
