"""v-hat's remaining-reference proposal (docs/method.md §3.2, revision 3): which part of P* is scored after a prefix;
the reference-free own_answer values."""

from __future__ import annotations

import numpy as np
import pytest
from planted import FAILED, GIVEN, analyzer, own_rule
from toy import ToyLanguageModel

from rredcot_viz.diagnosis import detectors
from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.rredcot import reference_steps, remaining_path
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace

PATH = "Step 3 + 4 = 7.\nThen 7 - 2 = 5.\nSo \\boxed{5}"
QUESTION = "Ann has 3, buys 4 and gives 2."


def test_reference_steps_are_lines_or_sentences():
    assert [PATH[a:b] for a, b in reference_steps(PATH)] == ["Step 3 + 4 = 7.\n", "Then 7 - 2 = 5.\n", "So \\boxed{5}"]
    one_line = "First 2 + 2 = 4. Then 4 * 3 = 12. So 12."
    assert [one_line[a:b] for a, b in reference_steps(one_line)] == ["First 2 + 2 = 4. ", "Then 4 * 3 = 12. ", "So 12."]


def test_remaining_path_follows_the_numbers_the_prefix_states():
    assert remaining_path(PATH, QUESTION, "") == PATH  # nothing reached: the whole path
    assert remaining_path(PATH, QUESTION, "I add: 3 + 4 = 7.") == "Then 7 - 2 = 5.\nSo \\boxed{5}"
    assert remaining_path(PATH, QUESTION, "7, then 5") == "So \\boxed{5}"  # the answer step always remains
    assert remaining_path(PATH, QUESTION, "3 + 4 = 8") == PATH  # a wrong result reaches nothing
    assert remaining_path(PATH, QUESTION, "5 is left") == "So \\boxed{5}"  # the last step reached wins


def rule(context: str) -> dict[str, float]:
    """After the separator '#': once the prefix states 7, each next char of the remaining path has probability
    0.6, before that each next char of the whole path 0.2; any other text gets the uniform rest (~0.003), so
    v-hat shows which path the engine scored."""
    response = context.split(" A ", 1)[1] if " A " in context else ""
    if "#" not in response:
        return {}
    prefix, path = response.split("#", 1)
    target, p = ("Then 7 - 2 = 5.\nSo \\boxed{5}", 0.6) if "7" in prefix else (PATH, 0.2)
    return {target[len(path)]: p} if len(path) < len(target) and target.startswith(path) else {}


def test_the_engine_scores_the_remaining_path_at_each_state():
    trace = Trace(QUESTION, "3 + 4 = 7.\nok\nok\nThe answer is 5.", reference_answer="5", reference_solution=PATH)
    analyzer = Analyzer(ToyLanguageModel(rule), AnalysisConfig())
    options = {"trigger": "=", "path_separator": "#"}
    remaining = analyzer.analyze(
        trace, segmenters.get("line")(), estimators.get("continue_only")(path_proposal="remaining", **options)
    )
    # s_1 (nothing stated) scores the whole path, s_2 and s_3 (after "= 7") the rest; s_4 is the outcome
    np.testing.assert_allclose(remaining.values.values, [0.2, 0.6, 0.6, 1.0], atol=1e-12)
    whole = analyzer.analyze(trace, segmenters.get("line")(), estimators.get("continue_only")(**options))  # default
    # the whole path after "= 7" is text the rule does not favour: its chars get only the uniform rest
    assert whole.values.values[0] == remaining.values.values[0]
    assert whole.values.values[1] < 0.01 and whole.values.values[2] < 0.01


def test_own_answer_values_are_one_minus_support_for_the_wrong_answer():
    an = analyzer(ToyLanguageModel(own_rule))
    own = an.analyze(FAILED, GIVEN, estimators.get("own_answer")(trigger="="))
    # the same R-hat as answer_only would read with the trace's own answer as the reference
    as_reference = FAILED.with_changes(reference_answer="8", correct=True)
    reference = an.analyze(as_reference, GIVEN, estimators.get("answer_only")(trigger="="))
    support = reference.values.components["R_hat"]
    np.testing.assert_allclose(own.values.components["R_hat"], support, atol=1e-12)
    np.testing.assert_allclose(own.values.values[:-1], 1.0 - support[:-1], atol=1e-12)
    assert own.values.values[-1] == 0.0 and support[3] > support[2]  # support jumps once "XX" is in the prefix
    verdict = detectors.get("min_sigma")(estimator_options={"trigger": "="}).detect(an, FAILED, GIVEN)
    assert verdict.prediction == 2 and verdict.evidence["estimator"] == "own_answer"
    assert own.values.notes == ["failed trace: value = 1 - P(its own wrong answer)"]


def test_an_own_answer_read_as_the_last_number_is_noted():
    steps = (*FAILED.steps[:-1], "dd so 8")  # no boxed answer, no "the answer is": the answer is the last number
    unstated = FAILED.with_changes(cot="\n\n".join(steps), steps=steps)
    own = analyzer(ToyLanguageModel(own_rule)).analyze(unstated, GIVEN, estimators.get("own_answer")(trigger="="))
    assert "the trace's own answer '8' is its last number: the response states no answer explicitly" in own.values.notes


def test_own_answer_without_an_outcome_is_credit_toward_the_traces_own_answer():
    """A pasted trace with neither a reference answer nor a correct/wrong label: the values are the support for
    its own answer and the last state is 1 (it reached that answer), so sigma adds up to 1."""
    unlabelled = FAILED.with_changes(correct=None, first_error=None)
    assert unlabelled.outcome is None and estimators.get("own_answer")().missing(unlabelled) == []
    an = analyzer(ToyLanguageModel(own_rule))
    own = an.analyze(unlabelled, GIVEN, estimators.get("own_answer")(trigger="="))
    support = own.values.components["R_hat"]
    np.testing.assert_allclose(own.values.values[:-1], support[:-1], atol=1e-12)
    assert own.values.values[-1] == 1.0 and own.outcome == 1.0 and support[3] > support[2]
    assert float(own.sigma.sum()) == pytest.approx(1.0)  # exact_sum: all credit toward reaching its answer
    assert own.values.notes[0].startswith("No correct/wrong label and no reference answer: the last state counts")
