"""The LOO detector (diagnosis/loo_detector.py): against the reference, and against the trace's own answer."""

from __future__ import annotations

import numpy as np
from planted import FAILED, GIVEN, TRACE, analyzer, answer_rule, own_rule
from toy import ToyLanguageModel

from rredcot_viz.diagnosis import detectors


def test_loo_finds_the_segment_whose_removal_helps():
    an = analyzer(ToyLanguageModel(answer_rule))
    verdict = detectors.get("loo")(trigger="=").detect(an, TRACE.with_changes(reference_solution=None), GIVEN)
    assert verdict.prediction == 2 and verdict.evidence["loo"][2] < -0.1


def test_loo_own_target_blames_the_segment_that_supports_the_wrong_answer():
    an = analyzer(ToyLanguageModel(own_rule))
    verdict = detectors.get("loo")(trigger="=").detect(an, FAILED, GIVEN)
    assert verdict.evidence["target"] == "own" and verdict.prediction == 2
    phi = np.array(verdict.evidence["loo"])
    assert phi[2] > 0.1 and np.allclose(np.delete(phi, 2)[:-1], 0.0, atol=1e-9)  # only "XX" moves p(8)
    np.testing.assert_allclose(verdict.scores, phi, atol=1e-12)  # on a failed trace, hurt = support
