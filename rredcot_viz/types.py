"""The value types every layer exchanges, and the content key that names stored values.

Model calls report a ``CallCost`` and return ``TokenStats``, ``ContinuationScores``, ``Generation``s; the
scoring plan asks for ``ScoreSeries`` / ``ScoreItem``s; estimators return ``StateValues``; Monte Carlo keeps
``Rollout``s. They live here, below every package, so that no package needs another's internals to name them.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field

import numpy as np


def content_key(*parts: object) -> str:
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


@dataclass
class CallCost:
    """What a model call cost: public calls, forward passes, tokens through the network, seconds."""

    calls: int = 0
    forward_passes: int = 0
    tokens_processed: int = 0
    tokens_generated: int = 0
    seconds: float = 0.0

    def __add__(self, other: CallCost) -> CallCost:
        return CallCost(
            self.calls + other.calls,
            self.forward_passes + other.forward_passes,
            self.tokens_processed + other.tokens_processed,
            self.tokens_generated + other.tokens_generated,
            self.seconds + other.seconds,
        )

    def __sub__(self, other: CallCost) -> CallCost:
        return CallCost(
            self.calls - other.calls,
            self.forward_passes - other.forward_passes,
            self.tokens_processed - other.tokens_processed,
            self.tokens_generated - other.tokens_generated,
            self.seconds - other.seconds,
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "calls": self.calls,
            "forward_passes": self.forward_passes,
            "tokens_processed": self.tokens_processed,
            "tokens_generated": self.tokens_generated,
            "seconds": round(self.seconds, 4),
        }

    def source(self, cached: bool, computed_at: float | None = None, by: str | None = None) -> str:
        """Where a result shown with this cost came from, in words a table can show: ``cached`` results carry the
        cost they had when they were computed (when that was and by what, where recorded: a background job); a
        result that made no model call now was cached or needs none: never "computed now" at 0 s."""
        if cached:
            when = f" at {time.strftime('%H:%M:%S', time.localtime(computed_at))}" if computed_at else ""
            return f"computed by {by}{when}" if by else f"cached · computed{when}" if when else "cached"
        return "computed now" if self.calls else "no model call now (cached, or needs none)"


@dataclass
class TokenStats:
    """Per-token log-prob of the actual token and predictive entropy (nats, float32, T = 1)."""

    logprobs: np.ndarray  # (T,)
    entropies: np.ndarray  # (T,)


@dataclass
class ContinuationScores:
    logprobs: list[np.ndarray]  # one (len(target),) array per request, in request order
    stats: TokenStats | None
    cost: CallCost


@dataclass
class BranchScores:
    """``score_branches``: per branch, one (len(target),) array per request it planned, and its tail's stats."""

    logprobs: list[list[np.ndarray]]
    stats: list[TokenStats | None]
    cost: CallCost


@dataclass
class Generation:
    prompt_length: int
    token_ids: list[int]
    text: str
    finish_reason: str  # "eos" | "stop" | "answer" (a complete \\boxed{} with stop_on_answer) | "length"
    seed: int
    entropies: list[float] = field(default_factory=list)  # per generated token, nats at temperature 1 (§2)

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass(frozen=True)
class PrefixSampling:
    """Sample ``len(seeds)`` continuations after ``ids[:prefix] + context`` (``prefix`` >= 1)."""

    prefix: int
    context: tuple[int, ...]
    seeds: tuple[int, ...]


@dataclass
class SampleResult:
    generations: list[Generation]
    cost: CallCost


@dataclass
class Encoding:
    """Token ids of a text and the character offset where each token starts (``starts[0] == 0``)."""

    ids: list[int]
    starts: list[int]


@dataclass(frozen=True)
class Rollout:
    """One sampled continuation from a state, with its grade (stored so more rollouts reuse these)."""

    prefix: int  # response tokens kept before the continuation
    index: int  # 0-based rollout number at this prefix; its seed derives from (base seed, prefix, index)
    seed: int
    text: str
    answer: str | None
    correct: bool
    finish_reason: str
    tokens: int

    @property
    def truncated(self) -> bool:
        """Hit the token cap without writing an answer."""
        return self.finish_reason == "length" and self.answer is None


@dataclass(frozen=True)
class ScoreItem:
    """Score ``target`` after the first ``prefix`` response tokens and then ``context`` (token ids);
    ``key`` names what is scored, so equal items share one cache entry."""

    key: str
    prefix: int
    context: tuple[int, ...]
    target: tuple[int, ...]


@dataclass(frozen=True)
class ScoreSeries:
    """Score ``target`` after ``state prefix + context`` at every state (both texts tokenized separately,
    so the prefix's ids stay those of the trace and nothing merges across the seam)."""

    name: str
    context: str
    target: str
    per_state: bool = False  # the target depends on the state: ask ``ValueEstimator.state_target``


@dataclass
class StateValues:
    """Per-state values: ``values`` is the curve that is redistributed (V_{K+1} = the terminal value)."""

    estimator: str
    values: np.ndarray  # (K+1,)
    components: dict[str, np.ndarray] = field(default_factory=dict)  # each (K+1,)
    intervals: dict[str, np.ndarray] = field(default_factory=dict)  # each (K+1, 2)
    notes: list[str] = field(default_factory=list)
    cost: CallCost = field(default_factory=CallCost)
