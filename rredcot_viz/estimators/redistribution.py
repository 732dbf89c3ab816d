"""Turning a value curve into redistributed rewards sigma (docs/method.md §4).

``values`` holds V_1..V_{K+1} with the terminal V_{K+1} = R already in place.

- ``exact_sum`` (variant B, default): sigma_t = V_{t+1} - V_t for t < K and sigma_K = R - sum_{t<K} sigma_t,
  so sum(sigma) == R exactly (RUDDER's correction term);
- ``difference`` (variant A): sigma_t = V_{t+1} - V_t, so sum(sigma) = R - V_1;
- ``proportional`` (teaching only): R * dV_t / sum(dV), unstable when sum(dV) ~ 0.

>>> redistribute(np.array([0.15, 0.25, 0.70, 0.80, 1.0]), "exact_sum").round(2).tolist()
[0.1, 0.45, 0.1, 0.35]
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from rredcot_viz.errors import ConfigError

Variant = Literal["exact_sum", "difference", "proportional"]
VARIANTS: tuple[Variant, ...] = get_args(Variant)


def redistribute(values: np.ndarray, variant: Variant = "exact_sum") -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or len(values) < 2:
        raise ConfigError(f"need values for K+1 >= 2 states, got shape {values.shape}")
    outcome = values[-1]
    diffs = np.diff(values)
    if variant == "difference":
        return diffs
    if variant == "exact_sum":
        sigma = diffs.copy()
        sigma[-1] = outcome - sigma[:-1].sum()
        return sigma
    if variant == "proportional":
        total = diffs.sum()
        if abs(total) < 1e-9:
            raise ConfigError("proportional redistribution is undefined when the value differences sum to ~0")
        return outcome * diffs / total
    raise ConfigError(f"unknown redistribution variant {variant!r}; choose one of {', '.join(VARIANTS)}")


def last_segment_note(values: np.ndarray, variant: str) -> str | None:
    """Why the last segment's sigma has the other sign than the value curve's last step, when it does: under
    ``exact_sum`` sigma_K = (R - V_K) + V_1, so it also carries the starting value (what makes the credits add up
    to R), and a failed trace's last segment can show green while the curve falls to 0. None otherwise."""
    values = np.asarray(values, dtype=float)
    if variant != "exact_sum" or len(values) < 3:
        return None
    start, last, outcome = values[0], values[-2], values[-1]
    step, sigma = outcome - last, outcome - (last - start)
    if abs(sigma) < 1e-3 or np.sign(sigma) == np.sign(step):
        return None
    return (
        f"The last segment's σ ({sigma:+.3f}) is the rest of the outcome R = {outcome:g} under exact_sum: "
        f"σ_K = (R − V_K) + V_1 = ({outcome:g} − {last:.3f}) + {start:.3f}. The curve's last step ({step:+.3f}) "
        f"{'lowered' if step < 0 else 'raised'} the value; σ_K also carries the starting value V_1 so that the "
        "credits add up to R. The difference variant shows the step alone (its credits add up to R − V_1)."
    )
