"""The training use cases the Train page and the ``train`` command share: start or resume a run (its config,
metrics and kept rollouts logged to the store, checkpoints under the data folder), list stored runs, load a
run's trained policy, and compare its value curves with the base model's on held-out traces."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rredcot_viz.engine.analyzer import AnalysisResult, Analyzer
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators import estimators
from rredcot_viz.estimators.base import DEFAULT_ESTIMATOR
from rredcot_viz.jobs import Cancelled
from rredcot_viz.model.core import ProgressFn
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.paths import data_dir
from rredcot_viz.segmenters import DEFAULT_SEGMENTER, segmenters
from rredcot_viz.settings import setting_value
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training.config import TrainConfig
from rredcot_viz.training.presets import stored_train_config
from rredcot_viz.training.rollouts import Group
from rredcot_viz.training.sampler import RolloutSampler, derived_seed, problem_prompt
from rredcot_viz.training.task import Problem, builtin_split, reward
from rredcot_viz.training.trainer import Trainer, latest_checkpoint

if TYPE_CHECKING:
    from rredcot_viz.store import Store


def checkpoint_root(run_id: str) -> Path:
    return data_dir() / "checkpoints" / run_id


def new_run_id(config: TrainConfig) -> str:
    return f"train-{config.method}-s{config.seed}-{uuid.uuid4().hex[:6]}"


def default_problems(config: TrainConfig) -> tuple[list[Problem], list[Problem]]:
    return builtin_split(train=200, held_out=config.eval_problems, seed=0)


def stored_config(run_id: str) -> tuple[TrainConfig, Path]:
    """The config a run was started with and its last checkpoint (the state a resume continues from)."""
    checkpoint = latest_checkpoint(checkpoint_root(run_id))
    if checkpoint is None:
        raise ConfigError(f"run {run_id} has no checkpoint under {checkpoint_root(run_id)}; start it again")
    saved = json.loads((checkpoint / "trainer.json").read_text())["config"]
    return stored_train_config(saved), checkpoint


def resumed_config(run_id: str, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """The run's stored config, which wins: an override that changes anything but ``steps`` (train longer)
    is refused with the stored value, so a resumed run is the run that was started."""
    config, _ = stored_config(run_id)
    overrides = dict(overrides or {})
    conflicts = {k: v for k, v in overrides.items() if k != "steps" and setting_value(config, k) != v}
    if conflicts:
        stored = ", ".join(f"{k}={setting_value(config, k)!r} (asked {v!r})" for k, v in conflicts.items())
        raise ConfigError(
            f"run {run_id} was started with {stored}; a resumed run continues as it was started: drop those "
            "options, or start a new run"
        )
    return replace(config, steps=overrides.get("steps", config.steps))


def run_training(
    base: LanguageModel,
    config: TrainConfig,
    store: Store | None = None,
    problems: tuple[list[Problem], list[Problem]] | None = None,
    run_id: str | None = None,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
    on_log: Callable[[dict[str, Any]], None] | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """Train (or resume ``run_id`` from its last checkpoint, with its stored ``config``: see ``resumed_config``)
    and log to ``store``; ``on_phase`` hears what the loop does now ("evaluating held-out"); returns (run_id,
    history)."""
    train, held_out = problems or default_problems(config)
    if resume:
        if run_id is None:
            raise ConfigError("resuming needs the run id")
        saved, checkpoint = stored_config(run_id)
        if replace(config, steps=saved.steps) != saved:
            raise ConfigError(f"run {run_id} was started with other settings; resume it with resumed_config()")
    run_id = run_id or new_run_id(config)
    trainer = Trainer(base, config, train, held_out, run_id=run_id)
    if on_phase is not None:
        trainer.on_phase = on_phase
    if resume:
        trainer.load(checkpoint)
    if store is not None and not resume:
        store.put_run(
            run_id,
            "train",
            {
                "name": base.name,
                "fingerprint": base.fingerprint,
                "quantization": base.quantization,
                "dtype": base.dtype,
            },
            asdict(config),
            config.seed,
        )

    def log(metrics: dict[str, Any], groups: list[Group]) -> None:
        if store is not None:
            store.put_train_metrics(run_id, metrics["step"], metrics)
            if groups:
                store.put_train_rollouts(
                    run_id,
                    metrics["step"],
                    [
                        {
                            **r.record(g.name),
                            "problem": g.problem_index,
                            "question": trainer.train_problems[g.problem_index].question,
                            "parent": g.parent.record("parent") if g.parent is not None else None,
                        }
                        for g in groups
                        for r in g.rollouts
                    ],
                )
        if on_log:
            on_log(metrics)

    status = "failed"
    try:
        history = trainer.run(progress, checkpoint_root(run_id), log)
        trainer.save(checkpoint_root(run_id) / f"step_{trainer.step:04d}")
        status = "done"
        return run_id, history
    except Cancelled:  # raised by the progress callback between steps: the state is whole, keep it
        trainer.save(checkpoint_root(run_id) / f"step_{trainer.step:04d}")
        status = "stopped"
        raise
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM in the CLI (which raises it): keep the finished steps, as Stop
        if trainer.step > 0:  # the update is never cut halfway (trainer.signals_deferred): the state is whole
            trainer.save(checkpoint_root(run_id) / f"step_{trainer.step:04d}")
        status = "stopped"
        raise
    finally:
        if store is not None:
            store.finish_run(run_id, status, {"steps": trainer.step}, {})


def training_runs(store: Store) -> pd.DataFrame:
    """Stored training runs, newest first: id, method, status, base-model fingerprint, steps logged and planned."""
    return store.training_runs()


def stored_run(store: Store, run_id: str) -> tuple[TrainConfig, str]:
    """A stored training run's config and the fingerprint of the base model it was trained on."""
    stored = store.train_run(run_id)
    if stored is None:
        raise ConfigError(f"no training run {run_id!r} in the store")
    settings, fingerprint = stored
    return stored_train_config(settings), fingerprint


