"""The training-method interface: how rollouts are collected for a prompt and what advantage every trained
token gets. Sampling, the loss, the optimiser and logging live once in ``training.loop``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from rredcot_viz.estimators.coupling import grpo_advantages
from rredcot_viz.registry import Registry
from rredcot_viz.training.rollouts import Group

if TYPE_CHECKING:
    from rredcot_viz.training.loop import Trainer
    from rredcot_viz.training.task import Problem


class TrainingMethod(ABC):
    name: ClassVar[str]
    provenance: ClassVar[str] = "design choice (configurable)"

    def collect(self, trainer: Trainer, problem: Problem, index: int) -> list[Group]:
        """Default: one group of G i.i.d. rollouts from the prompt."""
        rollouts = trainer.sample(problem, [], trainer.config.group_size, key=(index, "base"))
        return [Group("all", rollouts, index)]

    @abstractmethod
    def advantages(self, trainer: Trainer, groups: list[Group]) -> None:
        """Fill ``token_advantages`` (and ``segment_advantages`` for the inspector) of every trained rollout."""


def broadcast_group_advantages(groups: list[Group]) -> None:
    """GRPO within each group (population std, zero advantages for a zero-variance group), the same value
    on every trained token of a rollout."""
    for group in groups:
        rewards = np.array([r.reward for r in group.rollouts])
        for rollout, advantage in zip(group.rollouts, grpo_advantages(rewards), strict=True):
            rollout.token_advantages = np.full(len(rollout.completion_ids), float(advantage))
            rollout.segment_advantages = [float(advantage)] * max(len(rollout.segments), 1)


methods: Registry[type[TrainingMethod]] = Registry("training method")
