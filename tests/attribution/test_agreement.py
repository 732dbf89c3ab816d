"""Agreement statistics against scipy on fixed inputs, and NaN handling."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from rredcot_viz.attribution.agreement import (
    agreement_matrix,
    kendall_tau_b,
    pearson,
    ranks,
    sign_agreement,
    spearman,
    summarize,
    top_k_overlap,
)

A = np.array([0.1, 0.4, -0.2, 0.4, 0.9, 0.0])
B = np.array([0.3, 0.2, -0.5, 0.6, 0.7, 0.1])


def test_against_scipy_on_fixed_inputs_with_ties():
    assert spearman(A, B) == pytest.approx(stats.spearmanr(A, B).statistic, abs=1e-12)
    assert kendall_tau_b(A, B) == pytest.approx(stats.kendalltau(A, B).statistic, abs=1e-12)
    assert pearson(A, B) == pytest.approx(stats.pearsonr(A, B).statistic, abs=1e-12)
    np.testing.assert_array_equal(ranks(A), stats.rankdata(A))


@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=3, max_size=12))
def test_against_scipy_property(pairs):
    a, b = (np.array(x, dtype=float) for x in zip(*pairs, strict=True))
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        assert math.isnan(spearman(a, b)) and math.isnan(kendall_tau_b(a, b))
        return
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-9)
    assert kendall_tau_b(a, b) == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-9)


def test_top_k_and_signs():
    assert top_k_overlap(A, B, 3) == pytest.approx(2 / 3)  # top-3 of A {4, 1, 3}, of B {4, 3, 0}
    assert sign_agreement(A, B) == pytest.approx(5 / 6)  # 0.0 vs 0.1 differ


def test_matrix_and_summary_leave_out_constant_vectors():
    names, matrix = agreement_matrix({"a": A, "b": B, "flat": np.zeros(6)})
    assert names == ["a", "b", "flat"] and matrix[0, 0] == 1.0 and matrix[0, 1] == matrix[1, 0]
    assert math.isnan(matrix[0, 2])
    traces = [{"x": A, "y": B}, {"x": B, "y": A}, {"x": A, "y": np.ones(6)}]
    summary = summarize(traces, ("x", "y"))
    assert summary.count == 2 and summary.left_out == 1
    assert summary.mean == pytest.approx(spearman(A, B)) and summary.low <= summary.mean <= summary.high
