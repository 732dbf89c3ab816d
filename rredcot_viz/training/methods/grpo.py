"""``grpo``: the group-normalised outcome advantage on every token (DeepSeekMath / TRL GRPO)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rredcot_viz.training.methods.base import TrainingMethod, broadcast_group_advantages, methods
from rredcot_viz.training.rollouts import Group

if TYPE_CHECKING:
    from rredcot_viz.training.loop import Trainer


@methods.register("grpo")
class GRPO(TrainingMethod):
    name = "grpo"
    provenance = "DeepSeekMath (arXiv 2402.03300); population std as in METHOD.md §5"

    def advantages(self, trainer: Trainer, groups: list[Group]) -> None:
        broadcast_group_advantages(groups)
