"""``rredcot``: per-segment advantages from RREDCoT's redistributed reward (METHOD.md §5): every rollout is
segmented (hybrid, K segments), its sigma estimated with the current policy, and sigma coupled to token
advantages over the group with mode a / b / c and lambda."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.estimators.coupling import grpo_advantages, segment_advantages, token_advantages
from rredcot_viz.training.methods.base import TrainingMethod, methods
from rredcot_viz.training.rollouts import Group

if TYPE_CHECKING:
    from rredcot_viz.training.loop import Trainer


@methods.register("rredcot")
class RREDCoTGRPO(TrainingMethod):
    name = "rredcot"
    provenance = "RREDCoT (arXiv 2606.06475); coupling modes are design choices"

    def advantages(self, trainer: Trainer, groups: list[Group]) -> None:
        config = trainer.config
        for group in groups:
            sigmas = trainer.redistribute_group(group.problem_index, group.rollouts)
            rewards = np.array([r.reward for r in group.rollouts])
            per_segment = segment_advantages(sigmas, rewards, config.coupling, config.coupling_lambda)
            grpo = grpo_advantages(rewards)
            for rollout, advantages, baseline in zip(group.rollouts, per_segment, grpo, strict=True):
                rollout.segment_advantages = [float(a) for a in advantages]
                rollout.token_advantages = token_advantages(
                    advantages, rollout.segments, len(rollout.completion_ids), float(baseline), config.coupling
                )
