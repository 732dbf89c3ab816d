"""Coupling redistributed rewards to GRPO token advantages for a group of G rollouts (docs/method.md §5).

All three couplings are design choices (the paper does not publish its own); every token of segment k of
rollout i receives A_{i,k}:

- mode ``value_baseline`` (default since the 2026-12-03 revision): policy gradient with Q-hat as a critic;
  the state value before segment k is the group's mean reward moved by the rollout's estimated gain so far
  (under ``exact_sum`` that gain is the cumulative sigma), clipped to [0, 1], and advantages are GAE over
  segments (``gae_lambda`` 1: (R_i - V_{i,k}) / std). A constant estimator gives GRPO exactly, and a correct
  rollout's tokens are never pushed down (a failed one's never up);
- mode ``a`` (RUDDER-faithful, was the default): sigma normalised over all segments of all rollouts of the
  prompt; with an estimator that barely moves before the answer it gives a correct rollout's working
  tokens negative advantages (measured -0.35), so it breaks both invariants above;
- mode ``b``: reward-to-go of the normalised sigma (DeepSeekMath's process-supervision recipe);
- mode ``c``: the GRPO advantage re-weighted per segment by |sigma| / mean |sigma| of its rollout.

``coupling_lambda`` mixes with plain GRPO: A = coupling_lambda * A_redistributed + (1 - coupling_lambda) * A_GRPO
(0 recovers GRPO). Every advantage that scales by the reward spread divides by the same ``reward_scale``: the
group's population std by default, TRL's (unbiased + 1e-4) under ``std="trl"``, or a given ``scale`` (TRL's
``scale_rewards="batch"`` / ``"none"``), so a flat estimator gives that GRPO exactly.

>>> grpo_advantages(np.array([1.0, 0.0, 0.0, 0.0])).round(3).tolist()
[1.732, -0.577, -0.577, -0.577]
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from rredcot_viz.errors import ConfigError

CouplingMode = Literal["value_baseline", "a", "b", "c"]
COUPLING_MODES: tuple[str, ...] = get_args(CouplingMode)
StdMode = Literal["population", "trl", "unbiased"]
ZERO_STD = 1e-8


def reward_scale(rewards: np.ndarray, std: StdMode = "population") -> float:
    """What a group's advantages divide by: ``population`` ddof=0 (docs/method.md default, SRPO code), ``trl`` the
    unbiased std + 1e-4 (TRL's form), ``unbiased`` ddof=1 (verl's form)."""
    rewards = np.asarray(rewards, dtype=float)
    if std == "population":
        return float(rewards.std())
    if std == "trl":
        return float(rewards.std(ddof=1)) + 1e-4
    if std == "unbiased":
        return float(rewards.std(ddof=1))
    raise ConfigError(f"std must be population, trl or unbiased, got {std!r}")


def zero_variance(rewards: np.ndarray) -> bool:
    """A group with nothing to compare: fewer than two rollouts, or all rewards equal (its advantages are 0)."""
    rewards = np.asarray(rewards, dtype=float)
    return len(rewards) < 2 or float(rewards.std()) < ZERO_STD


def grpo_advantages(rewards: np.ndarray, std: StdMode = "population", scale: float | None = None) -> np.ndarray:
    """(r_i - mean) / ``reward_scale`` over the group (or / ``scale`` when given); a group whose rewards are all
    equal gets zero advantages."""
    rewards = np.asarray(rewards, dtype=float)
    if zero_variance(rewards):
        return np.zeros_like(rewards)
    return (rewards - rewards.mean()) / (reward_scale(rewards, std) if scale is None else scale)


def uniform_credit(outcome: float, k: int) -> np.ndarray:
    """What outcome-only credit gives each of k segments of one trace: the outcome spread evenly."""
    return np.full(k, outcome / k)


def segment_advantages(
    sigmas: list[np.ndarray],
    rewards: np.ndarray,
    mode: CouplingMode = "value_baseline",
    coupling_lambda: float = 1.0,
    std: StdMode = "population",
    gae_lambda: float = 1.0,
    scale: float | None = None,
) -> list[np.ndarray]:
    """Per-segment advantages A_{i,k} for each rollout i of one prompt (``sigmas`` under ``exact_sum``)."""
    if len(sigmas) != len(rewards):
        raise ConfigError(f"{len(sigmas)} sigma vectors for {len(rewards)} rewards; pass one per rollout")
    if not 0.0 <= coupling_lambda <= 1.0:
        raise ConfigError(f"coupling_lambda must be in [0, 1], got {coupling_lambda}")
    divisor = reward_scale(rewards, std) if scale is None else scale
    grpo = grpo_advantages(rewards, std, divisor)
    pooled = np.concatenate([np.asarray(s, dtype=float) for s in sigmas]) if sigmas else np.zeros(0)
    mean, spread = (pooled.mean(), pooled.std()) if len(pooled) else (0.0, 0.0)

    def normalised(sigma: np.ndarray) -> np.ndarray:
        if spread < ZERO_STD:
            return np.zeros_like(sigma)
        return (sigma - mean) / (spread + ZERO_STD)

    rewards = np.asarray(rewards, dtype=float)
    result = []
    for sigma, grpo_i, reward in zip(sigmas, grpo, rewards, strict=True):
        sigma = np.asarray(sigma, dtype=float)
        if mode == "value_baseline":
            redistributed = value_baseline(sigma, reward, rewards, gae_lambda, divisor)
        elif mode == "a":
            redistributed = normalised(sigma)
        elif mode == "b":
            redistributed = np.cumsum(normalised(sigma)[::-1])[::-1]
        elif mode == "c":
            magnitude = np.abs(sigma)
            scale = magnitude.mean()
            weights = np.ones_like(sigma) if scale < ZERO_STD else magnitude / (scale + ZERO_STD)
            redistributed = weights * grpo_i
        else:
            raise ConfigError(f"coupling mode must be one of {', '.join(COUPLING_MODES)}, got {mode!r}")
        result.append(coupling_lambda * redistributed + (1.0 - coupling_lambda) * grpo_i)
    return result


def value_baseline(
    sigma: np.ndarray, reward: float, rewards: np.ndarray, gae_lambda: float = 1.0, scale: float | None = None
) -> np.ndarray:
    """docs/method.md §5 ``value_baseline``: V_k = clip(mean R + (Q_k - Q_1), 0, 1) with Q_k - Q_1 the cumulative
    sigma before segment k, V_{K+1} = R_i, one-step advantages delta_j = V_{j+1} - V_j, and GAE over segments
    divided by ``scale`` (default the group's population reward std; all zero for a zero-variance group). The
    values are probabilities of the reference answer, so rewards are read as correctness in [0, 1]."""
    if zero_variance(rewards):
        return np.zeros_like(sigma)
    spread = float(np.std(rewards)) if scale is None else scale
    gain = np.concatenate([[0.0], np.cumsum(sigma)[:-1]])  # Q_k - Q_1 for k = 1..K
    values = np.append(np.clip(float(np.mean(rewards)) + gain, 0.0, 1.0), reward)
    deltas = np.diff(values)
    advantages = np.zeros_like(deltas)
    running = 0.0
    for j in range(len(deltas) - 1, -1, -1):
        running = deltas[j] + gae_lambda * running
        advantages[j] = running
    return advantages / spread  # spread >= ZERO_STD here; the same divisor as GRPO, so a flat Q-hat is GRPO exactly


def token_advantages(
    advantages: np.ndarray,
    token_spans: list[tuple[int, int]],
    n_tokens: int,
    grpo_advantage: float,
    mode: CouplingMode = "value_baseline",
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
