"""Looking at stored training runs: the run list, the trained policy of a run's last checkpoint, and how its
value curves differ from the base model's on held-out traces (the Train page's before/after view)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from rredcot_viz.errors import ConfigError
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.traces.trace import Trace
from rredcot_viz.training.config import TrainConfig, stored_train_config
from rredcot_viz.training.runs import checkpoint_root, default_problems
from rredcot_viz.training.sampler import RolloutSampler, derived_seed, problem_prompt
from rredcot_viz.training.task import reward
from rredcot_viz.training.trainer import Trainer, latest_checkpoint


def training_runs(store: Any) -> pd.DataFrame:
    """Stored training runs, newest first: id, method, status, steps logged, last held-out accuracy."""
    runs = store.query(
        "SELECT r.run_id, json_extract_string(r.settings, '$.method') AS method, r.status, r.created_at, "
        "r.settings, r.model_fingerprint, max(m.step) AS steps_logged "
        "FROM runs r LEFT JOIN train_metrics m USING (run_id) "
        "WHERE r.kind = 'train' GROUP BY ALL ORDER BY r.created_at DESC"
    )
    runs["steps_planned"] = [json.loads(s).get("steps") for s in runs.pop("settings")]
    return runs


def stored_run(store: Any, run_id: str) -> tuple[TrainConfig, str]:
    """A stored training run's config and the fingerprint of the base model it was trained on."""
    rows = store.query("SELECT settings, model_fingerprint FROM runs WHERE run_id = ? AND kind = 'train'", [run_id])
    if rows.empty:
        raise ConfigError(f"no training run {run_id!r} in the store")
    config = stored_train_config(json.loads(rows["settings"][0]))
    return config, str(rows["model_fingerprint"][0])


def trained_policy(base: LanguageModel, store: Any, run_id: str) -> tuple[LanguageModel, int]:
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
