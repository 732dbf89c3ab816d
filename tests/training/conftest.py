"""A factory of small trainers on the tiny random model, for the trainer, update and method tests."""

from __future__ import annotations

import pytest

from rredcot_viz.training import Trainer, builtin_split, config_for


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
