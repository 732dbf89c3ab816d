"""What the trainer samples, scores and learns from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class TrainRollout:
    prompt_ids: list[int]
    completion_ids: list[int]  # trained tokens after ``suffix_start`` (a reset's shared prefix comes first)
    text: str  # the whole completion (prefix and suffix)
    reward: float
    seed: int
    suffix_start: int = 0  # completion tokens before this are the shared prefix: masked out of the loss
    segments: list[tuple[int, int]] = field(default_factory=list)  # token spans in the completion
    segment_advantages: list[float] = field(default_factory=list)
    token_advantages: np.ndarray | None = None  # (len(completion_ids),)
    info: dict[str, Any] = field(default_factory=dict)

    def record(self, group: str) -> dict[str, Any]:
        return {
            "group": group,
            "text": self.text,
            "reward": self.reward,
            "seed": self.seed,
            "suffix_start": self.suffix_start,
            "tokens": len(self.completion_ids),
            "segments": self.segments,
            "segment_advantages": self.segment_advantages,
            "token_advantages": None if self.token_advantages is None else self.token_advantages.tolist(),
            **self.info,
        }


@dataclass
class Group:
    name: str  # "base", "reset", "fallback", "all"
    rollouts: list[TrainRollout]
    problem_index: int
    parent: TrainRollout | None = None  # the failed chain a reset group starts from (not trained on)
