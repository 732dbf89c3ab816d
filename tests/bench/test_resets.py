"""bench/resets.py: its parents come from problems the trainer bench never trains or evaluates on, and its
figures are the trainer's own cut of them beside the former cut (the control)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from rredcot_viz.training import builtin_split, config_for
from rredcot_viz.training.rollouts import TrainRollout

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))  # the bench scripts import their neighbours
resets = importlib.import_module("resets")


def test_selection_problems_are_disjoint_from_the_trainer_benchs_split():
    train, held_out = builtin_split(train=200, held_out=32, seed=0)
    chosen = resets.selection_problems(64)
    questions = {p.question for p in chosen}
    assert len(chosen) == len(questions) == 64
    assert not questions & {p.question for p in train + held_out}


def test_cut_figures_count_each_parents_steps_under_both_cuts(tiny):
    texts = [
        "So x = 12 now.\n",  # five words, one line: word_starts gives 5 steps
        "It is 7.\n",  # three words: 3 steps
        "Tom has 3 apples.\nHe buys 4 more.\nSo 3 + 4 = 7.\nHe eats 1.\nSo 7 - 1 = 6.\nThe answer is 6.\n",
    ]
    parents = [TrainRollout([1], tiny.encode(t), t, 0.0, 0) for t in texts]
    row, counts = resets.cut_figures(tiny, parents, config_for("rrpo"))
    assert counts == {3: 1, 5: 2}
    assert row["uniform_empty_chance"] == pytest.approx((1 / 5 + 1 / 3 + 1 / 5) / 3)
    assert row["parents_under_4_steps_share"] == pytest.approx(1 / 3)
    assert row["former_uniform_empty_chance"] > row["uniform_empty_chance"]  # fixed_tokens cut the short ones coarser
