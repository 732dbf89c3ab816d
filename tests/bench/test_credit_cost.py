"""bench/credit_cost.py: its control (the former packing, every state re-encoding its prefix after the prompt)
scores exactly what the trainer's ``group_sigmas`` scores, at a higher cost; the bench forces full-length
rollouts through the model's public ``stop_early`` switch."""

from __future__ import annotations

import copy
import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from training.test_credit import GROUP, PROBLEM, group

from rredcot_viz.estimators import estimators
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.sampling import SamplingConfig
from rredcot_viz.training import CreditConfig
from rredcot_viz.training.credit import group_sigmas
from rredcot_viz.training.rollouts import TrainRollout

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))  # the bench scripts import their neighbours
credit_cost = importlib.import_module("credit_cost")


def scores_seen(estimator) -> list[dict[str, list[np.ndarray]]]:
    """Record the log-probs handed to ``combine`` (per series, per state) on every call."""
    seen: list = []
    combine = estimator.combine

    def spy(series, scores, n_states, outcome):
        seen.append(scores)
        return combine(series, scores, n_states, outcome)

    estimator.combine = spy
    return seen


def assert_same_credit(lm, credit: CreditConfig, name: str, drawn: tuple[list[int], list[TrainRollout]]) -> None:
    sigmas, costs, seen = [], [], []
    prompt, drawn = drawn
    for score in (group_sigmas, credit_cost.prompt_packed_sigmas):
        rollouts = copy.deepcopy(drawn)
        estimator = estimators.get(name)()
        seen.append(scores_seen(estimator))
        before = lm.meter.total
        sigmas.append(score(lm, credit, estimator, prompt, rollouts, PROBLEM))
        costs.append((lm.meter.total - before).tokens_processed)
    new, old = seen
    assert len(new) == len(old) == len([r for r in drawn if r.text])  # an empty completion is not scored
    for got, want in zip(new, old, strict=True):
        assert got.keys() == want.keys()
        for series in got:
            for a, b in zip(got[series], want[series], strict=True):
                np.testing.assert_allclose(a, b, atol=1e-5)
    for a, b in zip(*sigmas, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert costs[0] < costs[1]


@pytest.mark.parametrize("name", ["rredcot", "answer_only"])
def test_rollout_packing_equals_the_prompt_packing_in_log_prob(policy, name):
    old = policy.pack_tokens
    policy.pack_tokens = 48  # several chunks per rollout
    try:
        assert_same_credit(policy, CreditConfig(k=3), name, group(policy, PROBLEM))
    finally:
        policy.pack_tokens = old


@pytest.mark.integration
def test_rollout_packing_equals_the_prompt_packing_on_the_embedded_model(embedded_lm):
    """In float64, so that what is compared is the packing: in float32 the two packings, and the analyzer's, each
    differ from plain re-encoding by up to 1.7e-5 on this model (rounding in 30 layers), below which no
    packing can be told apart from another."""
    model = copy.deepcopy(embedded_lm.model).double()
    exact = LanguageModel(model, embedded_lm.tokenizer, name="embedded-f64", fingerprint="embedded-f64")
    drawn = group(exact, PROBLEM, GROUP[:2], entropies=False)
    assert_same_credit(exact, CreditConfig(k=4), "rredcot", drawn)


def test_without_early_stops_every_row_runs_to_max_new_tokens(policy):
    prompt = policy.encode_prompt("Say hi.")
    config = SamplingConfig(max_new_tokens=12, stop_strings=("\n",), stop_on_answer=True)
    policy.stop_early = False
    try:
        result = policy.sample([prompt, prompt], [0, 1], config)
    finally:
        policy.stop_early = True
    assert [len(g.token_ids) for g in result.generations] == [12, 12]
    assert {g.finish_reason for g in result.generations} == {"length"}
