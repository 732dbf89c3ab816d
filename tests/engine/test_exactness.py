"""RREDCoT values on a toy model with exactly known probabilities, against hand-computed numbers (1e-9)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from toy import ToyLanguageModel

from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.errors import ConfigError, MissingReferenceError
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace

# docs/method.md §4.1: R-hat and v-hat at s_1..s_4 (the value at s_5 is replaced by the outcome R)
R_TABLE = [0.05, 0.10, 0.40, 0.45, 0.60]
V_TABLE = [0.10, 0.15, 0.30, 0.35, 0.80]
Q3, Q4 = 0.2, 0.1  # toy probabilities of the candidate answers "3" and "4" right after the trigger
TRIGGER, SEPARATOR = "=", "#"
PATH = "\\boxed{7}"
TRACE = Trace(
    question="Add 3 and 4.",
    cot="aa\nbb\ncc\ndd\nThe answer is \\boxed{7}.",
    reference_answer="7",
    reference_solution=PATH,
)


def rule(context: str) -> dict[str, float]:
    """After the trigger: the answer's next char with probability R_TABLE[k] ("}" after any digit w.p. 0.5);
    after the separator: P*'s next char with probability V_TABLE[k]; k = newlines in the response prefix."""
    response = context.split(" A ", 1)[1] if " A " in context else ""
    if TRIGGER in response:
        prefix, answer = response.split(TRIGGER, 1)
        k = prefix.count("\n")
        if answer == "":
            return {"7": R_TABLE[k], "3": Q3, "4": Q4}
        return {"}": 0.5}
    if SEPARATOR in response:
        prefix, path = response.split(SEPARATOR, 1)
        return {PATH[len(path)]: V_TABLE[prefix.count("\n")]} if len(path) < len(PATH) else {}
    return {}


def analyze(estimator="rredcot", variant="exact_sum", trace=TRACE, segmenter="line", **options):
    lm = ToyLanguageModel(rule)
    analyzer = Analyzer(lm, AnalysisConfig(variant=variant))
    if estimator != "uniform":
        options = {"trigger": TRIGGER, "path_separator": SEPARATOR, **options}
    chosen = estimators.get(estimator)(**options)
    return analyzer.analyze(trace, segmenters.get(segmenter)(), chosen), analyzer, lm


def test_segments_and_states_of_the_toy_trace():
    result, _, _ = analyze()
    assert [s.text for s in result.segmentation.segments] == ["aa\n", "bb\n", "cc\n", "dd\n"]
    assert result.segmentation.state_prefixes == (0, 3, 6, 9, 12)


def test_worked_example_variant_b():
    result, _, _ = analyze()
    components = result.values.components
    # R-hat (default seq_prob) = p(answer char) * p("}") = R_TABLE[k] * 0.5: a probability of the answer
    np.testing.assert_allclose(components["R_hat"], [r * 0.5 for r in R_TABLE], atol=1e-12)
    # v-hat (default geo_mean) = geometric mean over the 9 chars of P*, each with probability V_TABLE[k]
    np.testing.assert_allclose(components["v_hat"], V_TABLE, atol=1e-12)
    np.testing.assert_allclose(components["path_logprob"], [9 * math.log(v) for v in V_TABLE], atol=1e-9)


def test_mean_prob_is_an_option_and_not_a_probability():
    """``mean_prob`` averages token probabilities: (R + 0.5) / 2, above the span's real probability R * 0.5."""
    result, _, _ = analyze(aggregation="mean_prob", path_aggregation="mean_prob")
    np.testing.assert_allclose(result.values.components["R_hat"], [(r + 0.5) / 2 for r in R_TABLE], atol=1e-12)
    assert all(m > r * 0.5 for m, r in zip(result.values.components["R_hat"], R_TABLE, strict=True))


def test_worked_example_exact_numbers_with_answer_only_span():
    """With the answer span Y* alone (no brace), R-hat = R_TABLE exactly: docs/method.md §4.1's table."""
    result, _, _ = analyze(answer_span="answer")
    np.testing.assert_allclose(result.values.components["R_hat"], R_TABLE, atol=1e-12)
    np.testing.assert_allclose(result.values.values, [0.15, 0.25, 0.70, 0.80, 1.0], atol=1e-12)
    np.testing.assert_allclose(result.sigma, [0.10, 0.45, 0.10, 0.35], atol=1e-9)
    assert abs(result.sigma.sum() - 1.0) < 1e-12
    difference, _, _ = analyze(answer_span="answer", variant="difference")
    np.testing.assert_allclose(difference.sigma, [0.10, 0.45, 0.10, 0.20], atol=1e-9)
    assert abs(difference.sigma.sum() - (1.0 - 0.15)) < 1e-12  # R - Q_1


def test_aggregations_by_hand():
    for aggregation, expected in {
        "seq_prob": [r * 0.5 for r in R_TABLE],
        "geo_mean": [math.sqrt(r * 0.5) for r in R_TABLE],
        "mean_token_prob": [(r + 0.5) / 2 for r in R_TABLE],
    }.items():
        result, _, _ = analyze("answer_only", aggregation=aggregation)
        np.testing.assert_allclose(result.values.components["R_hat"], expected, atol=1e-12)
    result, _, _ = analyze("answer_only", aggregation="sum_logprob")
    np.testing.assert_allclose(result.values.components["R_hat"], [math.log(r * 0.5) for r in R_TABLE], atol=1e-12)


