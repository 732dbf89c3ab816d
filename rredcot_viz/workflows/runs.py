"""RL runs, imported (TRL completion logs, verl rollout dumps) or trained here, seen by step and prompt: the
reward and credit per step, the groups of one prompt side by side, and where RREDCoT's credit and GRPO's
advantage disagree.

An imported run is stored like a trained one: its traces in a collection of their own (once per text), and one
row per completion in ``train_rollouts`` (step, the prompt's index in the run, reward, the GRPO advantage it
got, its trace), so identical completions are all kept. The GRPO advantage is the one the run logged (TRL), or
GRPO's recomputed from the group's rewards where the logs have none (verl: unbiased std, as verl divides;
trained here: the trainer's population std).

RREDCoT's credit of a rollout is its sigma, from the trainer (a method that computed credit) or from a dataset
analysis of the run's traces (``score_rollouts``), coupled with the ``value_baseline`` rule the trainer uses
(``estimators.coupling.value_baseline``: each segment's advantage from the rollout's own sigma and its group's
outcomes). It is compared with the GRPO advantage segment by segment: a group's disagreement is the mean
|RREDCoT advantage - GRPO advantage| per credited character (both in units of the group's reward std). Under
``value_baseline`` the signs agree by construction on 0/1 rewards (a correct rollout is never pushed down, a
failed one never up), so the disagreement is where the credit sits, not its direction; the share of
characters of opposite sign is kept too (it is not zero when the run's reward is not the 0/1 outcome).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rredcot_viz.engine.analyzer import Analyzer
from rredcot_viz.errors import ConfigError
from rredcot_viz.estimators.base import ValueEstimator
from rredcot_viz.estimators.coupling import ZERO_STD, grpo_advantages
from rredcot_viz.segmenters.base import Segmenter
from rredcot_viz.store.traces import StoredTraces
from rredcot_viz.traces.importers import ImportReport
from rredcot_viz.traces.importers.rollouts import ROLLOUT_KEY
from rredcot_viz.traces.trace import Trace
from rredcot_viz.workflows.analyze import TraceCheck, check_traces
from rredcot_viz.workflows.dataset import analyze_dataset, save_run
from rredcot_viz.workflows.imports import run_label, store_traces
from rredcot_viz.workflows.rollout_groups import RolloutGroup, RunRollout, couple, credit_gap

if TYPE_CHECKING:
    from rredcot_viz.store import Store

IMPORTED_KIND = "rollouts"
"""The ``runs.kind`` of an imported run (a trained one is ``train``)."""


@dataclass(frozen=True)
class StoredRun:
    run_id: str
    label: str
    collection: str
    rollouts: int
    steps: int
    prompts: int


# ---------------------------------------------------------------------------------------------- importing
def store_import(
    store: Store,
    report: ImportReport,
    collection: str | None = None,
    label: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[StoredTraces, StoredRun | None]:
    """Store an import's traces (``imports.store_traces``) and, when they are an RL run's completions, the run
    (``store_run``). Returns what the store did with the traces and the run (None: not a run)."""
    stored = store_traces(store, report, collection, label, progress)
    return stored, store_run(store, report, stored.collection, label)


def store_run(store: Store, report: ImportReport, collection: str, label: str | None = None) -> StoredRun | None:
    """Store an imported RL run whose traces are in ``collection``: one rollout row per completion, the per-step
    reward and advantage figures (None: the traces are not a run). Importing the same files again gives the same
    run id and replaces it."""
    rollouts = [t for t in report.traces if ROLLOUT_KEY in t.metadata]
    if not rollouts:
        return None
    label = label or run_label(report.path)
    prompts: dict[str, int] = {}
    by_step: dict[int, list[dict[str, Any]]] = {}
    for trace in rollouts:
        meta = trace.metadata[ROLLOUT_KEY]
        prompt = prompts.setdefault(meta["prompt"], len(prompts))
        by_step.setdefault(int(meta["step"]), []).append(
            {
                "group": "base",
                "problem": prompt,
                "question": trace.question,
                "text": trace.cot,
                "reward": _reward(meta.get("reward"), trace.outcome),
                "outcome": trace.outcome,
                "rewards": meta.get("rewards") or {},
                "advantage": meta.get("advantage"),
                "trace_hash": trace.content_hash,
            }
        )
    for records in by_step.values():
        _fill_grpo_advantages(records)
    digest = hashlib.sha256(json.dumps(sorted(by_step.items()), default=str).encode()).hexdigest()[:10]
    run_id = f"rollouts-{re.sub(r'[^A-Za-z0-9_.-]+', '-', label)[:40]}-{digest}"
    settings = {"label": label, "format": report.format, "source": report.path, "collection": collection}
    store.put_run(run_id, IMPORTED_KIND, {}, settings, None)
    for step, records in sorted(by_step.items()):
        store.put_train_rollouts(run_id, step, records)
        store.put_train_metrics(run_id, step, _step_metrics(records))
    summary = {"label": label, "rollouts": len(rollouts), "steps": len(by_step), "prompts": len(prompts)}
    store.finish_run(run_id, "done", summary, {})
    return StoredRun(run_id, label, collection, len(rollouts), len(by_step), len(prompts))


def _reward(reward: float | None, outcome: float | None) -> float:
    """The reward GRPO saw; an unscorable completion (no reward) counts as its outcome, else 0."""
    if reward is not None:
        return float(reward)
    return float(outcome) if outcome is not None else 0.0


def _fill_grpo_advantages(records: list[dict[str, Any]]) -> None:
    """Keep the advantage a run logged; recompute GRPO's (unbiased std, verl's form) for a step that has none."""
    groups: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(record["problem"], []).append(record)
    for members in groups.values():
        if all(r["advantage"] is not None for r in members):
            for r in members:
                r["advantage_source"] = "logged"
            continue
        recomputed = grpo_advantages(np.array([r["reward"] for r in members]), "unbiased")
        for r, value in zip(members, recomputed, strict=True):
            r["advantage"], r["advantage_source"] = float(value), "recomputed"


def _step_metrics(records: list[dict[str, Any]]) -> dict[str, float]:
    rewards = np.array([r["reward"] for r in records], dtype=float)
    groups: dict[int, list[float]] = {}
    for record in records:
        groups.setdefault(record["problem"], []).append(record["reward"])
    flat = [np.std(g) < ZERO_STD for g in groups.values()]
    return {
        "reward_mean": float(rewards.mean()),
        "advantage_abs_mean": float(np.mean([abs(r["advantage"]) for r in records])),
        "zero_variance_groups": float(np.mean(flat)),
        "rollouts": len(records),
    }


# ---------------------------------------------------------------------------------------------- reading
def rollout_runs(store: Store) -> pd.DataFrame:
    """Runs with rollouts to look at (imported or trained here), newest first."""
    return store.rollout_runs()


def run_traces(store: Store, run_id: str, step: int | None = None) -> list[Trace]:
    """The distinct traces of an imported run's rollouts (of one step when given), in rollout order."""
    hashes = dict.fromkeys(p["trace_hash"] for s, p in store.run_rollouts(run_id) if step in (None, s))
    traces = [store.trace(h) for h in hashes if h]
    return [t for t in traces if t is not None]


