"""Each detector on a toy model with an error planted at a known step; reset resampling from seeds."""

from __future__ import annotations

import numpy as np
import pytest
from toy import ToyLanguageModel, ToySampler, planted_success

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.processbench import evaluate
from rredcot_viz.diagnosis.resample import ResetConfig, compare_resets, edit_segment, reset_resample
from rredcot_viz.engine import AnalysisConfig, Analyzer
from rredcot_viz.estimators import estimators
from rredcot_viz.segmenters import segmenters
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import Generation, SampleResult

STEPS = ("aa", "bb", "XX", "cc", "dd")  # "XX" is the planted error: segment 3, 0-based 2
COT = "\n\n".join(STEPS) + "\n\nThe answer is \\boxed{8}."
TRACE = Trace(
    "Add 3 and 4.",
    COT,
    reference_answer="7",
    reference_solution="\\boxed{7}",
    steps=(*STEPS[:-1], STEPS[-1] + "\n\nThe answer is \\boxed{8}."),
    first_error=2,
)
GIVEN = segmenters.get("given")()


def answer_rule(context: str) -> dict[str, float]:
    """p(reference answer) is high until the planted error appears, then low; v-hat alike."""
    response = context.split(" A ", 1)[1] if " A " in context else ""
    bad = "XX" in response
    if response.endswith("="):
        return {"7": 0.05 if bad else 0.8}
    if response.endswith("=7"):
        return {"}": 0.9}
    if "#" in response:
        path = response.split("#", 1)[1]
        return {"\\boxed{7}"[len(path)]: 0.05 if bad else 0.6} if len(path) < 9 else {}
    return {}


def rredcot_options():
    return {"estimator_options": {"trigger": "=", "path_separator": "#"}}


def analyzer(lm) -> Analyzer:
    return Analyzer(lm, AnalysisConfig(boundaries="states"))


def test_min_sigma_and_value_drop_find_the_planted_error():
    an = analyzer(ToyLanguageModel(answer_rule))
    verdict = detectors.get("min_sigma")(**rredcot_options()).detect(an, TRACE, GIVEN)
    assert verdict.prediction == 2 and verdict.segment == 3 and int(np.argmax(verdict.scores)) == 2
    drop = detectors.get("value_drop")(**rredcot_options()).detect(an, TRACE, GIVEN)
    assert drop.prediction == 2 and drop.evidence["largest_drop_segment"] == 3
    strict = detectors.get("value_drop")(delta=5.0, **rredcot_options()).detect(an, TRACE, GIVEN)
    assert strict.prediction == -1


def test_loo_finds_the_segment_whose_removal_helps():
    an = analyzer(ToyLanguageModel(answer_rule))
    verdict = detectors.get("loo")(trigger="=").detect(an, TRACE.with_changes(reference_solution=None), GIVEN)
    assert verdict.prediction == 2 and verdict.evidence["loo"][2] < -0.1


def test_self_localize_parses_the_models_reply(tiny, monkeypatch):
    replies = iter(["Step 3 contains the mistake.\n\\boxed{3}", "All fine. \\boxed{0}"])

    def fake_sample(prompts, seeds, config=None, *, progress=None):
        return SampleResult(
            [Generation(len(p), [1], next(replies), "eos", s) for p, s in zip(prompts, seeds, strict=True)], None
        )

    monkeypatch.setattr(tiny, "sample", fake_sample)
    an = Analyzer(tiny)
    verdicts = detectors.get("self_localize")().detect_many(an, [TRACE, TRACE], GIVEN)
    assert [v.prediction for v in verdicts] == [2, -1]
    assert verdicts[0].scores.tolist() == [0, 0, 1, 0, 0]


