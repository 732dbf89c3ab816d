"""ProcessBench metric and baselines against hand-computed tables, and the localisation parser."""

from __future__ import annotations

import pytest

from rredcot_viz.diagnosis.processbench import baselines, f1_score, score
from rredcot_viz.diagnosis.self_localize import localisation_prompt, parse_localisation
from rredcot_viz.traces.trace import Trace


def test_f1_fixture_and_edge_cases():
    assert f1_score(0.5, 0.8) == pytest.approx(0.6154, abs=1e-4)
    assert f1_score(0.0, 0.0) == 0.0 and f1_score(1.0, 0.0) == 0.0


def test_score_by_hand():
    labels = [2, 0, -1, -1, 1, -1]
    predictions = [2, 1, -1, 0, None, -1]  # erroneous: 1 of 3 exact; correct: 2 of 3 say "no error"
    result = score("x", predictions, labels)
    assert (result.n_error, result.n_correct) == (3, 3)
    assert result.acc_error == pytest.approx(1 / 3) and result.acc_correct == pytest.approx(2 / 3)
    assert result.f1 == pytest.approx(2 * (1 / 3) * (2 / 3) / 1.0) and result.failures == 1
    assert result.row()["F1_%"] == 44.4


def test_baselines_by_hand():
    traces = [
        Trace("q", "a\n\nb\n\nc", steps=("a", "b", "c"), first_error=-1),
        Trace("q", "a\n\nb", steps=("a", "b"), first_error=0),
        Trace("q", "a\n\nb\n\nc", steps=("a", "b", "c"), first_error=2),
    ]
    table = {b.name: b for b in baselines(traces)}
    assert (table["always_no_error"].acc_error, table["always_no_error"].acc_correct) == (0.0, 1.0)
    assert table["always_no_error"].f1 == 0.0
    assert table["always_first"].acc_error == 0.5 and table["always_first"].acc_correct == 0.0
    assert table["always_last"].acc_error == 0.5  # trace 3's last step is its labelled error


@pytest.mark.parametrize(
    ("reply", "n", "expected"),
    [
        ("The error is in step 3.\n\\boxed{3}", 5, 3),
        ("\\boxed{2} ... on reflection \\boxed{4}", 5, 4),  # the last box wins
        ("\\boxed{ 2 }", 5, 2),
        ("\\boxed{0}", 5, 0),  # no error (neutral variant)
        ("\\boxed{9}", 5, 1),  # out of range, no "Step N" -> 1
        ("\\boxed{9} but Step 2 is wrong, and step 4 too", 5, 4),  # last "Step N" in range
        ("\\boxed{x = 42}. Step 7 is wrong", 5, 1),  # box not an integer, Step 7 out of range
        ("Step 2 looks wrong", 5, 2),
        ("", 6, 3),  # empty reply -> max(1, n // 2)
        ("", 1, 1),
        ("\\boxed{-1}", 5, 1),
    ],
)
def test_parse_localisation(reply, n, expected):
    assert parse_localisation(reply, n) == expected


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
