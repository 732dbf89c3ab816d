"""ProcessBench metric and baselines against hand-computed tables, and the localisation parser."""

from __future__ import annotations

import pytest

from rredcot_viz.diagnosis.processbench import baselines, f1_score, score
from rredcot_viz.diagnosis.self_localize import localisation_prompt, parse_localisation
from rredcot_viz.traces.trace import Trace


def test_f1_fixture_and_edge_cases():
    assert f1_score(0.5, 0.8) == pytest.approx(0.6154, abs=1e-4)
    assert f1_score(0.0, 0.0) == 0.0 and f1_score(1.0, 0.0) == 0.0
    assert f1_score(None, 1.0) is None and f1_score(0.5, None) is None  # an empty class: undefined, not 0


def test_an_empty_class_gives_n_a_not_zero():
    only_errors = score("always_no_error", [-1, -1, -1], [0, 2, 1])  # a sample with no correct traces
    assert only_errors.acc_error == 0.0 and only_errors.acc_correct is None and only_errors.f1 is None
    row = only_errors.row()
    assert row["F1_%"] == "n/a (no correct samples)" and row["acc_correct_%"] == "n/a"
    assert row["correct_95%_CI"] == "n/a" and row["erroneous_95%_CI"] == "0-56"  # Wilson, 0 of 3
    assert score("x", [], []).row()["F1_%"] == "n/a (no erroneous and no correct samples)"


def test_accuracies_carry_wilson_intervals():
    result = score("x", [2] * 7 + [0] * 3 + [-1] * 4, [2] * 10 + [-1] * 4)  # 7 of 10 erroneous, 4 of 4 correct
    assert (result.hits_error, result.hits_correct) == (7, 4)
    row = result.row()
    assert row["erroneous_95%_CI"] == "40-89"  # wilson_interval(7, 10) = (0.3968, 0.8922)
    assert row["correct_95%_CI"] == "51-100" and row["F1_%"] == 82.4


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
    assert table["always_no_error"].f1 == 0.0  # both classes present: a real 0
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
