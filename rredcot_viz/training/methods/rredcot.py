"""``rredcot``: per-segment advantages from RREDCoT's redistributed reward (METHOD.md §5): every rollout is
segmented (hybrid, K segments), its sigma estimated with the current policy, and sigma coupled to token
advantages over the group with mode a / b / c and lambda."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rredcot_viz.training.credit import couple_group
from rredcot_viz.training.methods.base import TrainingMethod, methods
from rredcot_viz.training.rollouts import Group

if TYPE_CHECKING:
    from rredcot_viz.training.loop import Trainer


@methods.register("rredcot")
class RREDCoTGRPO(TrainingMethod):
    name = "rredcot"
    provenance = "RREDCoT (arXiv 2606.06475); coupling modes are design choices"

    def advantages(self, trainer: Trainer, groups: list[Group]) -> None:
        for group in groups:
            couple_group(
                group.rollouts, trainer.redistribute_group(group.problem_index, group.rollouts), trainer.config
            )
