"""The Thought Anchors importer (importers/thought_anchors.py) on the shared traces."""

from __future__ import annotations

import math

from .samples import assert_steps_tile, imported, raw_records


def test_thought_anchors() -> None:
    relative = "traces/thought_anchors_r1distill_traces.jsonl"
    report = imported(relative)
    records = raw_records(relative)
    assert report.format == "thought_anchors" and not report.issues
    assert len(report.traces) == 40
    assert sum(len(t.steps) for t in report.traces) == 5814
    assert sum(bool(t.correct) for t in report.traces) == 20
    assert len({t.trace_id for t in report.traces}) == 40
    for trace, record in zip(report.traces, records, strict=True):
        chunks = record["chunks"]
        assert trace.prompt == record["prompt"] and trace.prompt.endswith("<think>\n")
        assert trace.cot == record["trace"] and trace.correct == record["is_correct"]
        assert set(trace.step_values) == {"mc_accuracy"}
        assert set(trace.step_scores) == {
            "ta_resampling_importance",
            "ta_counterfactual_importance",
            "ta_forced_importance",
        }
        assert all(len(values) == len(chunks) for values in (*trace.step_values.values(), *trace.step_scores.values()))
        assert list(trace.step_values["mc_accuracy"]) == [c["accuracy"] for c in chunks]
        assert all(0.0 <= v <= 1.0 for v in trace.step_values["mc_accuracy"] if not math.isnan(v))
        assert len(trace.metadata["function_tags"]) == len(chunks)
        # the steps are the chunks, up to the whitespace the upstream chunker normalised
        assert [" ".join(s.split()) for s in trace.steps] == [" ".join(c["chunk"].split()) for c in chunks]
        assert_steps_tile(trace)
        assert trace.step_spans()[-1][0] + len(trace.steps[-1]) <= trace.cot.index("</think>")
    assert sum(t.metadata["respaced_chunks"] for t in report.traces) == 116
