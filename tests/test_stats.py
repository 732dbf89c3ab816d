"""Intervals and bootstraps used across the library (the compare bench's own are in tests/bench)."""

from __future__ import annotations

import math

import numpy as np

from rredcot_viz.stats import bootstrap_mean, wilson_interval


def test_wilson_interval_known_values():
    low, high = wilson_interval(7, 10)
    assert (round(low, 4), round(high, 4)) == (0.3968, 0.8922)
    assert wilson_interval(0, 0) == (0.0, 1.0)  # no draws: the whole range


def test_bootstrap_mean_brackets_the_mean_and_drops_nan():
    low, high = bootstrap_mean(np.array([1.0, 2.0, 3.0, 4.0, np.nan]))
    assert 1.0 <= low < 2.5 < high <= 4.0
    assert all(math.isnan(x) for x in bootstrap_mean(np.array([1.0, np.nan])))