def test_mc_binary_search_finds_the_planted_error_with_few_probes():
    an = analyzer(ToySampler(planted_success))
    verdict = detectors.get("mc")(rollouts=8).detect(an, TRACE, GIVEN)
    assert verdict.prediction == 2
    assert len(verdict.evidence["probed_states"]) <= 5  # s_1, log2(5) probes, and the outcome
    exhaustive = detectors.get("mc")(rollouts=8, binary_search=False).detect(an, TRACE, GIVEN)
    assert exhaustive.prediction == 2
    hopeless = analyzer(ToySampler(lambda context: 0.0))
    assert detectors.get("mc")().detect(hopeless, TRACE, GIVEN).abstained


def test_evaluation_harness_on_planted_errors():
    clean = Trace(
        "Add 3 and 4.",
        "aa\n\nbb\n\nThe answer is \\boxed{7}.",
        reference_answer="7",
        reference_solution="\\boxed{7}",
        steps=("aa", "bb\n\nThe answer is \\boxed{7}."),
        first_error=-1,
    )
    an = analyzer(ToyLanguageModel(answer_rule))
    evaluation = evaluate(detectors.get("min_sigma")(**rredcot_options()), an, [TRACE, clean], GIVEN)
    assert evaluation.predictions == [2, -1] and evaluation.scores.f1 == 1.0
    confusion = evaluation.confusion()
    assert confusion[3, 3] == 1 and confusion[0, 0] == 1


def test_reset_resampling_is_reproducible_from_the_seed():
    lm = ToySampler(planted_success)
    first = reset_resample(analyzer(lm), TRACE, GIVEN, 3, ResetConfig(suffixes=8, seed=5))
    again = reset_resample(analyzer(ToySampler(planted_success)), TRACE, GIVEN, 3, ResetConfig(suffixes=8, seed=5))
    other = reset_resample(analyzer(ToySampler(planted_success)), TRACE, GIVEN, 3, ResetConfig(suffixes=8, seed=6))
    assert [r.text for r in first.suffixes] == [r.text for r in again.suffixes]
    assert [r.seed for r in first.suffixes] != [r.seed for r in other.suffixes]
    assert first.prefix_text == "aa\n\nbb\n\n" and first.position == pytest.approx(0.4)
    assert first.rate == pytest.approx(sum(r.correct for r in first.suffixes) / 8) and first.rate > 0.5
    low, high = first.interval
    assert low <= first.rate <= high
    late = reset_resample(analyzer(lm), TRACE, GIVEN, 4, ResetConfig(suffixes=8, seed=5))
    assert late.successes == 0  # after the planted error nothing recovers


def test_rrpo_vs_srpo_batch(tiny, monkeypatch):
    lm = ToySampler(planted_success)
    an = analyzer(lm)

    class Oracle:  # a detector that always finds the planted error
        name = "oracle"

        def detect(self, analyzer, trace, segmenter):
            from rredcot_viz.diagnosis.base import FirstError

            return FirstError("oracle", 2, np.zeros(5))

    comparison = compare_resets(
        an, [TRACE, TRACE.with_changes(trace_id="b")], GIVEN, Oracle(), ResetConfig(suffixes=8), seed=1
    )
    summary = comparison.summary()
    assert summary["srpo_oracle"]["corrected_any_of_G"] == 1.0 and summary["srpo_oracle"]["positions"] == [0.4, 0.4]
    assert 0.0 <= summary["rrpo_random"]["mean_success"] <= 1.0 and len(summary["rrpo_random"]["positions"]) == 2


def test_edit_segment_rescores_and_continues():
    sampler = ToySampler(planted_success)
    sampler.rule = answer_rule  # scores from the answer rule, samples from the success rule
    an = analyzer(sampler)
    result = edit_segment(
        an, TRACE, GIVEN, 3, "ok", estimators.get("answer_only")(trigger="="), ResetConfig(suffixes=4)
    )
    assert "XX" not in result.edited_trace.cot and result.edited.k == result.original.k
    assert result.edited.values.components["R_hat"][3] > result.original.values.components["R_hat"][3]
    # after the edit the planted error is gone: on-policy continuations succeed with probability 0.9
    assert len(result.continuations) == 4 and sum(r.correct for r in result.continuations) >= 3
