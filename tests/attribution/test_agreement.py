"""Agreement statistics against scipy on fixed inputs, and NaN handling; the controls, per-trace agreement and
the value at a cost budget."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from rredcot_viz.attribution.agreement import (
    agreement_matrix,
    control_agreement,
    control_pair_order,
    control_scores,
    kendall_tau_b,
    pair_order,
    pearson,
    per_trace_agreement,
    per_trace_control,
    per_trace_pair_order,
    ranks,
    segment_agreement,
    sign_agreement,
    spearman,
    split_half_pair_order,
    top_k_overlap,
    value_at_budget,
)
from rredcot_viz.errors import UnknownNameError

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


def test_matrix_leaves_out_constant_vectors():
    names, matrix = agreement_matrix({"a": A, "b": B, "flat": np.zeros(6)})
    assert names == ["a", "b", "flat"] and matrix[0, 0] == 1.0 and matrix[0, 1] == matrix[1, 0]
    assert math.isnan(matrix[0, 2])


def test_controls_and_non_final_agreement():
    reference = np.array([0.1, 0.3, 0.2, 0.9])
    np.testing.assert_array_equal(control_scores("last_segment", 4), [0, 0, 0, 1])
    np.testing.assert_array_equal(control_scores("position", 3), [1, 2, 3])
    assert segment_agreement(reference, reference, final=False) == pytest.approx(1.0)
    assert np.isnan(control_agreement("last_segment", reference, final=False))  # constant on non-final segments
    assert control_agreement("position", reference, "kendall", final=False) == pytest.approx(1 / 3)
    random = control_agreement("random", reference, final=False, draws=100, seed=3)
    assert random == control_agreement("random", reference, final=False, draws=100, seed=3) and abs(random) < 0.3
    with pytest.raises(UnknownNameError):
        control_scores("nope", 3)
    with pytest.raises(ValueError, match="seeded generator"):
        control_scores("random", 3)


def test_per_trace_agreement_and_controls_over_traces():
    references = [np.array([0.1, 0.3, 0.2, 0.9]), np.array([0.5, 0.5, 0.5, 0.0])]
    scores = [np.array([0.0, 1.0, 0.5, 2.0]), np.array([3.0, 2.0, 1.0, 0.0])]
    non_final = per_trace_agreement(scores, references, final=False)
    assert non_final[0] == pytest.approx(1.0) and np.isnan(non_final[1])  # 2nd reference is flat before the end
    np.testing.assert_allclose(per_trace_agreement(scores, references, "kendall")[1], 3 / 18**0.5)  # tau-b, 3 ties
    np.testing.assert_allclose(per_trace_control("last_segment", references), [0.7745966692414834, -1.0])
    assert np.isnan(per_trace_control("last_segment", references, final=False)).all()
    position = per_trace_control("position", references, final=False)
    assert position[0] == pytest.approx(0.5) and np.isnan(position[1])


def test_value_at_budget_interpolates_in_log_cost_and_says_when_clamped():
    budgets, values = [100.0, 200.0, 400.0], [0.1, 0.3, 0.5]
    assert value_at_budget(budgets, values, 200.0) == (pytest.approx(0.3), "interpolated")
    assert value_at_budget(budgets, values, 100 * 2**0.5)[0] == pytest.approx(0.2)  # halfway in log cost
    assert value_at_budget(budgets, values, 50.0) == (0.1, "clamped")
    assert value_at_budget(budgets[::-1], values[::-1], 1000.0) == (0.5, "clamped")
    assert value_at_budget(budgets, [0.1, float("nan"), 0.5], 200.0)[0] == pytest.approx(0.3)  # NaN point skipped
    value, how = value_at_budget(budgets, [float("nan")] * 3, 200.0)
    assert np.isnan(value) and how == "undefined"


def test_pair_order_counts_agreeing_pairs_of_the_reference():
    reference = np.array([0.1, 0.3, 0.2, 0.9])  # non-final: 3 ordered pairs
    assert pair_order(np.array([0.0, 1.0, 0.5, 9.0]), reference, final=False) == (3.0, 3)
    assert pair_order(np.array([1.0, 2.0, 3.0, 0.0]), reference, final=False) == (2.0, 3)  # segments 2 and 3 reversed
    assert pair_order(np.array([0.0, 0.0, 1.0, 0.0]), reference) == (2.5, 6)  # 3 ties in the row: one half each
    assert pair_order(np.ones(3), np.array([0.5, 0.5, 0.5]), final=True) == (0.0, 0)  # a flat reference orders nothing
    # a two-segment trace is worth one pair, a five-segment one ten: pooled, the long trace weighs more
    agreeing, pairs = per_trace_pair_order([np.array([2.0, 1.0]), np.arange(5.0)], [np.arange(2.0), np.arange(5.0)])
    np.testing.assert_array_equal(agreeing, [0.0, 10.0])
    np.testing.assert_array_equal(pairs, [1.0, 10.0])
    assert agreeing.sum() / pairs.sum() == pytest.approx(10 / 11)


def test_pair_order_controls():
    references = [np.array([0.1, 0.3, 0.2, 0.9, 0.0]), np.array([0.5, 0.5, 0.4, 1.0])]
    agreeing, pairs = control_pair_order("position", references, final=False)
    np.testing.assert_array_equal(pairs, [6, 2])
    np.testing.assert_array_equal(agreeing, [5, 0])
    agreeing, pairs = control_pair_order("random", references, final=False)
    np.testing.assert_array_equal(agreeing, [3.0, 1.0])  # one half of every pair
    # all credit on the last segment: ties (one half) among the others, and "the last is highest" on the rest
    assert control_pair_order("last_segment", references, final=True)[0].tolist() == [6 * 0.5 + 0.0, 2 * 0.5 + 3.0]


def test_reverse_position_is_the_other_side_of_position():
    """Position never ties, so on every trace reversed position scores exactly pairs - position."""
    np.testing.assert_array_equal(control_scores("reverse_position", 3), [3, 2, 1])
    references = [np.array([0.1, 0.3, 0.2, 0.9, 0.0]), np.array([0.5, 0.5, 0.4, 1.0])]
    forward, pairs = control_pair_order("position", references, final=False)
    backward, same_pairs = control_pair_order("reverse_position", references, final=False)
    np.testing.assert_array_equal(same_pairs, pairs)
    np.testing.assert_array_equal(backward, pairs - forward)


def test_split_half_agreement_of_monte_carlo_with_itself():
    # two halves of 4 rollouts per state: values (first half) 0.25, 0.5, 1.0; (second half) 0.0, 0.5, 0.75
    outcomes = ["1000" + "0000", "1100" + "0011", "1111" + "1110"]
    # sigma nf: first half (0.25, 0.5), second half (0.5, 0.25): the one pair each orders is ordered oppositely
    assert split_half_pair_order(outcomes, 1.0) == (0.0, 1.0)
    same = ["1000" + "1000", "1100" + "0011", "1111" + "1111"]
    assert split_half_pair_order(same, 1.0) == (1.0, 1.0)
    # one half ties its only pair: that direction orders none, so the trace tells nothing
    assert split_half_pair_order(["1000" + "0000", "1100" + "1000", "1111" + "1100"], 1.0) is None
    assert split_half_pair_order(["1", "0", "1"], 1.0) is None  # fewer than two rollouts a state