def trained_policy(base: LanguageModel, store: Store, run_id: str) -> tuple[LanguageModel, int]:
    """The policy of ``run_id``'s last checkpoint (the base model plus its adapter) and that step."""
    config, fingerprint = stored_run(store, run_id)
    if fingerprint != base.fingerprint:
        raise ConfigError(
            f"run {run_id} was trained on another base model ({fingerprint[:12]}); pick that model in the sidebar"
        )
    checkpoint = latest_checkpoint(checkpoint_root(run_id))
    if checkpoint is None:
        raise ConfigError(f"run {run_id} has no checkpoint under {checkpoint_root(run_id)} yet")
    train, held_out = default_problems(config)
    trainer = Trainer(base, replace(config, kl_beta=0.0), train, held_out, run_id=run_id)
    trainer.load(checkpoint)
    trainer.model.eval()
    trainer.policy.fingerprint = f"{base.fingerprint}:{run_id}:{trainer.step}"  # its own cache entries
    return trainer.policy, trainer.step


def held_out_traces(base: LanguageModel, config: TrainConfig, limit: int = 4, seed: int = 0) -> list[Trace]:
    """Traces of the base model on the run's first held-out problems, sampled (fixed seeds) from the trainer's
    own prompt, which the analysis then uses verbatim; the worked solutions are the v-hat references."""
    _, held_out = default_problems(config)
    problems = held_out[:limit]
    prompts = [problem_prompt(base, p) for p in problems]
    sampling = RolloutSampler(base, config).sampling(problems)
    generations = base.sample(
        [base.encode_prompt(p) for p in prompts],
        [derived_seed(seed, "before-after", i) for i in range(len(prompts))],
        sampling,
    ).generations
    return [
        Trace(
            p.question,
            g.text,
            reference_answer=p.answer,
            reference_solution=p.solution,
            correct=bool(reward(g.text, p.answer)),
            prompt=prompt,
            source="builtin-task",
            trace_id=f"held-out-{i}",
        )
        for i, (p, prompt, g) in enumerate(zip(problems, prompts, generations, strict=True))
    ]


def value_shift(base_values: np.ndarray, trained_values: np.ndarray) -> dict[str, Any]:
    """Trained minus base value per state, and where the two curves differ most."""
    base_values, trained_values = np.asarray(base_values, float), np.asarray(trained_values, float)
    if base_values.shape != trained_values.shape:
        raise ConfigError("both curves must come from the same segmentation of the same trace")
    delta = trained_values - base_values
    return {"delta": delta, "largest_state": int(np.argmax(np.abs(delta))) + 1, "mean_abs": float(np.abs(delta).mean())}


@dataclass
class ValueChange:
    """One trace's value curve under the base model and under a trained checkpoint, on the same segments."""

    before: AnalysisResult
    after: AnalysisResult
    shift: dict[str, Any]  # ``value_shift``: trained minus base per state, the largest and the mean |shift|


def value_change(base: Analyzer, trained: Analyzer, trace: Trace, progress: ProgressFn | None = None) -> ValueChange:
    """RREDCoT's values of ``trace`` (the default segmenter and estimator) under both models: the
    text is the same, so only the values the model assigns to it can move."""
    segmenter, estimator = segmenters.get(DEFAULT_SEGMENTER)(), estimators.get(DEFAULT_ESTIMATOR)()
    before = base.analyze(trace, segmenter, estimator, progress)
    after = trained.analyze(trace, segmenter, estimator, progress)
    return ValueChange(before, after, value_shift(before.values.values, after.values.values))
