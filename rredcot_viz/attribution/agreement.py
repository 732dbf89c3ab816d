"""Agreement between per-segment score vectors (METHOD.md §7.5).

Per trace: Spearman (Pearson of average ranks), Kendall tau-b, Pearson, top-k overlap and sign agreement,
as matrices over all selected methods. A constant vector makes the rank statistics undefined: they are NaN,
and aggregates over traces leave such traces out and say how many. Over a set of traces: mean, median,
count and a bootstrap 95% interval of the mean.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rredcot_viz.registry import Registry
from rredcot_viz.stats import bootstrap_mean

metrics: Registry[Callable[[np.ndarray, np.ndarray], float]] = Registry("agreement metric")


def ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (1-based), ties sharing the mean of their positions."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="mergesort")
    result = np.empty(len(values))
    sorted_values = values[order]
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        result[order[start : end + 1]] = (start + end) / 2 + 1
        start = end + 1
    return result


@metrics.register("pearson")
def pearson(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / math.sqrt((a * a).sum() * (b * b).sum()))


@metrics.register("spearman")
def spearman(a: np.ndarray, b: np.ndarray) -> float:
    return pearson(ranks(a), ranks(b))


@metrics.register("kendall")
def kendall_tau_b(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(a)
    if n < 2:
        return math.nan
    concordant = discordant = 0
    for i, j in itertools.combinations(range(n), 2):
        product = np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])
        concordant += product > 0
        discordant += product < 0
    n0 = n * (n - 1) / 2
    n1 = sum(c * (c - 1) / 2 for c in np.unique(a, return_counts=True)[1])
    n2 = sum(c * (c - 1) / 2 for c in np.unique(b, return_counts=True)[1])
    denominator = math.sqrt((n0 - n1) * (n0 - n2))
    return float((concordant - discordant) / denominator) if denominator else math.nan


def top_k_overlap(a: np.ndarray, b: np.ndarray, k: int = 3) -> float:
    """Share of the k highest-scoring segments that the two vectors have in common."""
    k = min(k, len(a))
    if k == 0:
        return math.nan
    top = lambda v: set(np.argsort(-np.asarray(v, dtype=float), kind="mergesort")[:k].tolist())  # noqa: E731
    return len(top(a) & top(b)) / k


def sign_agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Share of segments where both vectors have the same sign (zero counts as its own sign)."""
    if len(a) == 0:
        return math.nan
    return float(np.mean(np.sign(np.asarray(a, dtype=float)) == np.sign(np.asarray(b, dtype=float))))


metrics.register("top3_overlap")(top_k_overlap)
metrics.register("sign_agreement")(sign_agreement)


def agreement_matrix(scores: dict[str, np.ndarray], metric: str = "spearman") -> tuple[list[str], np.ndarray]:
    """Symmetric matrix of ``metric`` between every pair of methods (diagonal 1 where defined)."""
    names = list(scores)
    function = metrics.get(metric)
    matrix = np.full((len(names), len(names)), math.nan)
    for i, j in itertools.product(range(len(names)), repeat=2):
        if i <= j:
            matrix[i, j] = matrix[j, i] = function(scores[names[i]], scores[names[j]])
    return names, matrix


@dataclass
class AgreementSummary:
    pair: tuple[str, str]
    metric: str
    mean: float
    median: float
    low: float  # bootstrap 95% interval of the mean
    high: float
    count: int  # traces with a defined value
    left_out: int  # traces where the statistic was undefined (a constant vector)


def summarize(
    per_trace: list[dict[str, np.ndarray]], pair: tuple[str, str], metric: str = "spearman"
) -> AgreementSummary:
    """Aggregate one metric for one pair of methods over traces (NaN traces left out and counted)."""
    function = metrics.get(metric)
    values = np.array(
        [function(scores[pair[0]], scores[pair[1]]) for scores in per_trace if pair[0] in scores and pair[1] in scores]
    )
    defined = values[~np.isnan(values)]
    low, high = bootstrap_mean(defined)
    mean = float(defined.mean()) if len(defined) else math.nan
    median = float(np.median(defined)) if len(defined) else math.nan
    return AgreementSummary(pair, metric, mean, median, low, high, len(defined), len(values) - len(defined))
