"""The MC detector (diagnosis/mc_detector.py): binary search with few probes, and self-consistency without a
reference."""

from __future__ import annotations

from planted import FAILED, GIVEN, TRACE, analyzer
from toy import ToySampler, planted_success

from rredcot_viz.attribution.trust import probed_trust
from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.mc_detector import majority_answer


def test_mc_binary_search_finds_the_planted_error_with_few_probes():
    an = analyzer(ToySampler(planted_success))
    verdict = detectors.get("mc")(rollouts=8).detect(an, TRACE, GIVEN)
    assert verdict.prediction == 2
    assert len(verdict.evidence["probed_states"]) <= 5  # s_1, log2(5) probes, and the outcome
    exhaustive = detectors.get("mc")(rollouts=8, binary_search=False).detect(an, TRACE, GIVEN)
    assert exhaustive.prediction == 2
    hopeless = analyzer(ToySampler(lambda context: 0.0))
    assert detectors.get("mc")().detect(hopeless, TRACE, GIVEN).abstained


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


def test_probing_every_state_tells_how_far_monte_carlo_agrees_with_itself():
    an = analyzer(ToySampler(planted_success))
    exhaustive = detectors.get("mc")(rollouts=8, binary_search=False).detect(an, TRACE, GIVEN)
    halves = exhaustive.evidence["half_values"]
    assert all(h is not None for h in halves) and exhaustive.evidence["rollouts"] == 8
    values = exhaustive.evidence["values"]
    assert [(a + b) / 2 for a, b in halves[:-1]] == values[:-1]  # the halves split the probe's rollouts
    found = probed_trust(exhaustive.evidence)
    assert found is not None and found.rollouts == 8 and found.sentences()[-1].startswith("Monte Carlo ")
    searched = detectors.get("mc")(rollouts=8).detect(an, TRACE, GIVEN)
    assert probed_trust(searched.evidence) is None  # the binary search skipped states