def credit_analyses(store: Store, run_id: str) -> pd.DataFrame:
    """The dataset analyses that scored any of an imported run's traces, newest first, with their coverage."""
    hashes = list(dict.fromkeys(p["trace_hash"] for _, p in store.run_rollouts(run_id) if p.get("trace_hash")))
    return store.dataset_coverage(hashes) if hashes else pd.DataFrame()


def load_run(store: Store, run_id: str, analysis: str | None = None) -> list[RolloutGroup]:
    """A run's rollouts as groups (step, prompt, group name), each rollout with its GRPO advantage and, where
    known, its RREDCoT credit: the trainer's sigma, or the sigma of dataset analysis ``analysis``."""
    rows = store.run_rollouts(run_id)
    if not rows:
        raise ConfigError(f"no run {run_id!r} with stored rollouts in the store")
    analysed = _analysed(store, analysis) if analysis else {}
    groups: dict[tuple[int, int, str], RolloutGroup] = {}
    for step, payload in rows:
        name = str(payload.get("group") or "base")
        prompt = int(payload.get("problem", 0))
        key = (step, prompt, name)
        group = groups.setdefault(key, RolloutGroup(step, prompt, name, str(payload.get("question", "")), []))
        rollout = RunRollout(
            step=step,
            prompt=prompt,
            group=name,
            index=len(group.rollouts),
            question=group.question,
            text=str(payload.get("text", "")),
            reward=float(payload.get("reward") or 0.0),
            outcome=payload.get("outcome", payload.get("reward")),
            grpo_advantage=float("nan") if payload.get("advantage") is None else float(payload["advantage"]),
            trace_hash=payload.get("trace_hash"),
        )
        credit = analysed.get(rollout.trace_hash or "") if rollout.trace_hash else _trained_credit(payload)
        if credit is not None:
            rollout.sigma, rollout.segment_chars = credit
        group.rollouts.append(rollout)
    for group in groups.values():
        couple(group)
    return sorted(groups.values(), key=lambda g: (g.step, g.prompt, g.name))


