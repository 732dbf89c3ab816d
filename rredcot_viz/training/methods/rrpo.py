"""``rrpo``: reset a failed chain at a uniformly random step (arXiv 2605.25507)."""

from __future__ import annotations

from dataclasses import dataclass

from rredcot_viz.training.config import method_setting
from rredcot_viz.training.methods.base import RolloutSource, methods
from rredcot_viz.training.methods.resets import ResetConfig, ResetMethod
from rredcot_viz.training.rollouts import TrainRollout
from rredcot_viz.training.task import Problem


@dataclass(frozen=True)
class RRPOConfig(ResetConfig):
    method: str = method_setting("rrpo")


@methods.register("rrpo")
class RRPO(ResetMethod):
    name = "rrpo"
    Config = RRPOConfig
    provenance = "RRPO (arXiv 2605.25507): reset at a uniformly random step of a failed chain"

    def reset_step(self, source: RolloutSource, problem: Problem, parent: TrainRollout, key: tuple) -> int:
        return int(source.rng(*key).integers(1, len(parent.info["reset_step_chars"]) + 1))
