"""The built-in task (training/task.py): distinct problems, their reward, and a disjoint held-out split."""

from __future__ import annotations

from rredcot_viz.training import builtin_problems, builtin_split
from rredcot_viz.training.task import reward


def test_builtin_task_and_reward():
    problems = builtin_problems(50, seed=3)
    assert len({p.question for p in problems}) == 50
    for problem in problems[:10]:
        assert reward(problem.solution, problem.answer) == 1.0 and problem.prompt.endswith("Working:\n")
    assert reward("The answer is 5.", "5") == 1.0 and reward("so 5", "5") == 0.0  # a stray number never counts
    train, held = builtin_split(20, 5)
    assert not {p.question for p in train} & {p.question for p in held}
