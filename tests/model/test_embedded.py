"""Integration checks on the embedded SmolLM2-135M-Instruct with the project's sample traces."""

from __future__ import annotations

import numpy as np
import pytest

from rredcot_viz.model.packing import Continuation
from rredcot_viz.traces.io import sample_traces

pytestmark = pytest.mark.integration
TRIGGER = "\nTherefore, the final answer is \\boxed{"


def _answer_logprob(lm, question: str, cot: str | None, answer: str) -> float:
    prompt = lm.encode_prompt(lm.format_prompt(question))
    ids = prompt + (lm.encode(cot) if cot else [])
    request = Continuation(len(ids), tuple(lm.encode(TRIGGER)), tuple(lm.encode(answer + "}")))
    return float(lm.score_continuations(ids, [request]).logprobs[0].sum())


def test_reference_answer_is_likelier_after_the_correct_trace(embedded_lm):
    """log p(Y* | question + full correct trace) >> log p(Y* | question) and >> after a corrupted trace
    (the answer replaced by another number wherever it is written)."""
    gains_over_question, gains_over_corrupted = [], []
    for trace in sample_traces():
        if trace.outcome != 1.0 or trace.reference_answer not in trace.cot:
            continue
        wrong = str(int(float(trace.reference_answer)) + 7)
        full = _answer_logprob(embedded_lm, trace.question, trace.cot, trace.reference_answer)
        bare = _answer_logprob(embedded_lm, trace.question, None, trace.reference_answer)
        corrupted = _answer_logprob(
            embedded_lm, trace.question, trace.cot.replace(trace.reference_answer, wrong), trace.reference_answer
        )
        gains_over_question.append(full - bare)
        gains_over_corrupted.append(full - corrupted)
    assert len(gains_over_question) >= 6
    # measured: 4.9-12.8 nats over the bare question, 3.6-9.9 nats over the corrupted trace
    assert min(gains_over_question) > 2.0 and np.mean(gains_over_question) > 5.0
    assert min(gains_over_corrupted) > 1.5 and np.mean(gains_over_corrupted) > 4.0


def test_correct_trace_beats_its_failed_twin(embedded_lm):
    """On the sample pairs (same question, one correct and one failed trace), the reference answer is
    likelier after the correct trace."""
    traces = sample_traces()
    pairs = [
        (good, bad)
        for good in traces
        for bad in traces
        if good.question == bad.question and good.outcome == 1.0 and bad.outcome == 0.0
    ]
    assert len(pairs) >= 6
    margins = [
        _answer_logprob(embedded_lm, good.question, good.cot, good.reference_answer)
        - _answer_logprob(embedded_lm, bad.question, bad.cot, good.reference_answer)
        for good, bad in pairs
    ]
    assert sum(m > 0 for m in margins) >= len(pairs) - 1 and np.mean(margins) > 2.0
