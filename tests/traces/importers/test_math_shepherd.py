"""The Math-Shepherd importer (importers/math_shepherd.py) on the shared samples."""

from __future__ import annotations

from .samples import assert_steps_tile, imported, raw_records


def test_math_shepherd() -> None:
    report = imported("step_labels/math_shepherd_samples.jsonl")
    assert report.format == "math_shepherd" and not report.issues
    assert [t.first_error for t in report.traces] == [4, 0, 0, 0, 1, 0, 0]
    assert sum(len(t.steps) for t in report.traces) == 25
    for trace, record in zip(report.traces, raw_records("step_labels/math_shepherd_samples.jsonl"), strict=True):
        assert "ки" not in trace.cot and "Step 1:" not in trace.question
        assert [step.split(":")[0] for step in trace.steps] == [f"Step {k}" for k in range(1, len(trace.steps) + 1)]
        assert len(trace.step_labels) == len(trace.steps) and set(trace.step_labels) <= {-1, 1}
        assert trace.step_labels.count(-1) == record["label"].count(" -\n") + record["label"].endswith(" -")
        assert_steps_tile(trace)
