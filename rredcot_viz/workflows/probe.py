"""Fitting and evaluating a value probe (docs/method.md §6.1), for the CLI's ``probe fit`` / ``probe eval``, the
Compare page's panel and ``bench/probe.py``.

Labels are the model's own Monte Carlo success rates at the segment states of a trace set: drawn now (the ``mc``
estimator, its rollouts stored), or read from a compare-bench file that holds every rollout's outcome
(``mc_outcomes``: one string per non-final state, "1" correct, "0" wrong, "t" truncated, i.e. wrong). Features are
the hidden states of every layer at each state's last token (one forward pass per trace). Problems are split
into fit and held-out before anything is fitted; layer and L2 are chosen by cross-validation grouped by problem
on the fit split; the held-out figures are what the probe file records.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rredcot_viz.attribution.agreement import pair_order
from rredcot_viz.engine.analyzer import Analyzer
from rredcot_viz.errors import ConfigError, MissingProbeError
from rredcot_viz.estimators.montecarlo import MonteCarloEstimator
from rredcot_viz.estimators.redistribution import redistribute
from rredcot_viz.estimators.value_probe import (
    ValueProbe,
    brier,
    data_hash,
    fit_probe,
    precision_of,
    probe_path,
    select,
    today,
)
from rredcot_viz.segmenters.base import Segmenter
from rredcot_viz.traces.trace import Trace

if TYPE_CHECKING:
    from rredcot_viz.model.lm import LanguageModel


@dataclass
class Labelled:
    """One trace's segment states with their Monte Carlo success rates (non-final states; s_{K+1} is R)."""

    trace: Trace
    problem: str  # the group cross-validation and the split keep together
    prefixes: tuple[int, ...]  # the K+1 state prefixes (response tokens)
    labels: np.ndarray  # (K,) success rate at s_1..s_K
    rollouts: int  # per state

    @property
    def values(self) -> np.ndarray:
        """The MC value curve V_1..V_K, then R."""
        return np.append(self.labels, self.trace.outcome)


@dataclass
class ProbeData:
    """Labelled traces and their hidden states: ``features[layer]`` is (states, D), states in trace order."""

    examples: list[Labelled]
    features: np.ndarray  # (L+1, N, D)
    source: str  # where the labels came from
    rows: list[tuple[int, int]] = field(default_factory=list)  # (example index, state index) per feature row

    def subset(self, keep: Sequence[int]) -> ProbeData:
        keep_set = set(keep)
        mask = np.array([example in keep_set for example, _ in self.rows], dtype=bool)
        renumber = {old: new for new, old in enumerate(sorted(keep_set))}
        rows = [(renumber[e], s) for e, s in self.rows if e in keep_set]
        examples = [self.examples[i] for i in sorted(keep_set)]
        return ProbeData(examples, self.features[:, mask], self.source, rows)

    @property
    def y(self) -> np.ndarray:
        return np.array([self.examples[e].labels[s] for e, s in self.rows])

    @property
    def groups(self) -> list[str]:
        return [self.examples[e].problem for e, _ in self.rows]


def problem_split(problems: Sequence[str], heldout: float, seed: int) -> dict[str, str]:
    """Each problem's split ("fit" or "heldout"), drawn before anything is fitted: problems ordered by a hash of
    (seed, problem), the first ``heldout`` share held out (at least one, and at least one left to fit)."""
    if not 0 < heldout < 1:
        raise ConfigError(f"the held-out share must lie in (0, 1), got {heldout}")
    unique = sorted(set(problems), key=lambda p: hashlib.sha256(f"{seed}:{p}".encode()).hexdigest())
    count = min(max(1, round(heldout * len(unique))), len(unique) - 1)
    return {problem: "heldout" if rank < count else "fit" for rank, problem in enumerate(unique)}


