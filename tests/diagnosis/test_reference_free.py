"""Diagnosis without references (issue 16): the capability check, the own-answer target for values and LOO,
self-consistency MC, the step verifier, the mapping onto dataset steps and the outcome-reading baselines."""

from __future__ import annotations

import numpy as np
import pytest
from toy import ToyLanguageModel, ToySampler, planted_success

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.capability import capability, check_all
from rredcot_viz.diagnosis.mc_detector import majority_answer
from rredcot_viz.diagnosis.processbench import baseline_predictions, baselines, evaluate, to_step
from rredcot_viz.diagnosis.step_verifier import (
    StepVerifierConfig,
    calibrate_threshold,
    first_below,
    verifier_prompts,
    yes_probability,
)
from rredcot_viz.diagnosis.value_detectors import curve_estimator
from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.errors import MissingReferenceError, RredcotError
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.needs import describe, missing
from rredcot_viz.traces.trace import Trace
from rredcot_viz.workflows.diagnose import runnable_pct, seeded_sample

STEPS = ("aa", "bb", "XX", "cc", "dd\n\nThe answer is \\boxed{8}.")  # "XX" leads to the wrong answer 8
COT = "\n\n".join(STEPS)
FAILED = Trace("Add 3 and 4.", COT, steps=STEPS, first_error=2, correct=False)  # no reference of any kind
GIVEN = segmenters.get("given")()


def own_rule(context: str) -> dict[str, float]:
    """p(8) after the trigger is low until "XX" appears, then high."""
    response = context.split(" A ", 1)[1] if " A " in context else ""
    if response.endswith("="):
        return {"8": 0.7 if "XX" in response else 0.1}
    if response.endswith("=8"):
        return {"}": 0.9}
    return {}


def analyzer(lm) -> Analyzer:
    return Analyzer(lm, AnalysisConfig(boundaries="states"))


def test_needs_are_read_from_fields_and_described():
    assert missing(FAILED, ("outcome", "answer", "reference_answer", "reference_solution")) == [
        "reference_answer",
        "reference_solution",
    ]
    assert describe(["reference_answer"]) == "a reference answer"
    with pytest.raises(ValueError, match="unknown need 'gold'"):
        missing(FAILED, ("gold",))


def test_capability_counts_modes_and_what_the_others_lack():
    unlabelled = FAILED.with_changes(correct=None, cot="no answer here", steps=("no answer here",), first_error=0)
    referenced = FAILED.with_changes(reference_answer="7")
    traces = [FAILED, unlabelled, referenced]
    loo = capability(detectors.get("loo")(), traces)
    assert loo.runnable == [0, 2] and dict(loo.modes) == {"own": 1, "reference": 1}
    assert loo.label == "loo[own/reference]" and dict(loo.lacking) == {"answer": 1, "outcome": 1}
    assert loo.line().startswith("loo[own/reference]: runs on 2 of 3 records (own 1, reference 1); 1 lack")
    fixed = capability(detectors.get("min_sigma")(estimator="rredcot"), traces)
    assert fixed.runnable == [] and fixed.label == "min_sigma[rredcot]"  # named by the option even when none run
    verifier = capability(detectors.get("step_verifier")(), traces)
    assert verifier.complete and verifier.label == "step_verifier"
    reports = check_all([detectors.get("step_verifier")(), detectors.get("loo")()], traces)
    assert runnable_pct(reports, 3) == pytest.approx(200 / 3)
    with pytest.raises(RredcotError, match=r"--strict.*loo\[own/reference\]: runs on 2 of 3"):
        check_all([detectors.get("loo")()], traces, strict=True)


def test_auto_estimator_takes_the_richest_the_trace_can_feed():
    detector = detectors.get("min_sigma")()
    assert detector.mode(FAILED) == "own_answer"
    assert detector.mode(FAILED.with_changes(reference_answer="7")) == "answer_only"
    assert detector.mode(FAILED.with_changes(reference_answer="7", reference_solution="\\boxed{7}")) == "rredcot"
    with pytest.raises(MissingReferenceError, match="needs a reference answer"):
        detectors.get("min_sigma")(estimator="answer_only").check(FAILED)
    # a curve on its own (the Diagnose page): flat credit without a stated answer, none without an outcome
    silent = FAILED.with_changes(cot="no answer here", steps=("no answer here",), first_error=0)
    assert curve_estimator(FAILED) == "own_answer" and curve_estimator(silent) == "uniform"
    assert curve_estimator(silent.with_changes(correct=None)) is None


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


