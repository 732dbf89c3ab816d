"""Monte Carlo values with a deterministic sampling double: convergence, coverage, truncation, reuse."""

from __future__ import annotations

import numpy as np
import pytest
from toy import ToySampler

from rredcot_viz.engine import Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.stats import newcombe_difference, wilson_interval
from rredcot_viz.traces.trace import Trace

TRACE = Trace(
    "Add 3 and 4.", "aa\nbb\ncc\nThe answer is \\boxed{7}.", reference_answer="7", reference_solution="\\boxed{7}"
)
TRUE_P = [0.2, 0.5, 0.9]  # success probability from s_1, s_2, s_3 (newlines in the prefix)


def success(context: str) -> float:
    return TRUE_P[context.split(" A ", 1)[1].split("\nTherefore")[0].count("\n")]


def run(n: int, truncation: float = 0.0, seed: int = 0, **options):
    lm = ToySampler(success, truncation)
    analyzer = Analyzer(lm)
    estimator = estimators.get("mc")(rollouts=n, seed=seed, **options)
    return analyzer.analyze(TRACE, segmenters.get("line")(), estimator), analyzer, lm


def test_wilson_and_newcombe_fixtures():
    expected = {(7, 10): (0.3968, 0.8922), (0, 8): (0.0, 0.3244), (8, 8): (0.6756, 1.0), (3, 8): (0.1368, 0.6943)}
    for (k, n), interval in expected.items():
        assert wilson_interval(k, n) == pytest.approx(interval, abs=1e-4)
    assert newcombe_difference(3, 8, 7, 8) == pytest.approx((0.0293, 0.7593), abs=1e-4)


def test_estimate_converges_and_intervals_cover():
    result, _, _ = run(400)
    values = result.values
    np.testing.assert_allclose(values.values[:3], TRUE_P, atol=0.06)
    assert values.values[3] == 1.0  # V_{K+1} := R
    intervals = values.intervals["V_mc"]
    for p, (low, high) in zip(TRUE_P, intervals[:3], strict=True):
        assert low <= p <= high and high - low < 0.12
    assert abs(result.sigma.sum() - 1.0) < 1e-12


def test_coverage_rate_of_the_wilson_interval():
    """Over 60 seeds with n=20, the 95% interval covers the true value in at least 85% of the runs."""
    covered = []
    for seed in range(60):
        result, _, _ = run(20, seed=seed)
        lows, highs = result.values.intervals["V_mc"][:3].T
        covered.extend((lows <= np.array(TRUE_P)) & (np.array(TRUE_P) <= highs))
    assert np.mean(covered) >= 0.85


def test_more_rollouts_reuse_the_drawn_ones():
    lm = ToySampler(success)
    analyzer = Analyzer(lm)
    segmenter = segmenters.get("line")()
    small = analyzer.analyze(TRACE, segmenter, estimators.get("mc")(rollouts=8))
    generated = lm.meter.total.tokens_generated
    large = analyzer.analyze(TRACE, segmenter, estimators.get("mc")(rollouts=16))
    assert lm.meter.total.tokens_generated - generated == pytest.approx(generated, rel=0.2)  # only 8 more each
    again = analyzer.analyze(TRACE, segmenter, estimators.get("mc")(rollouts=8))
    assert again.model_calls == 0
    np.testing.assert_array_equal(again.values.values, small.values.values)
    stored = analyzer.context(TRACE).cache.rollouts(
        analyzer.context(TRACE).key, estimators.get("mc")().sampling_key(analyzer.context(TRACE)), 0
    )
    assert [r.index for r in stored] == list(range(16)) and large.values.components["rollouts"][0] == 16


def test_reproducible_from_the_seed():
    first, _, _ = run(12, seed=3)
    second, _, _ = run(12, seed=3)
    other, _, _ = run(12, seed=4)
    np.testing.assert_array_equal(first.values.values, second.values.values)
    assert not np.array_equal(first.values.components["successes"], other.values.components["successes"])


