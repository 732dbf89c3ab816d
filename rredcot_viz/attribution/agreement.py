"""Agreement between per-segment score vectors (docs/method.md §7.5).

Per trace: Spearman (Pearson of average ranks), Kendall tau-b, Pearson, top-k overlap and sign agreement,
as matrices over all selected methods. A constant vector makes the rank statistics undefined: they are NaN,
and aggregates over traces leave such traces out. Over a set of traces: per-trace agreement with a reference,
the same for the controls, pooled pairwise order and Monte Carlo's split-half agreement with itself.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from rredcot_viz.errors import UnknownNameError
from rredcot_viz.registry import Registry

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


CONTROLS = ("last_segment", "position", "reverse_position", "random")


def control_scores(control: str, k: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """A control's per-segment scores: all credit on the last segment (the one that writes the answer),
    credit rising linearly with the segment index, falling with it (position never ties, so a method that only
    loses to position must also face its reverse), or random normal draws (needs ``rng``)."""
    if control == "last_segment":
        return np.eye(k)[-1]
    if control == "position":
        return np.arange(1.0, k + 1)
    if control == "reverse_position":
        return np.arange(float(k), 0.0, -1.0)
    if control == "random":
        if rng is None:
            raise ValueError("the random control needs a seeded generator")
        return rng.standard_normal(k)
    raise UnknownNameError("control", control, list(CONTROLS))


def segment_agreement(a: np.ndarray, b: np.ndarray, metric: str = "spearman", *, final: bool = True) -> float:
    """``metric`` between two per-segment vectors over all segments, or without the final one
    (``final=False``: the segment that writes the answer, where every estimator jumps)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not final:
        a, b = a[:-1], b[:-1]
    return metrics.get(metric)(a, b)


def control_agreement(
    control: str,
    reference: np.ndarray,
    metric: str = "spearman",
    *,
    final: bool = True,
    draws: int = 100,
    seed: int = 0,
) -> float:
    """A control's agreement with ``reference``; the random control averages ``draws`` seeded draws."""
    k = len(reference)
    if control != "random":
        return segment_agreement(control_scores(control, k), reference, metric, final=final)
    rng = np.random.default_rng(seed)
    values = np.array(
        [segment_agreement(control_scores("random", k, rng), reference, metric, final=final) for _ in range(draws)]
    )
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else float("nan")


def per_trace_agreement(
    scores: list[np.ndarray], references: list[np.ndarray], metric: str = "spearman", *, final: bool = True
) -> np.ndarray:
    """One method's agreement with the reference on every trace (NaN where either vector is constant)."""
    return np.array([segment_agreement(s, r, metric, final=final) for s, r in zip(scores, references, strict=True)])


def per_trace_control(
    control: str, references: list[np.ndarray], metric: str = "spearman", *, final: bool = True, draws: int = 100
) -> np.ndarray:
    """A control's agreement on every trace; the random control is seeded by the trace's position."""
    return np.array(
        [
            control_agreement(control, r, metric, final=final, draws=draws, seed=index)
            for index, r in enumerate(references)
        ]
    )


def pair_order(a: np.ndarray, b: np.ndarray, *, final: bool = True) -> tuple[float, int]:
    """Pairwise-order agreement of ``a`` with the reference ``b``: over the segment pairs that ``b`` orders
    (unequal values), how many ``a`` orders the same way (a tie in ``a`` counts one half), and how many pairs.
    Unlike a per-trace rank correlation, a trace with K non-final segments contributes K(K-1)/2 pairs, so traces
    with two segments (whose Spearman is always +1 or -1) do not weigh like long ones when pooled (``final=False``
    leaves out the final segment, as ``segment_agreement`` does)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not final:
        a, b = a[:-1], b[:-1]
    agreeing, pairs = 0.0, 0
    for i, j in itertools.combinations(range(len(b)), 2):
        if b[i] == b[j]:
            continue
        pairs += 1
        product = np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])
        agreeing += 1.0 if product > 0 else (0.5 if product == 0 else 0.0)
    return agreeing, pairs


def per_trace_pair_order(
    scores: list[np.ndarray], references: list[np.ndarray], *, final: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``pair_order`` on every trace: (agreeing, pairs) arrays, to be pooled as sum(agreeing) / sum(pairs)."""
    counts = [pair_order(s, r, final=final) for s, r in zip(scores, references, strict=True)]
    return np.array([c[0] for c in counts]), np.array([c[1] for c in counts], dtype=float)


def control_pair_order(
    control: str, references: list[np.ndarray], *, final: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """A control's ``per_trace_pair_order``: ``position`` (credit = segment index, so every pair is read as "the
    later segment gets more"), ``last_segment``, or ``random``, whose expected agreement is exactly one half of
    every pair (so it is given as such, not drawn)."""
    if control == "random":
        pairs = per_trace_pair_order(references, references, final=final)[1]
        return pairs / 2, pairs
    return per_trace_pair_order([control_scores(control, len(r)) for r in references], references, final=final)


def halves_pair_order(half_a: np.ndarray, half_b: np.ndarray) -> tuple[float, float] | None:
    """Monte Carlo's agreement with itself on one trace, from the state values (V_1..V_K, then the outcome) of two
    disjoint halves of every state's rollouts: pairwise order of the one half's sigma against the other's over
    non-final segments, averaged over both directions (only the reference's ordered pairs count). The halves are
    independent MC(n/2) estimates, so this is the ceiling a method compared with MC can be read against.
    (agreeing, pairs) as ``pair_order``; None when a half is undefined or orders no pair."""
    a, b = np.asarray(half_a, dtype=float), np.asarray(half_b, dtype=float)
    if np.isnan(a).any() or np.isnan(b).any():
        return None
    sigma_a, sigma_b = np.diff(a), np.diff(b)  # a non-final segment's sigma: the difference of the values around it
    one_way = [pair_order(x, y, final=False) for x, y in ((sigma_a, sigma_b), (sigma_b, sigma_a))]
    if any(pairs == 0 for _, pairs in one_way):
        return None
    pairs = (one_way[0][1] + one_way[1][1]) / 2
    return (one_way[0][0] / one_way[0][1] + one_way[1][0] / one_way[1][1]) / 2 * pairs, pairs


def split_half_pair_order(outcomes: list[str], final_value: float) -> tuple[float, float] | None:
    """``halves_pair_order`` from stored per-rollout outcomes: one string per non-final state, a rollout per
    character ("1" correct), split into its first and second half (an odd last rollout left out)."""
    n = min(len(o) for o in outcomes) // 2
    if n < 1:
        return None
    halves = [np.append([o[start : start + n].count("1") / n for o in outcomes], final_value) for start in (0, n)]
    return halves_pair_order(*halves)


def value_at_budget(budgets: list[float], values: list[float], budget: float) -> tuple[float, str]:
    """A cost-quality curve read at ``budget`` (linear in log cost between measured points), with how it was
    read: ``interpolated``, or ``clamped`` to the cheapest / dearest point when the budget lies outside.
    Points with an undefined value (NaN) are skipped; with none left the answer is NaN, ``undefined``."""
    x, y = np.asarray(budgets, dtype=float), np.asarray(values, dtype=float)
    defined = ~np.isnan(y)
    if not defined.any():
        return math.nan, "undefined"
    order = np.argsort(x[defined])
    x, y = np.log(x[defined][order]), y[defined][order]
    at = math.log(budget)
    if at < x[0] or at > x[-1]:
        return float(y[0] if at < x[0] else y[-1]), "clamped"
    return float(np.interp(at, x, y)), "interpolated"
