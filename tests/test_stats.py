"""Intervals and bootstraps used by the benches and the figures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rredcot_viz.stats import (
    bootstrap_mean,
    bootstrap_ratio,
    held_out_split,
    paired_bootstrap_difference,
    paired_bootstrap_ratio_difference,
    wilson_interval,
)


def test_wilson_interval_known_values():
    low, high = wilson_interval(7, 10)
    assert (round(low, 4), round(high, 4)) == (0.3968, 0.8922)
    assert wilson_interval(0, 0) == (0.0, 1.0)  # no draws: the whole range


def test_bootstrap_mean_brackets_the_mean_and_drops_nan():
    low, high = bootstrap_mean(np.array([1.0, 2.0, 3.0, 4.0, np.nan]))
    assert 1.0 <= low < 2.5 < high <= 4.0
    assert all(math.isnan(x) for x in bootstrap_mean(np.array([1.0, np.nan])))


def test_paired_difference_keeps_pairs_and_skips_undefined_items():
    a = np.array([0.5, 0.7, np.nan, 0.9])
    b = np.array([0.1, 0.3, 0.2, np.nan])
    mean, low, high, used = paired_bootstrap_difference(a, b)
    assert used == 2 and mean == pytest.approx(0.4)
    assert low == pytest.approx(0.4) and high == pytest.approx(0.4)  # both pairs differ by exactly 0.4
    mean, low, high, used = paired_bootstrap_difference(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0]))
    assert (mean, used) == (pytest.approx(1.0), 3) and 0.0 <= low < 1.0 < high <= 2.0
    assert paired_bootstrap_difference(np.array([np.nan]), np.array([1.0]))[3] == 0
    with pytest.raises(ValueError, match="same shape"):
        paired_bootstrap_difference(np.zeros(2), np.zeros(3))


def test_pooled_ratio_resamples_items_whole():
    ratio, low, high = bootstrap_ratio(np.array([1.0, 9.0, 2.0]), np.array([1.0, 10.0, 4.0]))
    assert ratio == pytest.approx(12 / 15) and low < 12 / 15 < high and low >= 0.5 and high <= 1.0
    assert bootstrap_ratio(np.array([3.0, 6.0]), np.array([4.0, 8.0]))[1:] == (pytest.approx(0.75), pytest.approx(0.75))
    assert all(math.isnan(x) for x in bootstrap_ratio(np.zeros(2), np.zeros(2)))
    same = paired_bootstrap_ratio_difference(
        np.array([2.0, 4.0]), np.array([4.0, 8.0]), np.array([1.0, 2.0]), np.array([4.0, 8.0])
    )
    assert same == (pytest.approx(0.25), pytest.approx(0.25), pytest.approx(0.25))  # the pairing is kept
    with pytest.raises(ValueError, match="one value per item"):
        bootstrap_ratio(np.zeros(2), np.zeros(3))


def test_held_out_split_is_a_seeded_hash_of_the_key_alone():
    assert [held_out_split(key, 0) for key in "abcdef"] == [
        "evaluation",
        "selection",
        "selection",
        "evaluation",
        "selection",
        "evaluation",
    ]
    assert [held_out_split(key, 1) for key in "abcdef"] == [
        "evaluation",
        "evaluation",
        "selection",
        "selection",
        "evaluation",
        "evaluation",
    ]  # another seed, another split
    keys = [f"problem {i}" for i in range(2000)]
    share = np.mean([held_out_split(key, 0) == "selection" for key in keys])
    assert 0.45 < share < 0.55
    assert {held_out_split(key, 3, ("a", "b", "c")) for key in keys} == {"a", "b", "c"}
