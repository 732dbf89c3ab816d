"""The analyzer on a tiny random transformer: cache equivalence, zero model calls on re-segmentation,
boundary modes, scopes and pre-split steps."""

from __future__ import annotations

import numpy as np
import pytest

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace

TRACE = Trace(
    question="Tom has 3 apples and buys 5 more. How many apples does he have?",
    cot=(
        "Tom starts with 3 apples.\nHe buys 5 more, so 3 + 5 = 8. Wait, let me check again. "
        "So the total is 8.\n\nTherefore, the final answer is \\boxed{8}."
    ),
    reference_answer="8",
    reference_solution="3 + 5 = 8, so the answer is \\boxed{8}.",
)


def test_cached_values_equal_a_fresh_state_only_analysis(tiny):
    """Values assembled from the all-boundary cache equal those computed for exactly the K+1 states."""
    estimator = estimators.get("rredcot")()
    warm = Analyzer(tiny, AnalysisConfig(boundaries="all"))
    warm.analyze(TRACE, segmenters.get("sentence")(), estimator)
    for k in (1, 2, 3):
        cached = warm.analyze(TRACE, segmenters.get("hybrid")(k=k), estimator)
        fresh = Analyzer(tiny, AnalysisConfig(boundaries="states")).analyze(
            TRACE, segmenters.get("hybrid")(k=k), estimator
        )
        assert cached.model_calls == 0 and fresh.model_calls == 2  # stats first, then the states
        assert cached.segmentation.cuts == fresh.segmentation.cuts
        np.testing.assert_allclose(cached.values.values, fresh.values.values, atol=1e-6)
        np.testing.assert_allclose(cached.sigma, fresh.sigma, atol=1e-6)


def test_changing_k_segmenter_or_aggregation_makes_zero_model_calls(tiny):
    analyzer = Analyzer(tiny, AnalysisConfig(boundaries="all"))
    first = analyzer.analyze(TRACE, segmenters.get("hybrid")(k=3), estimators.get("rredcot")())
    assert first.model_calls == 1
    calls = tiny.meter.total.calls
    for segmenter in ("keyword", "line", "paragraph", "sentence"):
        assert analyzer.analyze(TRACE, segmenters.get(segmenter)(), estimators.get("rredcot")()).model_calls == 0
    for aggregation in ("seq_prob", "geo_mean"):
        again = analyzer.analyze(
            TRACE, segmenters.get("hybrid")(k=2), estimators.get("rredcot")(aggregation=aggregation)
        )
        assert again.model_calls == 0
    assert tiny.meter.total.calls == calls
    # a new trigger is a new series: one call, then cached as well
    other = estimators.get("rredcot")(trigger="\nSo the answer is \\boxed{")
    assert analyzer.analyze(TRACE, segmenters.get("hybrid")(k=2), other).model_calls == 1
    assert analyzer.analyze(TRACE, segmenters.get("hybrid")(k=3), other).model_calls == 0


def test_segmenter_boundaries_score_only_that_segmenters_candidates(tiny):
    analyzer = Analyzer(tiny, AnalysisConfig(boundaries="segmenter"))
    hybrid = segmenters.get("hybrid")(k=2)
    context = analyzer.context(TRACE)
    candidates = analyzer.candidate_prefixes(context, hybrid)
    keyword_cuts = set(hybrid.candidate_cuts(context.segmenter_input("reasoning", with_entropies=False)))
    assert candidates == {0, context.region_tokens("reasoning")} | keyword_cuts
    analyzer.analyze(TRACE, hybrid, estimators.get("answer_only")())
    assert analyzer.analyze(TRACE, segmenters.get("hybrid")(k=3), estimators.get("answer_only")()).model_calls == 0


def test_the_final_answer_sentence_is_not_a_segment(tiny):
    result = Analyzer(tiny).analyze(TRACE, segmenters.get("line")(), estimators.get("uniform")())
    texts = [s.text for s in result.segmentation.segments]
    assert "".join(texts) == TRACE.cot[: TRACE.cot.index("Therefore")]
    whole = Analyzer(tiny, AnalysisConfig(scope="whole")).analyze(
        TRACE, segmenters.get("line")(), estimators.get("uniform")()
    )
    assert "".join(s.text for s in whole.segmentation.segments) == TRACE.cot
    assert result.warnings == [] and whole.warnings == []


def test_a_reasoning_scope_that_widens_to_the_whole_response_says_so(tiny):
    unstated = TRACE.with_changes(cot=TRACE.cot[: TRACE.cot.index("Therefore")] + "8")
    result = Analyzer(tiny).analyze(unstated, segmenters.get("line")(), estimators.get("uniform")())
    assert "".join(s.text for s in result.segmentation.segments) == unstated.cot
    assert result.warnings == [
        "scope 'reasoning': the response states no final answer (no </think>, \\boxed{} or 'the answer is'), so the "
        "whole response is segmented"
    ]


def test_given_segments_are_the_steps_even_with_the_answer_in_the_last(tiny):
    steps = ("Tom starts with 3 apples.", "He buys 5 more, so 3 + 5 = 8.", "So the answer is \\boxed{8}.")
    trace = Trace(TRACE.question, "\n\n".join(steps), steps=steps, first_error=-1, correct=True)
    result = Analyzer(tiny).analyze(trace, segmenters.get("given")(), estimators.get("uniform")())
    assert [s.text.strip() for s in result.segmentation.segments] == list(steps)
    assert result.k == 3 and abs(result.sigma.sum() - 1.0) < 1e-12


def test_rows_show_the_state_values_before_each_segment(tiny):
    result = Analyzer(tiny).analyze(TRACE, segmenters.get("line")(), estimators.get("rredcot")())
    rows = result.rows()
    assert [row["segment"] for row in rows] == list(range(1, result.k + 1))
    for index, row in enumerate(rows):
        assert row["R_hat"] == pytest.approx(result.values.components["R_hat"][index])
        assert row["Q_hat"] == pytest.approx(result.values.values[index])
        assert row["sigma"] == pytest.approx(result.sigma[index])
    assert 0 < rows[0]["R_hat"] < 1 and 0 < rows[0]["v_hat"] < 1