def test_truncation_is_counted_and_bounds_the_value():
    result, _, _ = run(200, truncation=0.3)
    c = result.values.components
    np.testing.assert_allclose(c["truncated_fraction"][:3], 0.3, atol=0.08)
    assert (c["p_high"][:3] >= c["V_mc"][:3]).all() and (c["p_cond"][:3] >= c["V_mc"][:3]).all()
    # p_low is biased down by the truncated rollouts; p_cond recovers the true rate
    np.testing.assert_allclose(c["p_cond"][:3], TRUE_P, atol=0.1)
    assert (np.array(TRUE_P) - c["V_mc"][:3] > 0.03).all()
    assert "hit the 2048-token cap without an answer" in result.values.notes[0]


def test_progressive_stops_when_tight():
    result, _, _ = run(4, progressive=True, half_width=0.15, max_rollouts=64)
    n = result.values.components["rollouts"][:3]
    assert (n >= 4).all() and (n <= 64).all() and n.max() > 4
    for k, count in zip(result.values.components["successes"][:3], n, strict=True):
        low, high = wilson_interval(int(k), int(count))
        assert (high - low) / 2 <= 0.15 or count == 64


def test_forced_answer_rollouts():
    result, _, _ = run(50, forced_answer=True)
    assert result.values.values[0] == pytest.approx(TRUE_P[0], abs=0.15)


class ScriptedSampler(ToySampler):
    """Continues a state ending in "The answer is" with " 7." and any other state with " so the answer is 7."."""

    def __init__(self):
        super().__init__(lambda context: 1.0)

    def sample_after_prefixes(self, ids, requests, config=None, *, progress=None):
        from rredcot_viz.types import Generation

        results = []
        for request in requests:
            context = self.decode([*ids[: request.prefix], *request.context])
            text = " 7." if context.endswith("The answer is") else " so the answer is 7."
            results.append([Generation(request.prefix, self.encode(text), text, "eos", int(s)) for s in request.seeds])
        return results


def test_a_state_inside_the_answer_sentence_is_graded_with_what_it_holds():
    """The issue's reproduction: a three-step trace whose last state ends at "The answer is"; before the grader
    read the state's text, MC there was 0.00."""
    trace = Trace("Add 3 and 4.", "3 + 4\nis 7.\nThe answer is 7.", reference_answer="7", steps=["3 + 4\n",
                  "is 7.\nThe answer is", " 7."])  # fmt: skip
    analyzer = Analyzer(ScriptedSampler())
    result = analyzer.analyze(trace, segmenters.get("given")(), estimators.get("mc")(rollouts=4))
    np.testing.assert_array_equal(result.values.values, [1.0, 1.0, 1.0, 1.0])
    context = analyzer.context(trace)
    last = estimators.get("mc")(rollouts=4).rollouts(context, result.segmentation.state_prefixes[2])
    assert [(r.text, r.answer, r.correct) for r in last] == [(" 7.", "7", True)] * 4


def test_stored_rollouts_are_graded_again_on_read():
    """Rollouts stored with the former grade (the rollout's text alone) read with today's grader."""
    from dataclasses import replace

    analyzer = Analyzer(ScriptedSampler())
    trace = Trace("Add 3 and 4.", "3 + 4 is 7.\nThe answer is 7.", reference_answer="7",
                  steps=["3 + 4 is 7.\nThe answer is", " 7."])  # fmt: skip
    estimator = estimators.get("mc")(rollouts=2)
    analyzer.analyze(trace, segmenters.get("given")(), estimator)
    context = analyzer.context(trace)
    prefix = analyzer.segment(trace, segmenters.get("given")()).state_prefixes[1]
    stored = context.cache.rollouts(context.key, estimator.sampling_key(context), prefix)
    stored[:] = [replace(r, answer=None, correct=False) for r in stored]  # as the former grader left them
    assert [r.correct for r in estimator.rollouts(context, prefix)] == [True, True]


def test_forced_answers_are_graded_after_the_state_and_the_trigger():
    result, analyzer, _ = run(64, forced_answer=True)
    context = analyzer.context(TRACE)
    estimator = estimators.get("mc")(rollouts=64, forced_answer=True)
    rollout = estimator.rollouts(context, result.segmentation.state_prefixes[0])[0]
    assert estimator.graded_text(context, rollout.prefix, rollout.text).endswith("\\boxed{" + rollout.answer + "}")
    assert estimator.graded_text(context, rollout.prefix, "7 and on") is None  # never closed: no answer
