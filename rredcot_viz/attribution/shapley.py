"""Shapley values over segments (docs/method.md §7.2): exact for K <= ``exact_max_k``, else permutation
sampling with M seeded permutations (each walked incrementally, so it telescopes: the efficiency property
sum(phi) = f(N) - f(empty) holds exactly for any M), with per-segment standard errors."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rredcot_viz.attribution.base import Attribution, AttributionConfig, SegmentScores, attributions
from rredcot_viz.settings import setting

if TYPE_CHECKING:
    from rredcot_viz.model.core import ProgressFn
    from rredcot_viz.scoring.context import TraceContext
    from rredcot_viz.segmenters.base import Segmentation


@dataclass(frozen=True)
class ShapleyConfig(AttributionConfig):
    exact_max_k: int = setting(8, "exact Shapley values up to this K (2^K subsets), permutation sampling above",
                               low=1, high=14)  # fmt: skip
    permutations: int = setting(32, "sampled permutations M above exact_max_k", low=1)
    antithetic: bool = setting(False, "sample each permutation together with its reverse", advanced=True)
    seed: int = setting(0, "seed of the sampled permutations", advanced=True)


@attributions.register("shapley")
class Shapley(Attribution):
    name = "shapley"
    Config = ShapleyConfig
    provenance = "paper (arXiv 2606.06475, Shapley baseline); Captum ShapleyValues / ShapleyValueSampling"

    def segment_scores(
        self, context: TraceContext, segmentation: Segmentation, progress: ProgressFn | None = None
    ) -> SegmentScores:
        k = segmentation.k
        if k <= self.config.exact_max_k:
            subsets = [tuple(s) for r in range(k + 1) for s in itertools.combinations(range(k), r)]
            f = self.subset_values(context, segmentation, subsets, progress)
            values, stderr, note = exact_shapley(f, k), None, f"exact over {len(subsets)} subsets"
        else:
            orders = permutation_orders(k, self.config.permutations, self.config.seed, self.config.antithetic)
            subsets = sorted({tuple(sorted(order[:j])) for order in orders for j in range(k + 1)})
            f = self.subset_values(context, segmentation, subsets, progress)
            values, stderr = sampled_shapley(f, orders, k)
            note = f"{len(orders)} sampled permutations (seed {self.config.seed}), {len(subsets)} subsets"
        gap = float(values.sum() - (f[tuple(range(k))] - f[()]))
        return SegmentScores(self.name, values, stderr, {"efficiency_gap": gap}, [note])


def exact_shapley(f: dict[tuple[int, ...], float], k: int) -> np.ndarray:
    values = np.zeros(k)
    for t in range(k):
        others = [i for i in range(k) if i != t]
        for r in range(k):
            weight = math.factorial(r) * math.factorial(k - r - 1) / math.factorial(k)
            for subset in itertools.combinations(others, r):
                with_t = tuple(sorted((*subset, t)))
                values[t] += weight * (f[with_t] - f[subset])
    return values


def permutation_orders(k: int, count: int, seed: int, antithetic: bool) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    orders = []
    for _ in range(count):
        order = tuple(int(i) for i in rng.permutation(k))
        orders.append(order)
        if antithetic:
            orders.append(order[::-1])
    return orders


def sampled_shapley(
    f: dict[tuple[int, ...], float], orders: list[tuple[int, ...]], k: int
) -> tuple[np.ndarray, np.ndarray]:
    marginals = np.zeros((len(orders), k))
    for row, order in enumerate(orders):
        for j, t in enumerate(order):
            marginals[row, t] = f[tuple(sorted(order[: j + 1]))] - f[tuple(sorted(order[:j]))]
    stderr = marginals.std(axis=0, ddof=1) / math.sqrt(len(orders)) if len(orders) > 1 else np.full(k, np.nan)
    return marginals.mean(axis=0), stderr
