"""Self-localisation (diagnosis/self_localize.py): the prompt variants, the reply parser, and the detector."""

from __future__ import annotations

import pytest
from planted import GIVEN, TRACE

from rredcot_viz.diagnosis import detectors
from rredcot_viz.diagnosis.processbench import fallback_notes
from rredcot_viz.diagnosis.self_localize import localisation_prompt, parse_localisation, parse_localisation_detailed
from rredcot_viz.engine import Analyzer
from rredcot_viz.types import Generation, SampleResult


def test_self_localize_parses_the_models_reply(tiny, monkeypatch):
    replies = iter(["Step 3 contains the mistake.\n\\boxed{3}", "All fine. \\boxed{0}", "I cannot tell."])

    def fake_sample(prompts, seeds, config=None, *, progress=None):
        return SampleResult(
            [Generation(len(p), [1], next(replies), "eos", s) for p, s in zip(prompts, seeds, strict=True)], None
        )

    monkeypatch.setattr(tiny, "sample", fake_sample)
    an = Analyzer(tiny)
    verdicts = detectors.get("self_localize")().detect_many(an, [TRACE, TRACE, TRACE], GIVEN)
    assert [v.prediction for v in verdicts] == [2, -1, 0]
    assert verdicts[0].scores.tolist() == [0, 0, 1, 0, 0]
    assert [v.evidence["parsed"] for v in verdicts] == ["boxed", "boxed_none", "default"]
    assert fallback_notes("self_localize[neutral]", [v.evidence for v in verdicts]) == [
        "self_localize[neutral]: 1 of 3 replies named no step and were read by the fallback rule (an empty reply: "
        "the middle step; otherwise step 1)"
    ]
    assert fallback_notes("self_localize[neutral]", [verdicts[0].evidence, None]) == []


@pytest.mark.parametrize(
    ("reply", "n", "expected", "rule"),
    [
        ("The error is in step 3.\n\\boxed{3}", 5, 3, "boxed"),
        ("\\boxed{2} ... on reflection \\boxed{4}", 5, 4, "boxed"),  # the last box wins
        ("\\boxed{ 2 }", 5, 2, "boxed"),
        ("\\boxed{0}", 5, 0, "boxed_none"),  # no error (neutral variant)
        ("\\boxed{9}", 5, 1, "default"),  # out of range, no "Step N" -> 1
        ("\\boxed{9} but Step 2 is wrong, and step 4 too", 5, 4, "step"),  # last "Step N" in range
        ("\\boxed{x = 42}. Step 7 is wrong", 5, 1, "default"),  # box not an integer, Step 7 out of range
        ("Step 2 looks wrong", 5, 2, "step"),
        ("", 6, 3, "empty_reply"),  # empty reply -> max(1, n // 2)
        ("", 1, 1, "empty_reply"),
        ("\\boxed{-1}", 5, 1, "default"),
    ],
)
def test_parse_localisation(reply, n, expected, rule):
    assert parse_localisation(reply, n) == expected
    assert parse_localisation_detailed(reply, n) == (expected, rule)


def test_zero_means_no_error_only_when_allowed():
    assert parse_localisation("\\boxed{0}", 4, allow_none=False) == 1
    # "no error" is step 1 in training, not whatever step the reasoning before the box mentioned
    assert parse_localisation("Step 3 looks fine, so\n\\boxed{0}", 4, allow_none=False) == 1
    assert parse_localisation("Step 3 looks fine, so\n\\boxed{0}", 4) == 0


def test_prompt_variants():
    steps = ["Add 2.</thought>", "  Then  double. "]
    l2 = localisation_prompt("What?", steps, "l2")
    assert "Step 1: Add 2.\nStep 2: Then double." in l2 and "is wrong, so at least one step is wrong" in l2
    assert "\\boxed{0}" not in l2 and "\\boxed{0}" in localisation_prompt("What?", steps, "neutral")
    assert "Correct answer: 7" in localisation_prompt("What?", steps, "l1", answer="7")