def test_candidate_normalized_by_hand():
    """Candidates are the numbers of the question and reasoning other than the reference: 3 and 4; each
    candidate's span probability is p(digit) * 0.5, so the ratio is R / (R + Q3 + Q4)."""
    result, _, _ = analyze("answer_only", aggregation="candidate_normalized")
    np.testing.assert_allclose(result.values.components["R_hat"], [r / (r + Q3 + Q4) for r in R_TABLE], atol=1e-12)
    assert "3 candidate answers" in result.values.notes[0]


def test_debias_and_ablations():
    debiased, _, _ = analyze("answer_only", answer_span="answer", debias=True)
    np.testing.assert_allclose(debiased.values.components["R_hat"], np.array(R_TABLE) - 0.05, atol=1e-12)
    only_v, _, _ = analyze("continue_only")
    np.testing.assert_allclose(only_v.values.values, [*V_TABLE[:4], 1.0], atol=1e-12)
    weighted, _, _ = analyze(answer_span="answer", alpha=2.0, beta=0.5)
    np.testing.assert_allclose(
        weighted.values.values[:4], [2 * r + 0.5 * v for r, v in zip(R_TABLE, V_TABLE, strict=False)][:4]
    )


def test_extra_reference_paths_take_the_maximum():
    """A second path that departs from P* at its last digit scores lower everywhere: the maximum keeps P*'s
    values."""
    result, _, _ = analyze(extra_references=("\\boxed{9}",))
    np.testing.assert_allclose(result.values.components["v_hat"], V_TABLE, atol=1e-12)
    assert "maximum over 2 reference paths" in result.values.notes[0]


def test_failed_trace_exact_sum_gives_zero():
    failed = TRACE.with_changes(cot="aa\nbb\ncc\ndd\nThe answer is \\boxed{8}.")
    result, _, _ = analyze(answer_span="answer", trace=failed)
    assert result.outcome == 0.0 and abs(result.sigma.sum()) < 1e-12
    # sigma_K = R - (Q_K - Q_1) = 0 - (0.80 - 0.15)
    assert result.sigma[-1] == pytest.approx(-0.65, abs=1e-12)


def test_uniform_is_what_grpo_would_do():
    result, _, _lm = analyze("uniform")
    np.testing.assert_allclose(result.sigma, [0.25] * 4, atol=1e-12)
    np.testing.assert_allclose(result.values.values, [0, 0.25, 0.5, 0.75, 1.0], atol=1e-12)


def test_missing_references_are_named_and_other_estimators_still_run():
    bare = TRACE.with_changes(reference_solution=None)
    with pytest.raises(
        MissingReferenceError,
        match=r"needs a reference solution.*can run on it: answer_only, own_answer, mc, uniform\)",
    ):
        analyze(trace=bare)
    result, _, _ = analyze("answer_only", trace=bare, answer_span="answer")
    np.testing.assert_allclose(result.values.components["R_hat"], R_TABLE, atol=1e-12)
    unknown = TRACE.with_changes(reference_answer=None, reference_solution=None)
    with pytest.raises(MissingReferenceError, match=r"needs an outcome.*can run on it: own_answer\)"):  # its answer
        analyze("uniform", trace=unknown)
    silent = unknown.with_changes(cot="aa\nbb\ncc\ndd")  # no outcome and no answer: nothing to credit toward
    with pytest.raises(MissingReferenceError, match="needs an outcome.*no estimator can run"):
        analyze("uniform", trace=silent)


def test_a_trace_is_never_its_own_reference():
    own = TRACE.with_changes(reference_solution=TRACE.cot)
    with pytest.raises(MissingReferenceError, match="never be its own reference"):
        analyze(trace=own)
    result, _, _ = analyze(extra_references=(TRACE.cot,))
    assert result.values.notes == ["ignored 1 extra reference path(s) identical to the trace itself"]


def test_resegmenting_makes_zero_model_calls():
    """After the first analysis, any segmentation over candidate cuts comes from the cache."""
    lm = ToyLanguageModel(rule)
    analyzer = Analyzer(lm)
    estimator = estimators.get("rredcot")(trigger=TRIGGER, path_separator=SEPARATOR)
    first = analyzer.analyze(TRACE, segmenters.get("hybrid")(k=4), estimator)
    assert first.model_calls == 1
    calls = lm.meter.total.calls
    for segmenter in [segmenters.get("hybrid")(k=k) for k in (2, 3)] + [
        segmenters.get(name)() for name in ("line", "paragraph", "sentence", "keyword")
    ]:
        again = analyzer.analyze(TRACE, segmenter, estimator)
        assert again.model_calls == 0
    answer_only = estimators.get("answer_only")(trigger=TRIGGER, aggregation="geo_mean")
    with pytest.raises(ConfigError, match="estimator 'uniform' has no setting trigger"):
        estimators.get("uniform")(trigger=TRIGGER)
    assert analyzer.analyze(TRACE, segmenters.get("hybrid")(k=2), answer_only).model_calls == 0
    assert lm.meter.total.calls == calls
