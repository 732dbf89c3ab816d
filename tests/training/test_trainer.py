"""The trainer (training/trainer.py) on tiny random models: every method and layout runs a step, and resuming
from a checkpoint gives identical results."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch


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