def bench_traces(source: str | Path | dict) -> list[tuple[Trace, str, list[str], int]]:
    """(trace, problem, per-state outcome strings, K) of each scored trace of a compare-bench file (or its
    parsed content)."""
    from rredcot_viz.traces.answers import extract_answer

    saved = source if isinstance(source, dict) else json.loads(Path(source).read_text())
    drawn = {d["trace"]: d for d in saved.get("drawn", [])}
    found = []
    for record in saved.get("traces", []):
        outcomes = record.get("mc_outcomes") or []
        source = drawn.get(record["trace"])
        if not outcomes or source is None:
            continue
        trace = Trace(
            question=source["question"],
            cot=record["cot"],
            prompt=source.get("prompt"),
            reference_answer=record.get("reference_answer"),
            correct=bool(record["outcome"]),
            final_answer=extract_answer(record["cot"]),
            trace_id=record["trace"],
        )
        found.append((trace, str(record["problem"]), outcomes, int(record["k"])))
    if not found:
        where = "the file" if isinstance(source, dict) else source
        raise MissingProbeError(f"{where} holds no scored trace with per-rollout outcomes (mc_outcomes)")
    return found


def labels_from_bench(
    analyzer: Analyzer, source: str | Path | dict, segmenter: Segmenter, rollouts: int | None = None
) -> list[Labelled]:
    """Labels from a compare-bench file, on the states ``segmenter`` cuts now (which must be the bench's K);
    ``rollouts``: use each state's first n outcomes only (the bench's reference is its first 16)."""
    examples = []
    for trace, problem, outcomes, k in bench_traces(source):
        segmentation = analyzer.segment(trace, segmenter)
        if segmentation.k != k or len(outcomes) != k:
            raise MissingProbeError(
                f"{trace.trace_id}: {segmenter.name} cuts {segmentation.k} segments, the file's labels are for {k}: "
                "segment with the bench's segmenter and K (bench/compare.py: fixed_tokens, K = 6)"
            )
        used = [o[:rollouts] if rollouts else o for o in outcomes]
        labels = np.array([o.count("1") / len(o) for o in used])
        examples.append(Labelled(trace, problem, segmentation.state_prefixes, labels, min(map(len, used))))
    return examples


def labels_from_mc(
    analyzer: Analyzer,
    traces: Sequence[Trace],
    segmenter: Segmenter,
    mc_options: dict[str, Any],
    progress: Callable[[int, int], None] | None = None,
) -> list[Labelled]:
    """Labels drawn now by the ``mc`` estimator at every segment state (its rollouts go to the analyzer's cache,
    the store when it has one); a trace's problem is its question."""
    mc = MonteCarloEstimator(**mc_options)
    examples = []
    for done, trace in enumerate(traces, start=1):
        result = analyzer.analyze(trace, segmenter, mc)
        labels = np.asarray(result.values.values[:-1], dtype=float)
        examples.append(Labelled(trace, trace.question, result.segmentation.state_prefixes, labels, mc.config.rollouts))
        if progress:
            progress(done, len(traces))
    return examples


def hidden_features(
    analyzer: Analyzer, examples: list[Labelled], source: str, progress: Callable[[int, int], None] | None = None
) -> ProbeData:
    """Every layer's hidden state at each non-final state of each example (one forward pass per trace)."""
    blocks, rows = [], []
    for index, example in enumerate(examples):
        blocks.append(analyzer.context(example.trace).hidden_states(example.prefixes[:-1]))
        rows += [(index, state) for state in range(len(example.labels))]
        if progress:
            progress(index + 1, len(examples))
    return ProbeData(examples, np.concatenate(blocks, axis=1), source, rows)


