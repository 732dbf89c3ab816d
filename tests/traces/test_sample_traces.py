"""The sample traces the project ships: loadable, labelled consistently, and varied enough for the app."""

from __future__ import annotations

import pytest

from rredcot_viz.traces.answers import answers_equivalent, extract_answer
from rredcot_viz.traces.io import sample_traces
from rredcot_viz.traces.trace import Trace


@pytest.fixture(scope="module")
def traces() -> list[Trace]:
    return sample_traces()


def test_there_are_enough_sample_traces(traces: list[Trace]) -> None:
    assert len(traces) >= 12


def test_trace_ids_and_content_hashes_are_unique(traces: list[Trace]) -> None:
    ids = [trace.trace_id for trace in traces]
    assert all(ids), "every sample trace needs a trace_id"
    assert len(set(ids)) == len(ids)
    hashes = [trace.content_hash for trace in traces]
    assert len(set(hashes)) == len(hashes)


def test_every_trace_has_a_reference_answer_and_solution(traces: list[Trace]) -> None:
    for trace in traces:
        assert trace.reference_answer and trace.reference_answer.strip(), trace.trace_id
        assert trace.reference_solution and trace.reference_solution.strip(), trace.trace_id
        assert answers_equivalent(extract_answer(trace.reference_solution), trace.reference_answer), trace.trace_id


def test_both_kinds_are_present(traces: list[Trace]) -> None:
    kinds = {trace.metadata.get("kind") for trace in traces}
    assert {"correct", "failed"} <= kinds


def test_outcome_matches_the_labelled_kind(traces: list[Trace]) -> None:
    for trace in traces:
        kind = trace.metadata.get("kind")
        assert kind in ("correct", "failed"), trace.trace_id
        assert trace.outcome == (1.0 if kind == "correct" else 0.0), trace.trace_id


def test_first_error_is_consistent_with_the_kind(traces: list[Trace]) -> None:
    for trace in traces:
        assert trace.steps, trace.trace_id
        if trace.metadata["kind"] == "correct":
            assert trace.first_error == -1, trace.trace_id
        else:
            assert trace.first_error is not None and 0 <= trace.first_error < len(trace.steps), trace.trace_id


def test_steps_tile_the_response(traces: list[Trace]) -> None:
    for trace in traces:
        spans = trace.step_spans()
        assert spans[0][0] == 0 and spans[-1][1] == len(trace.cot), trace.trace_id
        assert "\\boxed{" in trace.steps[-1], trace.trace_id


def test_at_least_one_long_trace(traces: list[Trace]) -> None:
    # > 4,000 characters stands in for > 1,000 tokens of the embedded model's tokenizer (no model needed)
    assert any(len(trace.cot) > 4000 for trace in traces)