def test_loo_own_target_blames_the_segment_that_supports_the_wrong_answer():
    an = analyzer(ToyLanguageModel(own_rule))
    verdict = detectors.get("loo")(trigger="=").detect(an, FAILED, GIVEN)
    assert verdict.evidence["target"] == "own" and verdict.prediction == 2
    phi = np.array(verdict.evidence["loo"])
    assert phi[2] > 0.1 and np.allclose(np.delete(phi, 2)[:-1], 0.0, atol=1e-9)  # only "XX" moves p(8)
    np.testing.assert_allclose(verdict.scores, phi, atol=1e-12)  # on a failed trace, hurt = support


def test_majority_answer_counts_equivalent_forms_together():
    assert majority_answer(["7", "7.0", "0", None, "0"]) == "7"  # 7 and 7.0 are one answer; ties: the earliest
    assert majority_answer([None, ""]) is None


def test_self_consistency_mc_grades_against_the_majority_answer():
    an = analyzer(ToySampler(planted_success))
    verdict = detectors.get("mc")(rollouts=8).detect(an, FAILED, GIVEN)
    # from the question most continuations answer 7: the majority; the trace's 8 disagrees, so R = 0
    assert verdict.evidence["reward"] == "self_consistency" and verdict.evidence["consensus"] == "7"
    assert verdict.prediction == 2 and verdict.evidence["values"][-1] == 0.0
    silent = analyzer(ToySampler(planted_success, truncation=1.0))  # no continuation states an answer
    abstained = detectors.get("mc")(rollouts=4).detect(silent, FAILED, GIVEN)
    assert abstained.abstained and "states an answer" in abstained.evidence["reason"]


def verifier_rule(p_yes_by_step: dict[int, float]):
    def rule(context: str) -> dict[str, float]:
        for t, p in p_yes_by_step.items():
            if context.endswith(f"Is Step {t} correct? Answer Yes or No. A "):
                return {"Y": p, "N": 0.9 - p}
        return {}

    return rule


def test_step_verifier_reads_yes_against_no_per_step():
    an = analyzer(ToyLanguageModel(verifier_rule({1: 0.8, 2: 0.6, 3: 0.1, 4: 0.2, 5: 0.7})))
    verdict = detectors.get("step_verifier")(yes="Y", no="N").detect(an, FAILED, GIVEN)
    np.testing.assert_allclose(verdict.evidence["p_yes"], [0.8 / 0.9, 0.6 / 0.9, 0.1 / 0.9, 0.2 / 0.9, 0.7 / 0.9])
    assert verdict.prediction == 2
    strict = detectors.get("step_verifier")(yes="Y", no="N", threshold=0.05).detect(an, FAILED, GIVEN)
    assert strict.prediction == -1  # every step passes a low bar: "no error"
    calibrated = capability(detectors.get("step_verifier")(threshold=0.265), [FAILED])
    assert calibrated.label == "step_verifier[threshold 0.265]"
    assert yes_probability([np.log(0.3)], [np.log(0.1)]).tolist() == pytest.approx([0.75])


def test_a_threshold_is_calibrated_on_labelled_traces():
    p_yes = [np.array([0.9, 0.2, 0.8]), np.array([0.9, 0.85, 0.7]), np.array([0.3, 0.9])]
    labels = [1, -1, 0]  # right for thresholds in (0.3, 0.7]; the first midpoint there is (0.3 + 0.7) / 2
    assert calibrate_threshold(p_yes, labels) == (pytest.approx(0.5), 1.0)
    assert [first_below(p, 0.25) for p in p_yes] == [1, -1, -1] and first_below(np.array([0.5]), 0.5) == -1


def test_step_verifier_shared_prefix_scores_equal_separate_prompts(tiny):
    config = StepVerifierConfig()
    prompts = verifier_prompts(tiny, FAILED.question, list(STEPS), config)
    assert len(prompts.requests) == 2 * len(STEPS)
    shared = tiny.score_continuations(prompts.ids, prompts.requests).logprobs
    for request, logprobs in zip(prompts.requests, shared, strict=True):
        alone = [*prompts.ids[: request.cut], *request.context, *request.target]
        separate = tiny.token_stats(alone, len(alone) - len(request.target)).logprobs
        np.testing.assert_allclose(logprobs, separate, atol=1e-4)
    assert "Step 3: XX" in tiny.decode(prompts.ids[: prompts.requests[4].cut])


