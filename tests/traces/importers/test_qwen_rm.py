"""The Qwen reward-model importer (importers/qwen_rm.py) on the shared scored samples."""

from __future__ import annotations

import pytest

from rredcot_viz.traces.trace import Trace

from .samples import imported


def test_qwen_rm() -> None:
    report = imported("traces/qwen_math_cot_100_rm_scored.jsonl")
    assert report.format == "qwen_rm" and not report.issues and len(report.traces) == 800
    assert sum(bool(t.correct) for t in report.traces) == 728
    groups: dict[int, list[Trace]] = {}
    for trace in report.traces:
        groups.setdefault(trace.metadata["group"], []).append(trace)
    assert len(groups) == 100 and all(len(g) == 8 for g in groups.values())
    all_correct = sum(all(t.correct for t in g) for g in groups.values())
    all_wrong = sum(not any(t.correct for t in g) for g in groups.values())
    assert (all_correct, all_wrong) == (86, 4)
    scores = [t.metadata["rm_score"] for t in report.traces]
    assert min(scores) == pytest.approx(-4.28, abs=0.01) and max(scores) == pytest.approx(6.09, abs=0.01)
    assert report.traces[9].trace_id == f"{report.traces[9].metadata['group']}/1"
