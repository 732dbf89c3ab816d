"""The policy loss (training/loss.py): REINFORCE and the PPO clip by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rredcot_viz.training.loss import policy_loss


def test_reinforce_and_clip_losses_by_hand():
    logprobs = torch.tensor([[-1.0, -2.0, 0.0], [-0.5, 0.0, 0.0]])
    advantages = torch.tensor([[1.0, 1.0, 0.0], [-2.0, 0.0, 0.0]])
    mask = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])  # row 0's first token is a masked prefix
    loss, _ = policy_loss(logprobs, logprobs, advantages, mask, "reinforce")
    # row 0: mean over its one trained token of A*logp = -2; row 1: -2 * -0.5 = 1; loss = -mean(-2, 1) = 0.5
    assert float(loss) == pytest.approx(0.5)
    clipped, stats = policy_loss(logprobs, logprobs - 1.0, advantages, mask, "ppo_clip", clip_eps=0.2)
    # ratio e = 2.718 > 1.2: row 0 (A > 0) clipped to 1.2; row 1 (A < 0) keeps min(-2e, -2.4) = -5.44
    assert float(clipped) == pytest.approx(-(1.2 * 1.0 + -2.0 * np.e) / 2, abs=1e-5)
    assert stats["clip_fraction"] == pytest.approx(0.5)
