"""Verdicts looked up before they are computed (diagnosis/verdicts.py): the second ask costs no model call and
still says what finding it cost."""

from __future__ import annotations

from planted import GIVEN, TRACE, analyzer, answer_rule, rredcot_options
from toy import ToyLanguageModel

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.verdicts import cached_verdict
from rredcot_viz.model.meter import measure


def test_a_stored_verdict_keeps_its_cost_and_says_it_is_cached():
    an = analyzer(ToyLanguageModel(answer_rule))
    detector = detectors.get("min_sigma")(**rredcot_options())
    first = cached_verdict(an, TRACE, GIVEN, detector)
    assert not first.cached and first.cost.calls > 0 and first.prediction == 2
    with measure() as spent:
        again = cached_verdict(an, TRACE, GIVEN, detector)
    assert spent.cost.calls == 0  # looked up
    assert again.cached and again.prediction == 2 and again.cost.as_dict() == first.cost.as_dict()
