"""``rredcot``: per-segment advantages from RREDCoT's redistributed reward (METHOD.md §5): every rollout is
segmented, its sigma estimated with the current policy (the analyzer's scoring plan), and sigma coupled to
token advantages over the group (``value_baseline`` by default; modes a / b / c, lambda, gae_lambda)."""

from __future__ import annotations

from dataclasses import dataclass

from rredcot_viz.estimators import credit_estimators
from rredcot_viz.estimators.coupling import COUPLING_MODES
from rredcot_viz.settings import setting
from rredcot_viz.training.config import TrainConfig, method_setting
from rredcot_viz.training.credit import couple_group
from rredcot_viz.training.methods.base import CreditScorer, TrainingMethod, methods
from rredcot_viz.training.rollouts import Group


@dataclass(frozen=True)
class RREDCoTGRPOConfig(TrainConfig):
    method: str = method_setting("rredcot")
    coupling: str = setting("value_baseline", "how sigma becomes token advantages (METHOD.md §5; the revision's "
                            "default keeps the outcome's sign)", choices=COUPLING_MODES)  # fmt: skip
    coupling_lambda: float = setting(1.0, "weight of sigma against the outcome advantage (modes a / b / c)",
                                     low=0.0, high=1.0)  # fmt: skip
    gae_lambda: float = setting(1.0, "value_baseline: 1 keeps sign consistency with the outcome, < 1 sharpens "
                                "credit toward the decisive segment", low=0.0, high=1.0)  # fmt: skip
    estimator: str = setting("rredcot", "value estimator of the states (R-hat alone without a reference solution)",
                             choices=credit_estimators, advanced=True)  # fmt: skip
    estimator_options: dict = setting({}, "the estimator's own settings, as JSON", advanced=True)


@methods.register("rredcot")
class RREDCoTGRPO(TrainingMethod):
    name = "rredcot"
    Config = RREDCoTGRPOConfig
    provenance = "RREDCoT (arXiv 2606.06475); coupling modes are design choices"
    config: RREDCoTGRPOConfig

    def advantages(self, groups: list[Group], scorer: CreditScorer) -> None:
        c = self.config
        for group in groups:
            sigmas = scorer.sigmas(group, c.estimator, c.estimator_options)
            couple_group(group.rollouts, sigmas, c.coupling, c.coupling_lambda, c.gae_lambda)
