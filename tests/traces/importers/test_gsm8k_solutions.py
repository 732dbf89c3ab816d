"""The GSM8K model-solutions importer (importers/gsm8k_solutions.py) on the shared file."""

from __future__ import annotations

from collections import Counter

from .samples import imported


def test_gsm8k_model_solutions() -> None:
    report = imported("gsm8k/example_model_solutions.jsonl")
    assert report.format == "gsm8k_solutions" and not report.issues
    assert len(report.traces) == 5276
    assert sum(t.correct is False for t in report.traces) == 3275
    correct_by_model = Counter(t.metadata["model"] for t in report.traces if t.correct)
    assert correct_by_model == {
        "6b_finetuning": 286,
        "6b_verification": 515,
        "175b_finetuning": 458,
        "175b_verification": 742,
    }
    assert all("<<" not in t.reference_solution for t in report.traces)
    # line i has the same problem (and reference answer) as line i of test.jsonl
    test_set = imported("gsm8k/test.jsonl").traces
    assert [t.reference_answer for t in report.traces[::4]] == [t.reference_answer for t in test_set]
