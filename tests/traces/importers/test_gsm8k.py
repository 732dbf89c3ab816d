"""The GSM8K problem importer (importers/gsm8k.py) on the shared test set."""

from __future__ import annotations

from .samples import assert_steps_tile, imported, raw_records


def test_gsm8k_test_set() -> None:
    report = imported("gsm8k/test.jsonl")
    assert report.format == "gsm8k" and not report.issues and len(report.traces) == 1319
    for trace, record in zip(report.traces, raw_records("gsm8k/test.jsonl"), strict=True):
        assert trace.reference_answer == record["answer"].rsplit("#### ", 1)[1].strip()
        assert "<<" not in trace.reference_solution and "####" not in trace.reference_solution
        assert trace.outcome == 1.0 and trace.metadata == {"kind": "reference_solution"}
        assert trace.answer == trace.reference_answer
        assert_steps_tile(trace)
