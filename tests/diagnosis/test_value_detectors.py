"""The value-curve detectors (diagnosis/value_detectors.py): min_sigma and value_drop find a planted error; the
auto estimator is the richest the trace can feed."""

from __future__ import annotations

import numpy as np
import pytest
from planted import FAILED, GIVEN, TRACE, analyzer, answer_rule, rredcot_options
from toy import ToyLanguageModel

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.value_detectors import curve_estimator
from rredcot_viz.errors import MissingReferenceError


def test_min_sigma_and_value_drop_find_the_planted_error():
    an = analyzer(ToyLanguageModel(answer_rule))
    verdict = detectors.get("min_sigma")(**rredcot_options()).detect(an, TRACE, GIVEN)
    assert verdict.prediction == 2 and verdict.segment == 3 and int(np.argmax(verdict.scores)) == 2
    drop = detectors.get("value_drop")(**rredcot_options()).detect(an, TRACE, GIVEN)
    assert drop.prediction == 2 and drop.evidence["largest_drop_segment"] == 3
    strict = detectors.get("value_drop")(delta=5.0, **rredcot_options()).detect(an, TRACE, GIVEN)
    assert strict.prediction == -1


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
