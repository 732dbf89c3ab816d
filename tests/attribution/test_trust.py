"""The trust line: each method's agreement with Monte Carlo beside MC's agreement with itself, in words."""

from __future__ import annotations

import numpy as np
import pytest

from rredcot_viz.attribution.trust import own_trust, trust
from rredcot_viz.types import StateValues

# MC on K = 4 segments: values at s_1..s_4 then R; sigma on the three non-final segments is 0.25, 0.5, -0.25
MC_VALUES = np.array([0.25, 0.5, 1.0, 0.75, 1.0])
MC_SIGMA = np.diff(MC_VALUES)
HALVES = {"V_half_a": np.array([0.0, 0.5, 1.0, 1.0, 1.0]), "V_half_b": np.array([0.5, 0.5, 1.0, 0.5, 1.0]),
          "rollouts": np.array([4.0, 4, 4, 4, 0])}  # fmt: skip


def test_each_method_is_read_against_mc_and_mc_against_itself():
    same = MC_SIGMA.copy()
    reversed_ = -MC_SIGMA
    found = trust({"mc": MC_SIGMA, "rredcot": same, "loo": reversed_}, "mc", HALVES, 4)
    assert found.pairs == 3 and found.methods == {"rredcot": 3.0, "loo": 0.0}
    # halves' non-final sigma: (0.5, 0.5, 0.0) orders 2 pairs, b's (0.0, 0.5, -0.5) 3; a reads b's 3 as
    # tie (1/2), yes, yes: 2.5 of 3; b reads a's 2 as yes, yes: 2 of 2; averaged: 0.9167
    assert found.itself == pytest.approx((2.5 / 3 + 1.0) / 2)
    lines = found.sentences({"rredcot": "RREDCoT"})
    assert lines[0] == "RREDCoT orders 3 of 3 segment pairs as Monte Carlo does (100%; ordering at random gets 50%)."
    assert lines[1].startswith("loo orders 0 of 3 segment pairs")
    assert lines[2].startswith("Monte Carlo agrees with itself on 92% of segment pairs (about 3 of 3): two")


def test_no_trust_line_without_monte_carlo_halves_and_unknown_when_a_half_ties():
    assert trust({"rredcot": MC_SIGMA}, "rredcot", {}, 0) is None
    flat = HALVES | {"V_half_a": np.array([0.5, 0.5, 0.5, 0.5, 1.0])}  # this half ranks no two segments apart
    found = trust({"mc": MC_SIGMA}, "mc", flat, 4)
    assert found.itself is None and "unknown" in found.sentences()[-1]


def test_inspect_reads_monte_carlo_against_itself_only():
    values = StateValues("mc", MC_VALUES, HALVES)
    found = own_trust(values, MC_SIGMA)
    assert found.methods == {} and found.rollouts == 4 and len(found.sentences()) == 1
    assert own_trust(StateValues("rredcot", MC_VALUES, {"R_hat": MC_VALUES}), MC_SIGMA) is None
