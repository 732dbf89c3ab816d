"""Trainer: advantages against METHOD.md's tables, the prefix mask, a step that lowers the loss, every method
and layout, and checkpoint/resume giving identical results (tiny random models)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from rredcot_viz.errors import ConfigError
from rredcot_viz.training import Trainer, builtin_problems, builtin_split, config_for
from rredcot_viz.training.loss import policy_loss
from rredcot_viz.training.methods.base import broadcast_group_advantages
from rredcot_viz.training.rollouts import Group, TrainRollout
from rredcot_viz.training.task import reward


def rollout(rewarded: float, n: int = 3, suffix_start: int = 0) -> TrainRollout:
    return TrainRollout([1, 2], list(range(5, 5 + n)), "x", rewarded, 0, suffix_start, [(0, n)])


def test_group_advantages_worked_examples():
    reset = Group("reset", [rollout(r) for r in (1, 0, 1, 0)], 0)
    base = Group("base", [rollout(r) for r in (1, 0, 0, 0)], 0)
    same = Group("base", [rollout(1) for _ in range(4)], 0)
    broadcast_group_advantages([reset, base, same])
    assert [r.token_advantages[0] for r in reset.rollouts] == pytest.approx([1, -1, 1, -1])
    assert [r.token_advantages[0] for r in base.rollouts] == pytest.approx([1.732, -0.577, -0.577, -0.577], abs=1e-3)
    assert all((r.token_advantages == 0).all() for r in same.rollouts)
    assert all(len(r.token_advantages) == 3 for r in reset.rollouts)


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


def test_builtin_task_and_reward():
    problems = builtin_problems(50, seed=3)
    assert len({p.question for p in problems}) == 50
    for problem in problems[:10]:
        assert reward(problem.solution, problem.answer) == 1.0 and problem.prompt.endswith("Working:\n")
    assert reward("The answer is 5.", "5") == 1.0 and reward("so 5", "5") == 0.0  # a stray number never counts
    train, held = builtin_split(20, 5)
    assert not {p.question for p in train} & {p.question for p in held}


@pytest.fixture
def trainer_factory(tiny):
    train, held = builtin_split(30, 4, seed=0)

    def make(method: str = "grpo", **overrides) -> Trainer:
        settings = dict(
            steps=4,
            max_new_tokens=8,
            group_size=4,
            eval_problems=4,
            eval_samples=1,
            eval_every=2,
            lora_rank=4,
            learning_rate=1e-2,
        )
        config = config_for(method, **{**settings, **overrides})
        return Trainer(tiny, config, train, held, run_id=f"test-{method}")

    return make


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


@pytest.mark.parametrize(
    ("method", "layout"),
    [("grpo", "1x4"), ("rredcot", "1x4"), ("rrpo", "1x4"), ("srpo", "1x4"), ("srpo", "2x4"), ("srpo", "1x8")],
)
def test_every_method_and_layout_runs_a_step(trainer_factory, method, layout):
    resets = {"layout": layout, "localizer_max_tokens": 8} if method == "srpo" else {"layout": layout}
    trainer = trainer_factory(method, **(resets if method in ("rrpo", "srpo") else {}))
    metrics, groups = trainer.train_step()
    assert metrics["step"] == 1 and metrics["rollouts"] == sum(len(g.rollouts) for g in groups)
    for group in groups:
        for r in group.rollouts:
            assert r.token_advantages is not None and len(r.token_advantages) == len(r.completion_ids)
            assert r.segments[-1][1] <= len(r.completion_ids)
    names = [g.name for g in groups]
    if method in ("rrpo", "srpo"):  # a random tiny model always fails: a parent is always found
        expected = {"1x4": ["base", "reset"], "2x4": ["reset", "reset"], "1x8": ["reset"]}[layout]
        assert names == expected and all(len(g.rollouts) == (8 if layout == "1x8" else 4) for g in groups)
        for group in groups:
            if group.name == "reset":
                assert group.parent is not None and all(
                    r.suffix_start == r.info["prefix_tokens"] for r in group.rollouts
                )


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


def test_resume_from_a_checkpoint_is_identical(trainer_factory, tmp_path, monkeypatch):
    # a random tiny model never solves a problem: reward the parity of the completion's length instead, so
    # that groups have variance and the updates are real
    monkeypatch.setattr("rredcot_viz.training.sampler.reward", lambda text, answer: float(len(text) % 2))
    straight = trainer_factory("rredcot")
    initial = {n: p.detach().clone() for n, p in straight.model.named_parameters() if p.requires_grad}
    history = straight.run()
    assert any(m.get("reward_std", 0) > 0 for m in history)
    assert any(not torch.equal(initial[n], p) for n, p in straight.model.named_parameters() if p.requires_grad)
    first = trainer_factory("rredcot")
    first.config = replace(first.config, steps=2)
    first.run(checkpoint_dir=tmp_path)
    first.save(tmp_path / "step_0002")
    resumed = trainer_factory("rredcot")
    resumed.load(tmp_path / "step_0002")
    assert resumed.step == 2
    rest = resumed.run()
    for name, parameter in straight.model.named_parameters():
        if parameter.requires_grad:
            assert torch.equal(parameter, dict(resumed.model.named_parameters())[name]), name
    assert [m["reward_mean"] for m in history[-2:]] == [m["reward_mean"] for m in rest[-2:]]
    assert history[-1]["held_out_accuracy"] == rest[-1]["held_out_accuracy"]


def test_bad_configs_are_refused():
    with pytest.raises(ConfigError, match="layout must be one of 1x4, 2x4, 1x8, got '3x3'"):
        config_for("srpo", layout="3x3")
    with pytest.raises(ConfigError, match=r"group_size must be in \[2, \.\.\.\], got 1"):
        config_for("grpo", group_size=1)
    with pytest.raises(ConfigError, match="method 'grpo' has no setting coupling; its settings are: method, steps"):
        config_for("grpo", coupling="a")
