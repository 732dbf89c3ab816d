"""Comparing estimators and attributions on the same segments of one trace (ANCHORS.md gap 6).

Estimators contribute their redistributed rewards sigma (and their value curves), attributions their
per-segment scores phi; all share one segmentation, so their agreement is measured on the same units.
Every method's cost is kept next to its numbers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rredcot_viz.attribution import attributions
from rredcot_viz.attribution.agreement import agreement_matrix, metrics
from rredcot_viz.engine.analyzer import Analyzer
from rredcot_viz.engine.cache import content_key
from rredcot_viz.errors import UnknownNameError
from rredcot_viz.estimators import estimators
from rredcot_viz.model.lm import CallCost, ProgressFn
from rredcot_viz.segmenters.base import Segmentation, Segmenter
from rredcot_viz.settings import config_json
from rredcot_viz.traces.trace import Trace


@dataclass
class MethodResult:
    name: str
    kind: str  # "estimator" | "attribution"
    scores: np.ndarray  # (K,): sigma for estimators, phi for attributions
    values: np.ndarray | None = None  # (K+1,) state values (estimators only)
    intervals: dict[str, np.ndarray] = field(default_factory=dict)
    checks: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cost: CallCost = field(default_factory=CallCost)
    stderr: np.ndarray | None = None  # Shapley permutation sampling


@dataclass
class Comparison:
    trace: Trace
    segmentation: Segmentation
    methods: dict[str, MethodResult]

    def scores(self) -> dict[str, np.ndarray]:
        return {name: result.scores for name, result in self.methods.items()}

    def matrix(self, metric: str = "spearman") -> tuple[list[str], np.ndarray]:
        return agreement_matrix(self.scores(), metric)

    def rows(self, preview: int = 40) -> list[dict[str, Any]]:
        rows = []
        for segment in self.segmentation.segments:
            text = " ".join(segment.text.split())
            row: dict[str, Any] = {"segment": segment.index + 1, "text": text[:preview]}
            for name, result in self.methods.items():
                row[name] = float(result.scores[segment.index])
            rows.append(row)
        return rows


def attribute_cached(
    analyzer: Analyzer, trace: Trace, segmentation: Segmentation, attribution: Any, progress: ProgressFn | None
) -> MethodResult:
    """An attribution's scores, from the store when this (trace, model, method, settings, cuts) was seen."""
    context = analyzer.context(trace)
    key = content_key(
        "attribution",
        context.key,
        attribution.name,
        config_json(attribution.config),
        segmentation.cuts,
        segmentation.state_prefixes[-1],
    )
    stored = context.cache.result(context.key, key)
    if stored is not None:
        stderr = None if stored["stderr"] is None else np.array(stored["stderr"])
        values = np.array(stored["values"])
        return MethodResult(
            attribution.name, "attribution", values, None, {}, stored["checks"], stored["notes"], CallCost(), stderr
        )
    scores = attribution.attribute(context, segmentation, progress)
    payload = {
        "values": scores.values.tolist(),
        "stderr": None if scores.stderr is None else scores.stderr.tolist(),
        "checks": scores.checks,
        "notes": scores.notes,
    }
    context.cache.put_result(
        context.key,
        key,
        "attribution",
        attribution.name,
        json.loads(config_json(attribution.config)),
        payload,
        scores.cost.as_dict(),
    )
    return MethodResult(
        attribution.name,
        "attribution",
        scores.values,
        None,
        {},
        scores.checks,
        scores.notes,
        scores.cost,
        scores.stderr,
    )


CONTROLS = ("last_segment", "position", "random")


