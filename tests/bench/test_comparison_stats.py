"""The compare bench's statistics (bench/comparison/stats.py): pooled ratios resampled by trace, the held-out split."""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))  # the bench scripts import their neighbours
stats = importlib.import_module("comparison.stats")
bootstrap_ratio, held_out_split = stats.bootstrap_ratio, stats.held_out_split
paired_bootstrap_ratio_difference = stats.paired_bootstrap_ratio_difference


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
