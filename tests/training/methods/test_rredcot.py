"""RREDCoT-GRPO (training/methods/rredcot.py): each rollout's credit adds up and keeps the outcome's sign."""

from __future__ import annotations

import numpy as np
import pytest


def test_rredcot_credit_adds_up_and_keeps_the_outcome_sign(trainer_factory, monkeypatch):
    """Each rollout's sigma sums to R (exact_sum) and follows the value differences; under value_baseline every
    token of a rewarded rollout has advantage >= 0 and every token of an unrewarded one <= 0."""
    monkeypatch.setattr("rredcot_viz.training.sampler.reward", lambda text, answer: float(len(text) % 2))
    trainer = trainer_factory("rredcot", max_new_tokens=24, group_size=6)
    _, groups = trainer.train_step()
    rollouts = [r for g in groups for r in g.rollouts if r.text.strip()]
    assert {r.reward for r in rollouts} == {0.0, 1.0}  # the parity reward gives the group variance
    for r in rollouts:
        sigma, values = np.array(r.info["sigma"]), np.array(r.info["values"])
        assert len(sigma) == len(r.segments) and values[-1] == r.reward
        assert sigma.sum() == pytest.approx(r.reward, abs=1e-9)
        np.testing.assert_allclose(sigma[:-1], np.diff(values)[:-1], atol=1e-12)
        assert (r.token_advantages >= -1e-12).all() if r.reward else (r.token_advantages <= 1e-12).all()
        assert np.abs(r.token_advantages).max() > 0
        for (a, b), advantage in zip(r.segments, r.segment_advantages, strict=True):
            assert (r.token_advantages[a:b] == advantage).all()
