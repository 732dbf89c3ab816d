"""Recorded analyses: a round trip gives back what the Inspect page draws, a changed trace gets none, and the
shipped recordings match the shipped samples."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

from rredcot_viz.engine import Analyzer
from rredcot_viz.engine.recorded import RECORDED_FILE, Recording, load_recordings, recorded_result, save_recordings
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.io import sample_traces
from rredcot_viz.traces.trace import Trace

TRACE = Trace(
    question="Tom has 3 apples and buys 5 more. How many apples does he have?",
    cot="Tom starts with 3 apples.\nHe buys 5 more, so 3 + 5 = 8.\nSo the total is 8.\n\\boxed{8}",
    reference_answer="8",
    reference_solution="3 + 5 = 8, so the answer is \\boxed{8}.",
    trace_id="apples",
)
RECORDING = Recording("tiny test model", "abc123", {"segmenter": "hybrid (K = 3)", "estimator_name": "rredcot"})


@pytest.fixture(scope="module")
def analysed(tiny):
    return Analyzer(tiny).analyze(TRACE, segmenters.get("hybrid")(k=3), estimators.get("rredcot")())


def test_round_trip_gives_back_what_the_page_draws(analysed, tmp_path):
    path = tmp_path / "recorded.json"
    save_recordings(path, RECORDING, {"apples": analysed})
    recording, result = recorded_result(TRACE, path)
    assert recording == RECORDING and recording.label == "recorded with tiny test model"
    assert result.k == analysed.k == 3
    assert [s.text for s in result.segmentation.segments] == [s.text for s in analysed.segmentation.segments]
    assert result.segmentation.cuts == analysed.segmentation.cuts
    np.testing.assert_allclose(result.values.values, analysed.values.values, atol=1e-6)
    np.testing.assert_allclose(result.sigma, analysed.sigma, atol=1e-6)
    for name in ("R_hat", "v_hat"):
        np.testing.assert_allclose(result.values.components[name], analysed.values.components[name], atol=1e-6)
    assert (result.variant, result.values.estimator, result.model_calls) == (analysed.variant, "rredcot", 0)
    assert [row["tokens"] for row in result.rows()] == [row["tokens"] for row in analysed.rows()]


def test_a_changed_or_unknown_trace_gets_no_recording(analysed, tmp_path):
    path = tmp_path / "recorded.json"
    save_recordings(path, RECORDING, {"apples": analysed})
    edited = dataclasses.replace(TRACE, cot=TRACE.cot.replace("8", "9"))
    assert recorded_result(edited, path) is None  # same id, other text: the spans would not fit
    assert recorded_result(dataclasses.replace(TRACE, trace_id="pears"), path) is None
    assert recorded_result(dataclasses.replace(TRACE, trace_id=None), path) is None
    assert recorded_result(TRACE, tmp_path / "missing.json") is None
    assert "cot" not in json.loads(path.read_text())["traces"]["apples"]  # scores only, never the text


@pytest.mark.skipif(not RECORDED_FILE.is_file(), reason="no recordings shipped")
def test_the_shipped_recordings_match_the_samples():
    """A sample edited after the recording loses it: rerun scripts/record_scores.py."""
    recording, traces = load_recordings()
    assert "Qwen2.5-Coder-1.5B" in recording.model and len(recording.fingerprint) == 64
    for trace in sample_traces():
        found = recorded_result(trace)
        assert found is not None, f"{trace.trace_id} has no current recording: rerun scripts/record_scores.py"
        result = found[1]
        assert result.sigma.sum() == pytest.approx(trace.outcome, abs=1e-5)  # exact_sum
        spans = [s.char_span for s in result.segmentation.segments]
        assert spans[0][0] >= 0 and all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert set(traces) == {trace.trace_id for trace in sample_traces()}
