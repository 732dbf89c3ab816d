"""What every training method shares (training/methods/base.py): group advantages against docs/method.md's tables."""

from __future__ import annotations

import pytest

from rredcot_viz.training.methods.base import broadcast_group_advantages
from rredcot_viz.training.rollouts import Group, TrainRollout


def rollout(rewarded: float, n: int = 3, suffix_start: int = 0) -> TrainRollout:
    return TrainRollout([1, 2], list(range(5, 5 + n)), "x", rewarded, 0, suffix_start, [(0, n)])


def test_group_advantages_worked_examples():
    reset = Group("reset", [rollout(r) for r in (1, 0, 1, 0)], 0)
    base = Group("base", [rollout(r) for r in (1, 0, 0, 0)], 0)
    same = Group("base", [rollout(1) for _ in range(4)], 0)
    broadcast_group_advantages([reset, base, same])
    assert [r.token_advantages[0] for r in reset.rollouts] == pytest.approx([1, -1, 1, -1])
    assert [r.token_advantages[0] for r in base.rollouts] == pytest.approx([1.732, -0.577, -0.577, -0.577], abs=1e-3)
    assert all((r.token_advantages == 0).all() for r in same.rollouts)
    assert all(len(r.token_advantages) == 3 for r in reset.rollouts)
