"""The MATH importer (importers/math.py): MATH-500 and the competition sets."""

from __future__ import annotations

from collections import Counter

from .samples import imported, raw_records


def test_math500() -> None:
    report = imported("math/math500_test.jsonl")
    assert report.format == "math" and not report.issues and len(report.traces) == 500
    assert Counter(t.metadata["level"] for t in report.traces) == {1: 43, 2: 90, 3: 105, 4: 128, 5: 134}
    records = raw_records("math/math500_test.jsonl")
    assert [t.trace_id for t in report.traces] == [r["unique_id"] for r in records]
    assert all(t.cot == t.reference_solution and t.correct for t in report.traces)


def test_competition_sets() -> None:
    aime = imported("competition/aime24_qwen25math.jsonl")
    assert aime.format == "math" and not aime.issues and len(aime.traces) == 30
    assert [t.trace_id for t in aime.traces] == [str(i) for i in range(60, 90)]
    amc = imported("competition/amc23.jsonl")  # problems without solutions: each one an issue, none lost
    assert amc.format == "math" and amc.records_read == 40 and not amc.traces
    assert amc.records_failed == 40 and all("solution" in issue.message for issue in amc.issues)
