"""Coupling redistributed rewards to GRPO token advantages for a group of G rollouts (METHOD.md §5).

All three couplings are design choices (the paper does not publish its own); every token of segment k of
rollout i receives A_{i,k}:

- mode ``a`` (default, RUDDER-faithful): sigma normalised over all segments of all rollouts of the prompt;
- mode ``b``: reward-to-go of the normalised sigma (DeepSeekMath's process-supervision recipe);
- mode ``c``: the GRPO advantage re-weighted per segment by |sigma| / mean |sigma| of its rollout.

``lam`` mixes with plain GRPO: A = lam * A_redistributed + (1 - lam) * A_GRPO (lam = 0 recovers GRPO).

>>> grpo_advantages(np.array([1.0, 0.0, 0.0, 0.0])).round(3).tolist()
[1.732, -0.577, -0.577, -0.577]
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from rredcot_viz.errors import ConfigError

CouplingMode = Literal["a", "b", "c"]
StdMode = Literal["population", "trl", "unbiased"]
ZERO_STD = 1e-8


def grpo_advantages(rewards: np.ndarray, std: StdMode = "population") -> np.ndarray:
    """(r_i - mean) / std over the group; a group whose rewards are all equal gets zero advantages.

    ``population`` uses ddof=0 (METHOD.md default, SRPO code); ``trl`` divides by the unbiased std + 1e-4
    (TRL's form); ``unbiased`` uses ddof=1 (verl's form).
    """
    rewards = np.asarray(rewards, dtype=float)
    centred = rewards - rewards.mean()
    if len(rewards) < 2 or rewards.std() < ZERO_STD:
        return np.zeros_like(rewards)
    if std == "population":
        return centred / rewards.std()
    if std == "trl":
        return centred / (rewards.std(ddof=1) + 1e-4)
    if std == "unbiased":
        return centred / rewards.std(ddof=1)
    raise ConfigError(f"std must be population, trl or unbiased, got {std!r}")


def uniform_credit(outcome: float, k: int) -> np.ndarray:
    """What outcome-only credit gives each of k segments of one trace: the outcome spread evenly."""
    return np.full(k, outcome / k)


def segment_advantages(
    sigmas: list[np.ndarray],
    rewards: np.ndarray,
    mode: CouplingMode = "a",
    lam: float = 1.0,
    std: StdMode = "population",
) -> list[np.ndarray]:
    """Per-segment advantages A_{i,k} for each rollout i of one prompt."""
    if len(sigmas) != len(rewards):
        raise ConfigError(f"{len(sigmas)} sigma vectors for {len(rewards)} rewards; pass one per rollout")
    if not 0.0 <= lam <= 1.0:
        raise ConfigError(f"lambda must be in [0, 1], got {lam}")
    grpo = grpo_advantages(rewards, std)
    pooled = np.concatenate([np.asarray(s, dtype=float) for s in sigmas]) if sigmas else np.zeros(0)
    mean, spread = (pooled.mean(), pooled.std()) if len(pooled) else (0.0, 0.0)

    def normalised(sigma: np.ndarray) -> np.ndarray:
        if spread < ZERO_STD:
            return np.zeros_like(sigma)
        return (sigma - mean) / (spread + ZERO_STD)

    result = []
    for sigma, grpo_i in zip(sigmas, grpo, strict=True):
        sigma = np.asarray(sigma, dtype=float)
        if mode == "a":
            redistributed = normalised(sigma)
        elif mode == "b":
            redistributed = np.cumsum(normalised(sigma)[::-1])[::-1]
        elif mode == "c":
            magnitude = np.abs(sigma)
            scale = magnitude.mean()
            weights = np.ones_like(sigma) if scale < ZERO_STD else magnitude / (scale + ZERO_STD)
            redistributed = weights * grpo_i
        else:
            raise ConfigError(f"coupling mode must be a, b or c, got {mode!r}")
        result.append(lam * redistributed + (1.0 - lam) * grpo_i)
    return result


def token_advantages(
    advantages: np.ndarray,
    token_spans: list[tuple[int, int]],
    n_tokens: int,
    grpo_advantage: float,
    mode: CouplingMode = "a",
) -> np.ndarray:
    """Spread one rollout's segment advantages over its ``n_tokens`` response tokens.

    Tokens outside every segment (the final-answer span after the reasoning) get the GRPO advantage in
    mode ``c`` and the last segment's advantage in modes ``a`` and ``b`` (design choice)."""
    if len(advantages) != len(token_spans):
        raise ConfigError(f"{len(advantages)} segment advantages for {len(token_spans)} segments")
    tail = grpo_advantage if mode == "c" else (float(advantages[-1]) if len(advantages) else grpo_advantage)
    out = np.full(n_tokens, tail, dtype=float)
    for value, (start, end) in zip(advantages, token_spans, strict=True):
        out[start:end] = value
    return out
