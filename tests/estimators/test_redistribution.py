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
