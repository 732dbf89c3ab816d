"""An RL run's rollouts grouped as GRPO grouped them, with RREDCoT's credit beside GRPO's advantage: the value
types the run views, figures and reports read, and how the two advantages are compared.

A group's disagreement is the mean |RREDCoT advantage - GRPO advantage| per credited character (both in units
of the group's reward std); the share of credited characters of opposite sign is kept too. RREDCoT's advantage
comes from the rollout's sigma by the trainer's ``value_baseline`` rule (``couple``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rredcot_viz.estimators.coupling import grpo_advantages, value_baseline

SIGN_TOLERANCE = 1e-9


@dataclass
class RunRollout:
    """One completion of a run: what it was rewarded, the GRPO advantage it got, and RREDCoT's credit."""

    step: int
    prompt: int  # the prompt's index in the run (first seen first)
    group: str  # the trainer's group name (base, reset, fallback); ``base`` for an imported run
    index: int  # 0-based within its group
    question: str
    text: str
    reward: float
    outcome: float | None  # R of the trace (0/1): the reward RREDCoT's sigma adds up to
    grpo_advantage: float
    trace_hash: str | None = None
    segment_chars: list[tuple[int, int]] = field(default_factory=list)
    sigma: list[float] | None = None
    rredcot: list[float] | None = None  # per-segment RREDCoT advantage

    def credited_pieces(self) -> list[tuple[int, float]]:
        """(characters, RREDCoT advantage) of each credited segment; empty without RREDCoT credit."""
        if self.rredcot is None:
            return []
        return [(end - start, a) for (start, end), a in zip(self.segment_chars, self.rredcot, strict=True)]

    def record(self) -> dict[str, Any]:
        """The rollout as the rollout-row figures read it (segments shaded by RREDCoT's advantage)."""
        return {
            "group": self.group,
            "problem": self.prompt,
            "text": self.text,
            "reward": self.outcome if self.outcome is not None else self.reward,
            "segment_chars": self.segment_chars if self.rredcot is not None else [],
            "segment_advantages": self.rredcot or [],
            "grpo_advantage": self.grpo_advantage,
        }


@dataclass
class RolloutGroup:
    """The rollouts of one prompt at one step (one GRPO group)."""

    step: int
    prompt: int
    name: str
    question: str
    rollouts: list[RunRollout]

    @property
    def rewards(self) -> np.ndarray:
        return np.array([r.reward for r in self.rollouts], dtype=float)

    @property
    def credited(self) -> int:
        return sum(r.rredcot is not None for r in self.rollouts)

    @property
    def disagreement(self) -> float | None:
        """Mean |RREDCoT advantage - GRPO advantage| per credited character (None: no rollout has RREDCoT
        credit); both are in units of the group's reward std, so 1 is one std of difference."""
        return credit_gap(self.rollouts)[0]

    @property
    def opposed(self) -> float | None:
        """The share of credited characters whose RREDCoT advantage has the opposite sign to GRPO's."""
        return credit_gap(self.rollouts)[1]


def credit_gap(rollouts: list[RunRollout]) -> tuple[float | None, float | None]:
    """(mean |RREDCoT - GRPO| per credited character, share of credited characters of opposite sign)."""
    gap, opposed, total = 0.0, 0, 0
    for rollout in rollouts:
        for chars, advantage in rollout.credited_pieces():
            gap += chars * abs(advantage - rollout.grpo_advantage)
            opposed += chars * (_sign(advantage) * _sign(rollout.grpo_advantage) < 0)
            total += chars
    return (gap / total, opposed / total) if total else (None, None)


def couple(group: RolloutGroup) -> None:
    """Each credited rollout's per-segment RREDCoT advantage (``value_baseline`` on the group's outcomes), and
    GRPO's advantage where the run did not store one (a trained run: the trainer's population std)."""
    rewards = group.rewards
    if any(np.isnan(r.grpo_advantage) for r in group.rollouts):
        for rollout, value in zip(group.rollouts, grpo_advantages(rewards), strict=True):
            rollout.grpo_advantage = float(value)
    outcomes = np.array([r.outcome if r.outcome is not None else r.reward for r in group.rollouts], dtype=float)
    for rollout, outcome in zip(group.rollouts, outcomes, strict=True):
        if rollout.sigma is not None:
            rollout.rredcot = value_baseline(np.asarray(rollout.sigma), outcome, outcomes).tolist()


def _sign(value: float) -> int:
    return 0 if abs(value) <= SIGN_TOLERANCE else (1 if value > 0 else -1)
