"""The training-method interface (TRL's shape: a config subclass per method, one shared loop).

A method sees two narrow interfaces, never the trainer: ``RolloutSource`` (sample rollouts, derive seeded
random choices, the policy for text of its own such as SRPO's localiser) and ``CreditScorer`` (RREDCoT sigma
of a group). It decides how rollouts are collected (``collect``), what advantage every trained token gets
(``advantages``) and, if it must, the loss (``loss``); sampling, the update, evaluation, checkpoints and
logging live once in ``training.trainer``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

import numpy as np
import torch

from rredcot_viz.estimators.coupling import grpo_advantages
from rredcot_viz.registry import Registry
from rredcot_viz.training.config import CreditConfig, TrainConfig
from rredcot_viz.training.loss import policy_loss
from rredcot_viz.training.rollouts import Group, TrainRollout
from rredcot_viz.training.task import Problem

if TYPE_CHECKING:
    from rredcot_viz.model.lm import LanguageModel


@dataclass(frozen=True)
class SampleRequest:
    """``n`` rollouts of ``problem`` after its prompt and ``prefix`` (completion tokens kept from a parent, for a
    reset); their seeds derive from (run seed, step, *key, i)."""

    problem: Problem
    index: int  # the problem's position in the training set
    n: int
    key: tuple
    prefix: tuple[int, ...] = ()
    prefix_entropies: tuple[float, ...] | None = None  # the parent's, so the segmenter sees whole entropies


class RolloutSource(Protocol):
    """What a method may ask of the loop while collecting a step's rollouts."""

    @property
    def policy(self) -> LanguageModel: ...
    def sample(self, requests: list[SampleRequest]) -> list[list[TrainRollout]]: ...
    def rng(self, *key: object) -> np.random.Generator: ...


class CreditScorer(Protocol):
    """RREDCoT sigma of every rollout of a group under the current policy (``training.credit``)."""

    def sigmas(self, group: Group, credit: CreditConfig) -> list[np.ndarray]: ...


class TrainingMethod(ABC):
    """Subclasses set ``name``, ``Config`` (a ``TrainConfig`` subclass) and implement ``advantages``."""

    name: ClassVar[str]
    Config: ClassVar[type[TrainConfig]] = TrainConfig
    provenance: ClassVar[str] = "design choice (configurable)"

    def __init__(self, config: TrainConfig):
        self.config = config

    def collect(self, source: RolloutSource, problems: list[tuple[int, Problem]]) -> list[Group]:
        """Default: one group of G i.i.d. rollouts per problem, all of the step's problems in one batch."""
        size = self.config.group_size
        requests = [SampleRequest(problem, index, size, (index, "base")) for index, problem in problems]
        drawn = source.sample(requests)
        return [Group("all", rollouts, request.index) for request, rollouts in zip(requests, drawn, strict=True)]

    @abstractmethod
    def advantages(self, groups: list[Group], scorer: CreditScorer) -> None:
        """Fill ``token_advantages`` (and ``segment_advantages`` for the inspector) of every trained rollout."""

    def loss(
        self,
        logprobs: torch.Tensor,
        old_logprobs: torch.Tensor,
        advantages: torch.Tensor,
        mask: torch.Tensor,
        reference: torch.Tensor | None,
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """The policy loss over (B, T) tensors: ``config.loss`` (PPO-clip token mean for GRPO and RREDCoT-GRPO,
        SRPO's sequence mean for the reset methods)."""
        c = self.config
        return policy_loss(logprobs, old_logprobs, advantages, mask, c.loss, c.clip_eps, reference, c.kl_beta)

    def step_metrics(self, groups: list[Group]) -> dict[str, float]:
        """What the method adds to the step's metrics (a reset method: where its resets landed)."""
        return {}


def broadcast_group_advantages(groups: list[Group]) -> None:
    """GRPO within each group (population std, zero advantages for a zero-variance group), the same value
    on every trained token of a rollout."""
    for group in groups:
        rewards = np.array([r.reward for r in group.rollouts])
        for rollout, advantage in zip(group.rollouts, grpo_advantages(rewards), strict=True):
            rollout.token_advantages = np.full(len(rollout.completion_ids), float(advantage))
            rollout.segment_advantages = [float(advantage)] * max(len(rollout.segments), 1)


methods: Registry[type[TrainingMethod]] = Registry("training method")
