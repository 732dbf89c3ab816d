"""The Learner (training/update.py): the prefix mask, a step that lowers the loss and leaves the base weights, and
the shared prompt pass equal to one full sequence per rollout."""

from __future__ import annotations

import pytest
import torch

from rredcot_viz.training.loss import policy_loss
from rredcot_viz.training.methods.base import broadcast_group_advantages
from rredcot_viz.training.rollouts import Group, TrainRollout


def test_prefix_mask_and_one_step_lowers_the_loss(trainer_factory):
    trainer = trainer_factory()
    prompt = trainer.sampler.prompt_ids(trainer.train_problems[0])
    good = TrainRollout(prompt, [40, 41, 42, 43], "a", 1.0, 0, suffix_start=2, segments=[(0, 4)])
    bad = TrainRollout(prompt, [50, 51, 52], "b", 0.0, 0, suffix_start=0, segments=[(0, 3)])
    broadcast_group_advantages([Group("all", [good, bad], 0)])
    _, mask, _ = trainer.learner.logprobs([good, bad])
    assert mask.tolist() == [[0, 0, 1, 1], [1, 1, 1, 0]]  # the shared prefix and the padding are not trained

    def loss() -> float:
        with torch.no_grad():
            lp, m, _ = trainer.learner.logprobs([good, bad])
            adv = torch.tensor([[1.0] * 4, [-1.0, -1.0, -1.0, 0.0]])
            return float(policy_loss(lp, lp, adv, m)[0])

    before = loss()
    frozen = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if not p.requires_grad}
    adapters = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    trainer.learner.update([good, bad], trainer.method.loss)
    assert loss() < before
    after = dict(trainer.model.named_parameters())
    assert frozen and all(torch.equal(after[n], p) for n, p in frozen.items())  # LoRA: the base is not touched
    assert any(not torch.equal(after[n], p) for n, p in adapters.items())


def test_shared_prompt_pass_equals_one_full_sequence_per_rollout(trainer_factory):
    """Rollouts of one prompt run it once; log-probs and LoRA gradients equal one full forward per rollout."""
    trainer = trainer_factory()
    first, second = (trainer.sampler.prompt_ids(p) for p in trainer.train_problems[:2])
    rollouts = [
        TrainRollout(first, [40, 41, 42, 43, 44], "a", 1.0, 0, suffix_start=2),
        TrainRollout(first, [50, 51], "b", 0.0, 0),
        TrainRollout(second, [60, 61, 62], "c", 1.0, 0),
    ]
    causal_lm = trainer.model.get_base_model()

    def one_by_one() -> torch.Tensor:
        rows = []
        for r in rollouts:
            logits = causal_lm(input_ids=torch.tensor([r.prompt_ids + r.completion_ids])).logits[0].float()
            scores = torch.log_softmax(logits[len(r.prompt_ids) - 1 : -1], dim=-1)
            row = scores.gather(-1, torch.tensor(r.completion_ids)[:, None])[:, 0]
            rows.append(torch.nn.functional.pad(row, (0, 5 - len(row))))
        return torch.stack(rows)

    def gradients(logprobs: torch.Tensor) -> list[torch.Tensor]:
        trainer.model.zero_grad(set_to_none=True)
        (logprobs * torch.arange(1.0, 6.0)).sum().backward()
        return [p.grad.clone() for p in trainer.learner.trainable]

    expected = one_by_one()
    shared, mask, _ = trainer.learner.logprobs(rollouts)
    torch.testing.assert_close(shared, expected, atol=1e-5, rtol=1e-5)
    assert mask.tolist() == [[0, 0, 1, 1, 1], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]]
    for got, want in zip(gradients(trainer.learner.logprobs(rollouts)[0]), gradients(one_by_one()), strict=True):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("epochs", [1, 4])
def test_the_clip_binds_only_from_the_second_ppo_epoch(trainer_factory, monkeypatch, epochs):
    """One epoch: the ratio to the sampling policy is 1, nothing is clipped. Several: old log-probs stay fixed
    from before the first step, the policy moves away from them and the clip binds."""
    monkeypatch.setattr("rredcot_viz.training.sampler.reward", lambda text, answer: float(len(text) % 2))
    trainer = trainer_factory("grpo", ppo_epochs=epochs, group_size=8, learning_rate=5e-2)
    metrics, _ = trainer.train_step()
    assert metrics["advantage_abs_mean"] > 0
    if epochs == 1:
        assert metrics["clip_fraction"] == 0.0
    else:
        assert metrics["clip_fraction"] > 0.0
