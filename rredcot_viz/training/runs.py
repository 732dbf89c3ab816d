"""Training runs as stored objects: start or resume a run, log every step's metrics and kept rollouts to the
store, checkpoint under the data folder. Used by ``python -m rredcot_viz train`` and the Train page."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from rredcot_viz.errors import ConfigError
from rredcot_viz.jobs import Cancelled
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.paths import data_dir
from rredcot_viz.training.config import TrainConfig, stored_train_config
from rredcot_viz.training.rollouts import Group
from rredcot_viz.training.task import Problem, builtin_split
from rredcot_viz.training.trainer import Trainer, latest_checkpoint


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
    conflicts = {k: v for k, v in overrides.items() if k != "steps" and getattr(config, k) != v}
    if conflicts:
        stored = ", ".join(f"{k}={getattr(config, k)!r} (asked {v!r})" for k, v in conflicts.items())
        raise ConfigError(
            f"run {run_id} was started with {stored}; a resumed run continues as it was started: drop those "
            "options, or start a new run"
        )
    return replace(config, steps=overrides.get("steps", config.steps))


def run_training(
    base: LanguageModel,
    config: TrainConfig,
    store: Any | None = None,
    problems: tuple[list[Problem], list[Problem]] | None = None,
    run_id: str | None = None,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
    on_log: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """Train (or resume ``run_id`` from its last checkpoint, with its stored ``config``: see ``resumed_config``)
    and log to ``store``; returns (run_id, history)."""
    train, held_out = problems or default_problems(config)
    if resume:
        if run_id is None:
            raise ConfigError("resuming needs the run id")
        saved, checkpoint = stored_config(run_id)
        if replace(config, steps=saved.steps) != saved:
            raise ConfigError(f"run {run_id} was started with other settings; resume it with resumed_config()")
    run_id = run_id or new_run_id(config)
    trainer = Trainer(base, config, train, held_out, run_id=run_id)
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
    except BaseException:
        status = "stopped"
        raise
    finally:
        if store is not None:
            store.finish_run(run_id, status, {"steps": trainer.step}, {})
