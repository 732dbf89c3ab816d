"""``grpo``: the group-normalised outcome advantage on every token (DeepSeekMath / TRL GRPO)."""

from __future__ import annotations

from dataclasses import dataclass

from rredcot_viz.training.config import TrainConfig, method_setting
from rredcot_viz.training.methods.base import CreditScorer, TrainingMethod, broadcast_group_advantages, methods
from rredcot_viz.training.rollouts import Group


@dataclass(frozen=True)
class GRPOConfig(TrainConfig):
    method: str = method_setting("grpo")


@methods.register("grpo")
class GRPO(TrainingMethod):
    name = "grpo"
    Config = GRPOConfig
    provenance = "DeepSeekMath (arXiv 2402.03300); population std as in docs/method.md §5"

    def advantages(self, groups: list[Group], scorer: CreditScorer) -> None:
        broadcast_group_advantages(groups)