def control_scores(control: str, k: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """A control's per-segment scores: all credit on the last segment (the one that writes the answer),
    credit rising linearly with the segment index, or random normal draws (needs ``rng``)."""
    if control == "last_segment":
        return np.eye(k)[-1]
    if control == "position":
        return np.arange(1.0, k + 1)
    if control == "random":
        if rng is None:
            raise ValueError("the random control needs a seeded generator")
        return rng.standard_normal(k)
    raise UnknownNameError("control", control, list(CONTROLS))


def segment_agreement(a: np.ndarray, b: np.ndarray, metric: str = "spearman", *, final: bool = True) -> float:
    """``metric`` between two per-segment vectors over all segments, or without the final one
    (``final=False``: the segment that writes the answer, where every estimator jumps)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not final:
        a, b = a[:-1], b[:-1]
    return metrics.get(metric)(a, b)


def control_agreement(
    control: str,
    reference: np.ndarray,
    metric: str = "spearman",
    *,
    final: bool = True,
    draws: int = 100,
    seed: int = 0,
) -> float:
    """A control's agreement with ``reference``; the random control averages ``draws`` seeded draws."""
    k = len(reference)
    if control != "random":
        return segment_agreement(control_scores(control, k), reference, metric, final=final)
    rng = np.random.default_rng(seed)
    values = np.array(
        [segment_agreement(control_scores("random", k, rng), reference, metric, final=final) for _ in range(draws)]
    )
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else float("nan")


def per_trace_agreement(
    scores: list[np.ndarray], references: list[np.ndarray], metric: str = "spearman", *, final: bool = True
) -> np.ndarray:
    """One method's agreement with the reference on every trace (NaN where either vector is constant)."""
    return np.array([segment_agreement(s, r, metric, final=final) for s, r in zip(scores, references, strict=True)])


def per_trace_control(
    control: str, references: list[np.ndarray], metric: str = "spearman", *, final: bool = True, draws: int = 100
) -> np.ndarray:
    """A control's agreement on every trace; the random control is seeded by the trace's position."""
    return np.array(
        [
            control_agreement(control, r, metric, final=final, draws=draws, seed=index)
            for index, r in enumerate(references)
        ]
    )


def value_at_budget(budgets: list[float], values: list[float], budget: float) -> tuple[float, str]:
    """A cost-quality curve read at ``budget`` (linear in log cost between measured points), with how it was
    read: ``interpolated``, or ``clamped`` to the cheapest / dearest point when the budget lies outside.
    Points with an undefined value (NaN) are skipped; with none left the answer is NaN, ``undefined``."""
    x, y = np.asarray(budgets, dtype=float), np.asarray(values, dtype=float)
    defined = ~np.isnan(y)
    if not defined.any():
        return math.nan, "undefined"
    order = np.argsort(x[defined])
    x, y = np.log(x[defined][order]), y[defined][order]
    at = math.log(budget)
    if at < x[0] or at > x[-1]:
        return float(y[0] if at < x[0] else y[-1]), "clamped"
    return float(np.interp(at, x, y)), "interpolated"


def method_kind(name: str) -> str:
    if name in estimators:
        return "estimator"
    if name in attributions:
        return "attribution"
    raise UnknownNameError("method", name, [*estimators.names(), *attributions.names()])


def compare(
    analyzer: Analyzer,
    trace: Trace,
    segmenter: Segmenter,
    methods: list[str],
    options: dict[str, dict[str, Any]] | None = None,
    progress: dict[str, ProgressFn] | None = None,
) -> Comparison:
    """Run every method on one segmentation of ``trace``; ``options[name]`` configures method ``name``."""
    options = options or {}
    progress = progress or {}
    segmentation = analyzer.segment(trace, segmenter) if analyzer.context(trace).has_stats else None
    results: dict[str, MethodResult] = {}
    for name in methods:
        if method_kind(name) == "estimator":
            estimator = estimators.get(name)(**options.get(name, {}))
            analysis = analyzer.analyze(trace, segmenter, estimator, progress.get(name))
            segmentation = analysis.segmentation
            values = analysis.values
            results[name] = MethodResult(
                name, "estimator", analysis.sigma, values.values, values.intervals, {}, values.notes, analysis.cost
            )
        else:
            if segmentation is None:
                analyzer.context(trace).stats  # noqa: B018  (one pass for the entropies the segmenter needs)
                segmentation = analyzer.segment(trace, segmenter)
            attribution = attributions.get(name)(**options.get(name, {}))
            results[name] = attribute_cached(analyzer, trace, segmentation, attribution, progress.get(name))
    assert segmentation is not None
    return Comparison(trace, segmentation, results)
