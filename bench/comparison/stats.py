"""The compare bench's statistics: a pooled ratio (a share of pairs over traces) with a bootstrap that resamples
the traces whole, the paired difference of two such ratios, and the held-out split of a problem by its key.

>>> held_out_split("Tom has 3 apples", 0) in ("selection", "evaluation")
True
"""

from __future__ import annotations

import hashlib
import math

import numpy as np


def bootstrap_ratio(
    numerators: np.ndarray, denominators: np.ndarray, n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """sum(numerators) / sum(denominators) with a percentile bootstrap interval that resamples the items (e.g.
    traces) whole, so pooled shares of pairs keep each trace's pairs together; NaN where the total is 0."""
    return paired_bootstrap_ratio_difference(numerators, denominators, None, None, n_boot, seed, level)


def paired_bootstrap_ratio_difference(
    numerators: np.ndarray,
    denominators: np.ndarray,
    other_numerators: np.ndarray | None,
    other_denominators: np.ndarray | None,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """Pooled ratio minus another pooled ratio over the same items (the same resampled items for both, so the
    pairing is kept; without the other, the ratio itself) and its percentile bootstrap interval."""
    a, b = np.asarray(numerators, dtype=float), np.asarray(denominators, dtype=float)
    c = np.zeros_like(a) if other_numerators is None else np.asarray(other_numerators, dtype=float)
    d = np.ones_like(b) if other_denominators is None else np.asarray(other_denominators, dtype=float)
    if not (a.shape == b.shape == c.shape == d.shape):
        raise ValueError(
            f"pooled ratios need one value per item, got shapes {a.shape}, {b.shape}, {c.shape}, {d.shape}"
        )

    def statistic(index: np.ndarray) -> np.ndarray:
        den, other = b[index].sum(axis=-1), d[index].sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mine = np.where(den > 0, a[index].sum(axis=-1) / den, np.nan)
            theirs = np.where(other > 0, c[index].sum(axis=-1) / other, np.nan)
        return mine - theirs  # without the other: 0 / n = 0

    point = float(statistic(np.arange(len(a))))
    if len(a) < 2 or math.isnan(point):
        return point, math.nan, math.nan
    rng = np.random.default_rng(seed)
    draws = statistic(rng.integers(0, len(a), size=(n_boot, len(a))))
    draws = draws[~np.isnan(draws)]
    alpha = (1 - level) / 2
    return point, float(np.quantile(draws, alpha)), float(np.quantile(draws, 1 - alpha))


def held_out_split(key: str, seed: int, names: tuple[str, ...] = ("selection", "evaluation")) -> str:
    """The split an item belongs to, from a seeded hash of its ``key`` alone: fixed before anything is scored,
    unchanged when items are added, and the same for every item that shares the key (e.g. both traces of one
    problem), so a setting chosen on one split is reported on data it never saw."""
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return names[digest[0] % len(names)]
