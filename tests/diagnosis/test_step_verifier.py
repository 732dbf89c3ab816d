"""The step verifier (diagnosis/step_verifier.py): yes against no per step, a calibrated threshold, and scores
from one shared prefix equal to separate prompts."""

from __future__ import annotations

import numpy as np
import pytest
from planted import FAILED, FAILED_STEPS, GIVEN, analyzer
from toy import ToyLanguageModel

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.capability import capability
from rredcot_viz.diagnosis.step_verifier import (
    StepVerifierConfig,
    calibrate_threshold,
    first_below,
    verifier_prompts,
    yes_probability,
)


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
    prompts = verifier_prompts(tiny, FAILED.question, list(FAILED_STEPS), config)
    assert len(prompts.requests) == 2 * len(FAILED_STEPS)
    shared = tiny.score_continuations(prompts.ids, prompts.requests).logprobs
    for request, logprobs in zip(prompts.requests, shared, strict=True):
        alone = [*prompts.ids[: request.cut], *request.context, *request.target]
        separate = tiny.token_stats(alone, len(alone) - len(request.target)).logprobs
        np.testing.assert_allclose(logprobs, separate, atol=1e-4)
    assert "Step 3: XX" in tiny.decode(prompts.ids[: prompts.requests[4].cut])