RECORD = Trace(  # a ProcessBench-style record, written for this test
    "Mia reads 12 pages a day. How many pages does she read in a week?",
    "Mia reads 12 pages each day. A week has 7 days.\n\n12 * 7 = 74. So she reads 74 pages.\n\n"
    "The answer is \\boxed{74}.",
    steps=(
        "Mia reads 12 pages each day. A week has 7 days.",
        "12 * 7 = 74. So she reads 74 pages.",
        "The answer is \\boxed{74}.",
    ),
    first_error=1,
    correct=False,
)


@pytest.mark.parametrize("name", ["sentence", "hybrid"])
def test_segment_predictions_map_onto_the_dataset_steps(tiny, name):
    an = Analyzer(tiny, AnalysisConfig(boundaries="states"))
    an.context(RECORD).stats  # noqa: B018  (entropies for the hybrid segmenter)
    segmentation = an.segment(RECORD, segmenters.get(name)())
    spans = RECORD.step_spans()
    for index, segment in enumerate(segmentation.segments):
        start, end = segment.char_span
        first = start + len(RECORD.cot[start:end]) - len(RECORD.cot[start:end].lstrip())
        expected = next(i for i, (low, high) in enumerate(spans) if low <= first < high)
        assert to_step(RECORD, segmentation, index) == expected
    assert to_step(RECORD, segmentation, -1) == -1
    if name == "sentence":  # "12 * 7 = 74." starts step 1; "So she reads 74 pages." is inside it
        texts = [s.text.strip() for s in segmentation.segments]
        assert to_step(RECORD, segmentation, texts.index("So she reads 74 pages.")) == 1
        assert to_step(RECORD, segmentation, texts.index("A week has 7 days.")) == 0


def test_outcome_then_baselines_by_hand():
    right = RECORD.with_changes(correct=True, first_error=-1)
    traces = [RECORD, right, RECORD.with_changes(first_error=2)]
    predictions = baseline_predictions(traces)
    assert predictions["outcome_then_first"] == [0, -1, 0]
    assert predictions["outcome_then_last"] == [2, -1, 2]
    rows = {s.name: s for s in baselines(traces)}
    last = rows["outcome_then_last"]
    assert (last.hits_error, last.n_error, last.hits_correct, last.n_correct) == (1, 2, 1, 1)
    assert last.f1 == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert "outcome_then_first" not in {s.name for s in baselines([RECORD.with_changes(correct=None)])}


def test_evaluate_runs_only_what_can_run_and_names_what_the_rest_lack():
    an = analyzer(ToyLanguageModel(own_rule))
    unlabelled = FAILED.with_changes(correct=None)  # no outcome: the own target cannot be used
    evaluation = evaluate(detectors.get("loo")(trigger="="), an, [FAILED, unlabelled], GIVEN)
    assert evaluation.predictions == [2, None] and evaluation.detector == "loo[own]" and evaluation.method == "loo"
    assert evaluation.evidence[0]["target"] == "own" and evaluation.evidence[1] is None
    assert evaluation.scores.not_runnable == 1 and evaluation.scores.failures == 1
    assert evaluation.errors == [f"{unlabelled.short_id}: not run, lacks {describe(['outcome'])}"]


def test_balanced_sample_holds_both_classes_in_file_order():
    traces = [RECORD.with_changes(trace_id=f"e{i}") for i in range(10)]
    traces += [RECORD.with_changes(trace_id=f"c{i}", first_error=-1, correct=True) for i in range(3)]
    sample = seeded_sample(traces, 6, seed=1, balanced=True)
    ids = [t.trace_id for t in sample]
    assert sum(i.startswith("e") for i in ids) == 3 and sum(i.startswith("c") for i in ids) == 3
    assert ids == sorted(ids, key=[t.trace_id for t in traces].index)
    assert len(seeded_sample(traces, 10, seed=1, balanced=True)) == 8  # 5 erroneous, and all 3 correct