def _analysed(store: Store, analysis: str) -> dict[str, tuple[list[float], list[tuple[int, int]]]]:
    """Sigma and segment spans by trace hash from a dataset analysis (records without spans are skipped)."""
    found = {}
    for record in store.dataset_records(analysis):
        if record.get("sigma") and record.get("segment_chars") and not record.get("error"):
            found[record["trace_hash"]] = (list(record["sigma"]), [tuple(s) for s in record["segment_chars"]])
    return found


def _trained_credit(payload: dict[str, Any]) -> tuple[list[float], list[tuple[int, int]]] | None:
    sigma, spans = payload.get("sigma"), payload.get("segment_chars")
    if not sigma or not spans or len(sigma) != len(spans):
        return None
    return list(sigma), [tuple(s) for s in spans]


# ---------------------------------------------------------------------------------------------- views
def step_table(groups: list[RolloutGroup]) -> pd.DataFrame:
    """Reward and credit per step: mean reward, share of correct rollouts, zero-variance groups, mean |GRPO
    advantage|, and over the credited rollouts mean |RREDCoT advantage| per character and the disagreement."""
    rows = []
    for step in sorted({g.step for g in groups}):
        members = [g for g in groups if g.step == step]
        rollouts = [r for g in members for r in g.rollouts]
        outcomes = [r.outcome for r in rollouts if r.outcome is not None]
        disagreement, opposed = credit_gap(rollouts)
        credited = [piece for r in rollouts for piece in r.credited_pieces()]
        chars = sum(n for n, _ in credited)
        rows.append(
            {
                "step": step,
                "rollouts": len(rollouts),
                "prompts": len({g.prompt for g in members}),
                "reward_mean": float(np.mean([r.reward for r in rollouts])),
                "correct_share": float(np.mean(outcomes)) if outcomes else float("nan"),
                "zero_variance_groups": float(np.mean([np.std(g.rewards) < ZERO_STD for g in members])),
                "grpo_abs_mean": float(np.mean([abs(r.grpo_advantage) for r in rollouts])),
                "credited": sum(r.rredcot is not None for r in rollouts),
                "rredcot_abs_mean": sum(n * abs(a) for n, a in credited) / chars if chars else float("nan"),
                "disagreement": float("nan") if disagreement is None else disagreement,
                "opposed_share": float("nan") if opposed is None else opposed,
            }
        )
    return pd.DataFrame(rows)


def disagreeing_groups(groups: list[RolloutGroup], limit: int = 10) -> list[RolloutGroup]:
    """The groups where RREDCoT and GRPO disagree most (``RolloutGroup.disagreement``), largest first."""
    scored = [g for g in groups if g.disagreement is not None]
    return sorted(scored, key=lambda g: (-(g.disagreement or 0.0), g.step, g.prompt))[:limit]


def groups_frame(groups: list[RolloutGroup], preview: int = 80) -> pd.DataFrame:
    """One row per group, for a table to pick from."""
    return pd.DataFrame(
        [
            {
                "step": g.step,
                "prompt": g.prompt,
                "group": g.name,
                "question": " ".join(g.question.split())[:preview],
                "rollouts": len(g.rollouts),
                "reward mean": float(g.rewards.mean()),
                "reward std": float(g.rewards.std()),
                "credited": g.credited,
                "disagreement": g.disagreement,
                "opposed share": g.opposed,
            }
            for g in groups
        ]
    )


def prompt_groups(groups: list[RolloutGroup], prompt: int) -> list[RolloutGroup]:
    """Every group of one prompt, by step: the same question across training."""
    return [g for g in groups if g.prompt == prompt]


# ---------------------------------------------------------------------------------------------- scoring
def scoring_check(store: Store, run_id: str, estimator: ValueEstimator, step: int | None = None) -> TraceCheck:
    """Which of an imported run's distinct traces (of one step when given) ``estimator`` can run on, from their
    fields alone: what a scoring job checks before it starts."""
    traces = run_traces(store, run_id, step)
    if not traces:
        raise ConfigError(f"run {run_id!r} has no stored traces{'' if step is None else f' at step {step}'}")
    return check_traces(traces, estimator)


def score_rollouts(
    analyzer: Analyzer,
    store: Store,
    run_id: str,
    segmenter: Segmenter,
    estimator: ValueEstimator,
    step: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """Analyse an imported run's distinct traces (of one step when given) that ``estimator`` can run on and store
    the analysis as a dataset run (its sigma is the run view's RREDCoT credit); returns the dataset run's id.
    Refused before any model work when the estimator can run on none of them (``scoring_check``)."""
    traces = scoring_check(store, run_id, estimator, step).require()
    records = analyze_dataset(analyzer, traces, segmenter, estimator, progress=progress)
    label = f"{run_id}" + ("" if step is None else f" step {step}")
    return save_run(store, analyzer.lm.info(), segmenter, estimator, records, label)
