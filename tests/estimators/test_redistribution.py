"""Redistribution variants against docs/method.md §4's tables, and return equivalence as a property."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators.redistribution import redistribute


def test_worked_example_correct_trace():
    values = np.array([0.15, 0.25, 0.70, 0.80, 1.0])
    np.testing.assert_allclose(redistribute(values, "difference"), [0.10, 0.45, 0.10, 0.20], atol=1e-12)
    np.testing.assert_allclose(redistribute(values, "exact_sum"), [0.10, 0.45, 0.10, 0.35], atol=1e-12)


def test_failed_trace_illustration():
    values = np.array([0.15, 0.40, 0.55, 0.10, 0.0])
    np.testing.assert_allclose(redistribute(values, "difference"), [0.25, 0.15, -0.45, -0.10], atol=1e-12)
    exact = redistribute(values, "exact_sum")
    np.testing.assert_allclose(exact, [0.25, 0.15, -0.45, 0.05], atol=1e-12)
    assert int(np.argmin(exact)) == 2  # the most negative sigma blames segment 3 (0-based 2)


@given(
    values=st.lists(st.floats(0, 2, allow_nan=False), min_size=1, max_size=40),
    outcome=st.floats(0, 1, allow_nan=False),
)
def test_return_equivalence(values, outcome):
    curve = np.array([*values, outcome])
    assert abs(redistribute(curve, "exact_sum").sum() - outcome) < 1e-9
    assert abs(redistribute(curve, "difference").sum() - (outcome - curve[0])) < 1e-9


def test_proportional_is_guarded():
    np.testing.assert_allclose(redistribute(np.array([0.0, 0.5, 1.0]), "proportional"), [0.5, 0.5])
    with pytest.raises(ConfigError, match="undefined when the value differences sum to ~0"):
        redistribute(np.array([0.5, 0.9, 0.5]), "proportional")
    with pytest.raises(ConfigError, match="unknown redistribution variant"):
        redistribute(np.array([0.5, 1.0]), "other")


def test_the_last_segment_note_explains_a_green_last_segment_on_a_failed_trace():
    """'So 60 muffins remain' showed sigma +0.0675 in green while the curve fell to 0 and the caption said green
    raised the value: exact_sum's last sigma carries V_1 as well."""
    from rredcot_viz.estimators.redistribution import last_segment_note

    values = np.array([0.30, 0.35, 0.2325, 0.0])  # V_1..V_3, then R = 0
    sigma = redistribute(values, "exact_sum")
    assert sigma[-1] == pytest.approx(0.0675) and values[-1] - values[-2] < 0
    note = last_segment_note(values, "exact_sum")
    assert note.startswith("The last segment's σ (+0.067) is the rest of the outcome R = 0 under exact_sum")
    assert "(0 − 0.233) + 0.300" in note and "lowered the value" in note
    assert last_segment_note(values, "difference") is None  # its sigma is the step itself
    assert last_segment_note(np.array([0.3, 0.6, 1.0]), "exact_sum") is None  # same sign: nothing to explain
