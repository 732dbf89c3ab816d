"""``rredcot``: per-segment advantages from RREDCoT's redistributed reward (docs/method.md §5): every rollout is
segmented, its sigma estimated with the current policy (the analyzer's scoring plan), and sigma coupled to
token advantages over the group. Every credit setting (segmentation, estimator, coupling ``value_baseline`` by
default or ``a`` / ``b`` / ``c``, ``coupling_lambda``, ``gae_lambda``) is the config's ``credit``, the same
``CreditConfig`` the TRL plug-in takes."""

from __future__ import annotations

from dataclasses import dataclass

from rredcot_viz.training.config import CreditConfig, TrainConfig, credit_setting, method_setting
from rredcot_viz.training.credit import couple_group
from rredcot_viz.training.methods.base import CreditScorer, TrainingMethod, methods
from rredcot_viz.training.rollouts import Group


@dataclass(frozen=True)
class RREDCoTGRPOConfig(TrainConfig):
    method: str = method_setting("rredcot")
    credit: CreditConfig = credit_setting(only=None)


@methods.register("rredcot")
class RREDCoTGRPO(TrainingMethod):
    name = "rredcot"
    Config = RREDCoTGRPOConfig
    provenance = "RREDCoT (arXiv 2606.06475); coupling modes are design choices"
    config: RREDCoTGRPOConfig

    def advantages(self, groups: list[Group], scorer: CreditScorer) -> None:
        credit = self.config.credit
        for group in groups:
            couple_group(group.rollouts, scorer.sigmas(group, credit), credit)