def fit(data: ProbeData, lm: LanguageModel, heldout: float = 0.3, seed: int = 0, folds: int = 5) -> ValueProbe:
    """Split problems, choose layer and L2 by grouped CV on the fit split, fit there, and record the held-out
    figures (``evaluate``) in the probe."""
    split = problem_split([e.problem for e in data.examples], heldout, seed)
    fit_rows = [i for i, e in enumerate(data.examples) if split[e.problem] == "fit"]
    held_rows = [i for i, e in enumerate(data.examples) if split[e.problem] == "heldout"]
    if not fit_rows:
        raise MissingProbeError("no problem fell in the fit split: give traces of more problems")
    train = data.subset(fit_rows)
    chosen = select(train.features, train.y, train.groups, folds=folds, seed=seed)
    hashes = [f"{e.trace.content_hash}:{','.join(f'{v:.4f}' for v in e.labels)}" for e in train.examples]
    probe = fit_probe(
        train.features[chosen.layer],
        train.y,
        chosen.l2,
        model=lm.name,
        fingerprint=lm.fingerprint,
        precision=precision_of(lm),
        layer=chosen.layer,
        training={
            "labels": data.source,
            "traces": len(train.examples),
            "states": len(train.y),
            "problems": len(set(train.groups)),
            "rollouts_per_state": min(e.rollouts for e in train.examples),
            "data_hash": data_hash(hashes),
            "trace_hashes": sorted(e.trace.content_hash for e in train.examples),
            "split_seed": seed,
            "heldout_share": heldout,
            "fit_problems": sorted(set(train.groups)),
        },
        date=today(),
    )
    probe.metrics = {"cv_brier": round(chosen.cv_brier, 4), "cv_folds": folds}
    if held_rows:
        probe.metrics |= {f"heldout_{k}": v for k, v in evaluate(probe, data.subset(held_rows)).items()}
    return probe


def evaluate(probe: ValueProbe, data: ProbeData) -> dict[str, float]:
    """Brier score against the MC labels and pairwise-order agreement of the probe's sigma with MC's sigma on
    non-final segments (pooled over traces), with the constant-0.5 and mean-label Brier for reference."""
    predicted = probe.predict(data.features[probe.layer])
    y = data.y
    agreeing = pairs = 0.0
    for index, example in enumerate(data.examples):
        mine = [predicted[r] for r, (e, _) in enumerate(data.rows) if e == index]
        a, n = pair_order(
            redistribute(np.append(mine, example.trace.outcome)), redistribute(example.values), final=False
        )
        agreeing, pairs = agreeing + a, pairs + n
    return {
        "states": float(len(y)),
        "problems": float(len(set(data.groups))),
        "brier": round(brier(predicted, y), 4),
        "brier_mean_label": round(brier(np.full_like(y, y.mean()), y), 4),
        "pairs": round(agreeing / pairs, 4) if pairs else float("nan"),
        "pair_count": pairs,
    }


def calibration(predicted: np.ndarray, y: np.ndarray, bins: int = 5) -> list[tuple[float, float, int, float]]:
    """(bin low, bin high, states, mean MC value) per equal-width bin of probe value."""
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(predicted, edges[1:-1]), 0, bins - 1)
    return [
        (float(edges[b]), float(edges[b + 1]), int((which == b).sum()),
         float(y[which == b].mean()) if (which == b).any() else float("nan"))
        for b in range(bins)
    ]  # fmt: skip


def save_probe(probe: ValueProbe, path: str | Path | None = None) -> Path:
    """Write ``probe`` (default: the data folder's file for its model and precision, which the estimator finds)."""
    return probe.save(Path(path) if path else probe_path(probe.model, probe.fingerprint, probe.precision))


def fit_from_traces(
    analyzer: Analyzer,
    traces: Sequence[Trace],
    segmenter: Segmenter,
    mc_options: dict[str, Any],
    heldout: float = 0.3,
    seed: int = 0,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[ValueProbe, Path]:
    """The whole fit from a trace set, as the app's job runs it: Monte Carlo labels (rollouts stored), hidden
    states, the grouped fit, the file written where the estimator finds it. ``progress(done, total, what)``."""
    say = progress or (lambda done, total, what: None)
    examples = labels_from_mc(analyzer, traces, segmenter, mc_options, lambda d, t: say(d, t, "Monte Carlo labels"))
    source = f"mc({mc_options.get('rollouts', '?')}) on {len(traces)} traces, {segmenter.name}"
    data = hidden_features(analyzer, examples, source, lambda d, t: say(d, t, "hidden states"))
    say(len(traces), len(traces), "fitting (grouped cross-validation)")
    probe = fit(data, analyzer.lm, heldout, seed, folds=min(5, len({e.problem for e in examples}) - 1 or 1))
    return probe, save_probe(probe)
