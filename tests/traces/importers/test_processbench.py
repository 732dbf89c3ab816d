"""The ProcessBench importer (importers/processbench.py): both shared splits, and reference fields."""

from __future__ import annotations

import math

import pytest

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers import importers

from .samples import assert_steps_tile, imported, raw_records


@pytest.mark.parametrize(
    ("relative", "count", "erroneous", "answer_correct", "correct_but_wrong_step"),
    [("processbench/gsm8k.json", 400, 207, 200, 7), ("processbench/math.json", 1000, 594, 500, 94)],
)
def test_processbench(
    relative: str, count: int, erroneous: int, answer_correct: int, correct_but_wrong_step: int
) -> None:
    report = imported(relative)
    assert report.format == "processbench" and not report.issues
    assert len(report.traces) == report.records_read == count
    assert sum(t.first_error != -1 for t in report.traces) == erroneous
    assert sum(t.first_error == -1 for t in report.traces) == count - erroneous
    assert sum(bool(t.correct) for t in report.traces) == answer_correct
    assert sum(bool(t.correct) and t.first_error >= 0 for t in report.traces) == correct_but_wrong_step
    for trace, record in zip(report.traces, raw_records(relative), strict=True):
        assert -1 <= trace.first_error < len(trace.steps)
        assert trace.first_error == record["label"] and trace.trace_id == record["id"]
        assert list(trace.steps) == record["steps"]
        assert_steps_tile(trace)
        spans = trace.step_spans()
        assert [trace.cot[start:end].rstrip("\n") for start, end in spans] == record["steps"]


def test_processbench_reads_reference_fields() -> None:
    record = {"problem": "Q?", "steps": ["1 + 1 = 2.", "So 2."], "label": -1, "reference_answer": 2, "solution": "x"}
    (trace,) = importers.get("processbench")().convert(record)
    assert (trace.reference_answer, trace.reference_solution) == ("2", "x")
    record["reference_answer"] = math.nan
    with pytest.raises(TraceError, match="is NaN"):
        importers.get("processbench")().convert(record)
