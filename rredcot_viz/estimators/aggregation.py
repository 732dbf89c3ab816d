"""How the per-token probabilities of a scored span become one number (docs/method.md §3.1, ``aggregation``).

``seq_prob`` (VeriFree; R-hat's default) is the exact span probability, computed in log space; ``geo_mean`` is
length-normalised (v-hat's default, so a long reference path is not penalised for its length); ``mean_prob``
(RLPR's f_seq) stays on one scale whatever the span length but is not the span's probability; ``sum_logprob``
is for display and attribution targets only (not a probability).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rredcot_viz.registry import Registry

aggregations: Registry[Callable[[np.ndarray], float]] = Registry("aggregation")


@aggregations.register("mean_prob", aliases=("mean_token_prob",))
def mean_prob(logprobs: np.ndarray) -> float:
    return float(np.exp(logprobs).mean())


@aggregations.register("seq_prob", aliases=("sequence_prob",))
def seq_prob(logprobs: np.ndarray) -> float:
    return float(np.exp(logprobs.sum()))


@aggregations.register("geo_mean", aliases=("geometric_mean",))
def geo_mean(logprobs: np.ndarray) -> float:
    return float(np.exp(logprobs.mean()))


@aggregations.register("sum_logprob")
def sum_logprob(logprobs: np.ndarray) -> float:
    return float(logprobs.sum())


CANDIDATE_NORMALIZED = "candidate_normalized"


def candidate_normalized(reference: np.ndarray, candidates: list[np.ndarray]) -> float:
    """p(reference) renormalised over the candidate answers (the reference included), by span probability.

    Small models put the answer mass on the latest intermediate number; normalising over the numbers of the
    question and trace removes most of the formatting noise (MODELS.md)."""
    logs = np.array([reference.sum(), *(c.sum() for c in candidates)])
    return float(np.exp(logs[0] - np.logaddexp.reduce(logs)))
