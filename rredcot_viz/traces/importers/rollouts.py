"""What the RL-run importers share: the ``metadata["rollout"]`` record that places a completion in its run
(step, prompt, rewards, the advantage the trainer gave it), and turning a reward into the outcome.

A trace keeps its text and references like any other; ``metadata["rollout"]`` is what lets the store rebuild
the run (``workflows.runs``): one row per completion, grouped by step and prompt.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from rredcot_viz.errors import TraceError
from rredcot_viz.traces.importers.fields import flag_value

ROLLOUT_KEY = "rollout"
OUTCOME_HINTS = ("accuracy", "correct", "acc")
"""Reward names read as the outcome before any other (TRL's ``accuracy_reward``, verl's ``acc``)."""


def prompt_key(prompt: Any) -> str:
    """Names the exact prompt a completion answered; with the step it names the completion's group."""
    blob = json.dumps(prompt, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def number(value: Any, name: str) -> float | None:
    """A reward or advantage as a float (None or NaN: missing, as TRL logs an unscorable completion)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return None if math.isnan(value) else float(value)
    raise TraceError(f"`{name}` must be a number, got {type(value).__name__} ({str(value)[:40]!r})")


def step_of(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
        raise TraceError(f"`step` must be a whole number, got {value!r}")
    return int(value)


def correct_from(value: Any, name: str) -> bool | None:
    """A 0/1 (or true/false) outcome as a bool; any other value is not an outcome (None)."""
    value = flag_value(value)
    if isinstance(value, bool):
        return value
    reward = number(value, name) if not isinstance(value, str) else None
    return None if reward not in (0.0, 1.0) else reward == 1.0


def outcome_of(rewards: dict[str, float | None], total: float | None) -> tuple[bool | None, str | None]:
    """(correct, the reward it came from): an accuracy-like reward that is 0 or 1 first, else the only reward or
    the total when it is 0 or 1; a reward on another scale gives no outcome (answer checking decides)."""
    named = [name for name in rewards if any(hint in name.lower() for hint in OUTCOME_HINTS)]
    for name in named:
        correct = correct_from(rewards[name], name)
        if correct is not None:
            return correct, name
    candidates = [(next(iter(rewards)), next(iter(rewards.values())))] if len(rewards) == 1 else [("total", total)]
    for name, value in candidates:
        if value in (0.0, 1.0):
            return value == 1.0, name
    return None, None


def rollout_metadata(
    step: int,
    prompt: str,
    reward: float | None,
    rewards: dict[str, float | None],
    advantage: float | None,
    outcome_from: str | None,
) -> dict[str, Any]:
    return {
        ROLLOUT_KEY: {
            "step": step,
            "prompt": prompt,
            "reward": reward,
            "rewards": rewards,
            "advantage": advantage,
            "outcome_from": outcome_from,
        }
    }


def json_safe(value: Any) -> Any:
    """A value as JSON can store it (NaN as null), for the fields a run keeps beside the trace."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
