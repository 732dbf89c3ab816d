"""The trainer: the one loop every method runs in (collect, credit, update, evaluate, checkpoint, log).

Every random choice of step s derives from (seed, s, a key naming the choice): which problems are drawn,
every rollout's seed, RRPO's reset step, the localiser's seed. With the trainable weights and the optimiser
restored from a checkpoint, a resumed run therefore continues exactly as the uninterrupted one would have.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rredcot_viz.errors import ConfigError
from rredcot_viz.files import atomic_directory
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.meter import measure
from rredcot_viz.training.config import TrainConfig
from rredcot_viz.training.credit import GroupCredit, estimator_counts
from rredcot_viz.training.methods import methods
from rredcot_viz.training.rollouts import Group
from rredcot_viz.training.sampler import RolloutSampler, derived_seed
from rredcot_viz.training.task import Problem, reward
from rredcot_viz.training.update import Learner

StepLog = Callable[[dict[str, Any], list[Group]], None]
PhaseNote = Callable[[str], None]  # told what the loop does now: "sampling rollouts", "evaluating held-out", ...


class Trainer:
    def __init__(
        self,
        base: LanguageModel,
        config: TrainConfig,
        train: list[Problem],
        held_out: list[Problem],
        run_id: str = "run",
    ):
        if not train:
            raise ConfigError("the trainer needs at least one training problem")
        method_type = methods.get(config.method)
        if not isinstance(config, method_type.Config):
            raise ConfigError(f"method {config.method!r} needs a {method_type.Config.__name__}; use config_for()")
        self.config = config
        self.method = method_type(config)
        self.train_problems, self.held_out = train, held_out
        self.run_id = run_id
        self.step = 0
        self.base = base
        self.learner = Learner(base, config)
        self.policy = LanguageModel(
            self.learner.model,
            base.tokenizer,
            name=f"{base.name} + {config.method}",
            fingerprint=f"{base.fingerprint}:{run_id}:0",
            device=base.device,
            dtype=base.dtype,
            quantization=base.quantization,
        )
        self.sampler = RolloutSampler(self.policy, config)
        self.credit = GroupCredit(self.policy, train, self.sampler.prompt_ids)
        self.on_phase: PhaseNote = lambda phase: None

    @property
    def model(self) -> Any:
        return self.learner.model

    def train_step(self) -> tuple[dict[str, Any], list[Group]]:
        config = self.config
        started = time.perf_counter()
        self.policy.fingerprint = f"{self.base.fingerprint}:{self.run_id}:{self.step}"  # the weights changed
        self.sampler.step = self.step
        chosen = self.sampler.rng("problems").choice(
            len(self.train_problems),
            config.prompts_per_step,
            replace=len(self.train_problems) < config.prompts_per_step,
        )
        problems = [(int(index), self.train_problems[int(index)]) for index in chosen]
        with measure() as spent:
            self.on_phase(f"step {self.step + 1}: sampling rollouts")
            groups = self.method.collect(self.sampler, problems)
            collected = time.perf_counter()
            self.on_phase(f"step {self.step + 1}: scoring credit")
            self.method.advantages(groups, self.credit)
            credited = time.perf_counter()
            rollouts = [r for g in groups for r in g.rollouts]
            self.on_phase(f"step {self.step + 1}: updating the policy")
            with signals_deferred():  # the update and the step count change together, so a stop saves a whole step
                update = self.learner.update(rollouts, self.method.loss)
                self.step += 1
            finished = time.perf_counter()
        rewards = np.array([r.reward for r in rollouts])
        advantages = np.concatenate([r.token_advantages[r.suffix_start :] for r in rollouts if len(r.completion_ids)])
        zero_groups = [np.std([r.reward for r in g.rollouts]) < 1e-8 for g in groups]
        metrics = {
            "step": self.step,
            "reward_mean": float(rewards.mean()),
            "reward_std": float(rewards.std()),
            "advantage_mean": float(advantages.mean()) if len(advantages) else 0.0,
            "advantage_std": float(advantages.std()) if len(advantages) else 0.0,
            "advantage_abs_mean": float(np.abs(advantages).mean()) if len(advantages) else 0.0,
            "zero_variance_groups": float(np.mean(zero_groups)),
            "rollouts": len(rollouts),
            "tokens_generated": spent.cost.tokens_generated,
            "tokens_trained": update["tokens"],
            "seconds": finished - started,
            "seconds_rollouts": collected - started,
            "seconds_credit": credited - collected,
            "seconds_update": finished - credited,
            **estimator_counts(
                [g.rollouts[0].info.get("credit_estimator") for g in groups if g.rollouts], config.credit
            ),
            **self.method.step_metrics(groups),
            **{k: v for k, v in update.items() if k != "tokens"},
        }
        return metrics, groups

    def evaluate(self) -> float:
        """Held-out accuracy: ``eval_samples`` sampled answers per held-out problem, all in one batched call,
        with seeds that do not depend on the step (a paired comparison across steps and runs)."""
        if not self.held_out:
            return float("nan")
        self.on_phase("evaluating held-out")
        pairs = [(i, j) for i in range(len(self.held_out)) for j in range(self.config.eval_samples)]
        prompts = [self.sampler.prompt_ids(self.held_out[i]) for i, _ in pairs]
        seeds = [derived_seed(self.config.seed, "eval", i, j) for i, j in pairs]
        self.model.eval()
        generations = self.policy.sample(prompts, seeds, self.sampler.sampling(self.held_out)).generations
        rewards = [reward(g.text, self.held_out[i].answer) for (i, _), g in zip(pairs, generations, strict=True)]
        return float(np.mean(rewards))

    def run(
        self,
        progress: Callable[[int, int], None] | None = None,
        checkpoint_dir: Path | None = None,
        log: StepLog | None = None,
        start_accuracy: float | None = None,
    ) -> list[dict[str, Any]]:
        """Train until ``config.steps`` (from the current step), evaluating, checkpointing and logging.
        ``start_accuracy``: the step-0 held-out accuracy when already known (the same start model and seeds)."""
        history = []
        if self.step == 0 and self.config.eval_every:
            accuracy = self.evaluate() if start_accuracy is None else start_accuracy
            metrics = {"step": 0, "held_out_accuracy": accuracy}
            history.append(metrics)
            if log:
                log(metrics, [])
        while self.step < self.config.steps:
            metrics, groups = self.train_step()
            keep = self.config.keep_rollouts_every and self.step % self.config.keep_rollouts_every == 0
            if self.config.eval_every and (self.step % self.config.eval_every == 0 or self.step == self.config.steps):
                try:
                    metrics["held_out_accuracy"] = self.evaluate()
                except BaseException:  # stopped while evaluating: the step itself is done, so it is logged
                    if log:
                        log(metrics, groups if keep else [])
                    raise
            history.append(metrics)
            if log:
                log(metrics, groups if keep else [])
            if checkpoint_dir and self.config.checkpoint_every and self.step % self.config.checkpoint_every == 0:
                self.save(checkpoint_dir / f"step_{self.step:04d}")
            if progress:
                progress(self.step, self.config.steps)
        return history

    def save(self, path: Path) -> Path:
        """Write the checkpoint beside ``path`` and rename it into place, so a process killed mid-save leaves
        the previous checkpoint as the latest whole one."""
        with atomic_directory(path) as partial:
            torch.save(self.learner.state(), partial / "state.pt")
            (partial / "trainer.json").write_text(
                json.dumps(
                    {"step": self.step, "run_id": self.run_id, "config": asdict(self.config)}, indent=1, default=list
                )
            )
        return path

    def load(self, path: Path) -> None:
        meta = json.loads((path / "trainer.json").read_text())
        self.learner.load_state(torch.load(path / "state.pt", weights_only=True))
        self.step = int(meta["step"])


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM until the block ends (they arrive then): a policy update cut halfway would leave
    weights and optimizer moments of two different steps, and no checkpoint could be saved from them."""
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def latest_checkpoint(directory: Path) -> Path | None:
    checkpoints = sorted(p for p in directory.glob("step_*") if p.suffix != ".partial") if directory.is_dir() else []
    return checkpoints[-1] if checkpoints else None
