"""Small statistics used across the project: Wilson and Newcombe intervals, bootstrap means.

>>> [round(x, 4) for x in wilson_interval(7, 10)]
[0.3968, 0.8922]
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (docs/method.md §6); (0, 1) when n = 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = (z / denominator) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_difference(k1: int, n1: int, k2: int, n2: int, z: float = Z95) -> tuple[float, float]:
    """Interval for p2 - p1 of two independent proportions (Newcombe's hybrid score method)."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, z)
    l2, u2 = wilson_interval(k2, n2, z)
    d = p2 - p1
    return d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2), d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)


def bootstrap_mean(values: np.ndarray, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (NaNs dropped); (nan, nan) with fewer than 2 values."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if len(values) < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(n_boot, len(values)))].mean(axis=1)
    alpha = (1 - level) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def paired_bootstrap_difference(
    a: np.ndarray, b: np.ndarray, n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float, int]:
    """Mean of ``a - b`` over the items where both are defined, its percentile bootstrap interval (items
    resampled together, so the pairing is kept) and how many items were used."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired values need the same shape, got {a.shape} and {b.shape}")
    differences = (a - b)[~(np.isnan(a) | np.isnan(b))]
    if not len(differences):
        return math.nan, math.nan, math.nan, 0
    low, high = bootstrap_mean(differences, n_boot, seed, level)
    return float(differences.mean()), low, high, len(differences)


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
