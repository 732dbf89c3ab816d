"""Shapley values (attribution/shapley.py) exact on a toy model: docs/method.md's fixture, a random game, sampling."""

from __future__ import annotations

import numpy as np

from rredcot_viz.attribution import attributions
from rredcot_viz.attribution.shapley import exact_shapley

from .cases import make

# docs/method.md §7.2 fixture: f(empty)=0, f({1})=0.2, f({2})=0.5, f({1,2})=1.0 (shifted by a constant log-prob)
F = {(): 0.0, (0,): 0.2, (1,): 0.5, (0, 1): 1.0}


def test_shapley_and_loo_fixture():
    context, segmentation = make(2, F.__getitem__)
    shapley = attributions.get("shapley")(trigger="=").attribute(context, segmentation)
    np.testing.assert_allclose(shapley.values, [0.35, 0.65], atol=1e-9)
    assert abs(shapley.checks["efficiency_gap"]) < 1e-9
    loo = attributions.get("loo")(trigger="=").attribute(context, segmentation)
    np.testing.assert_allclose(loo.values, [0.5, 0.8], atol=1e-9)  # not efficient: sums to 1.3


def random_game(k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    weights, pair = rng.normal(size=k), rng.normal(size=(k, k)) * 0.3
    return lambda s: float(sum(weights[i] for i in s) + sum(pair[i, j] for i in s for j in s if i < j)) * 0.2


def test_exact_shapley_on_a_random_game():
    k = 5
    game = random_game(k)
    context, segmentation = make(k, game)
    result = attributions.get("shapley")(trigger="=").attribute(context, segmentation)
    import itertools

    table = {tuple(s): game(tuple(s)) for r in range(k + 1) for s in itertools.combinations(range(k), r)}
    np.testing.assert_allclose(result.values, exact_shapley(table, k), atol=1e-9)
    assert abs(result.values.sum() - (game(tuple(range(k))) - game(()))) < 1e-9


def test_sampled_shapley_is_efficient_for_any_m_and_converges():
    k = 10
    game = random_game(k, seed=1)
    context, segmentation = make(k, game)
    exact = attributions.get("shapley")(trigger="=", exact_max_k=10).attribute(context, segmentation)
    for m in (1, 3):
        sampled = attributions.get("shapley")(trigger="=", exact_max_k=8, permutations=m).attribute(
            context, segmentation
        )
        assert abs(sampled.checks["efficiency_gap"]) < 1e-6 * (1 + abs(exact.values.sum()))
    many = attributions.get("shapley")(trigger="=", exact_max_k=8, permutations=300, seed=2).attribute(
        context, segmentation
    )
    np.testing.assert_allclose(many.values, exact.values, atol=4 * many.stderr.max() + 1e-3)
    assert (many.stderr > 0).all()
