"""Comparing estimators and attributions on the same segments of one trace (no peer tool puts them side by side).

Estimators contribute their redistributed rewards sigma (and their value curves), attributions their
per-segment scores phi; all share one segmentation, so their agreement is measured on the same units.
Every method's cost is kept next to its numbers: what it cost when it was computed, also when it now comes
from the cache (then marked ``cached``), since a cost of zero would misstate what the method needs.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rredcot_viz.attribution import attributions
from rredcot_viz.attribution.agreement import agreement_matrix
from rredcot_viz.attribution.cached import attribute_cached
from rredcot_viz.attribution.trust import HALVES, Trust, rollouts_per_state, trust
from rredcot_viz.engine.analyzer import Analyzer
from rredcot_viz.errors import UnknownNameError
from rredcot_viz.estimators import estimators
from rredcot_viz.model.core import ProgressFn
from rredcot_viz.segmenters.base import Segmentation, Segmenter
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import CallCost, content_key


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
    cached: bool = False  # served from the cache now; ``cost`` is what it cost when it was computed
    computed_at: float | None = None  # when a cached result was computed
    computed_by: str | None = None  # what computed it, when not a page's own call (the Monte Carlo job)
    components: dict[str, np.ndarray] = field(default_factory=dict)  # an estimator's value components


@dataclass
class Comparison:
    trace: Trace
    segmentation: Segmentation
    methods: dict[str, MethodResult]

    def scores(self) -> dict[str, np.ndarray]:
        return {name: result.scores for name, result in self.methods.items()}

    def matrix(self, metric: str = "spearman") -> tuple[list[str], np.ndarray]:
        return agreement_matrix(self.scores(), metric)

    def trust(self) -> Trust | None:
        """Every method's agreement with Monte Carlo on this trace beside MC's with itself (None without MC)."""
        for name, result in self.methods.items():
            if all(half in result.components for half in HALVES):
                return trust(self.scores(), name, result.components, rollouts_per_state(result.components))
        return None

    def rows(self, preview: int | None = 40) -> list[dict[str, Any]]:
        """One row per segment with every method's score; the text cut to ``preview`` characters (None: whole)."""
        rows = []
        for segment in self.segmentation.segments:
            text = " ".join(segment.text.split()) if preview is not None else segment.text
            row: dict[str, Any] = {"segment": segment.index + 1, "text": text[:preview] if preview else text}
            for name, result in self.methods.items():
                row[name] = float(result.scores[segment.index])
            rows.append(row)
        return rows


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
                name,
                "estimator",
                analysis.sigma,
                values.values,
                values.intervals,
                {},
                values.notes,
                analysis.cost,
                components=values.components,
            )
        else:
            if segmentation is None:
                analyzer.context(trace).score_stats()  # one pass for the entropies the segmenter needs
                segmentation = analyzer.segment(trace, segmenter)
            attribution = attributions.get(name)(**options.get(name, {}))
            scores = attribute_cached(analyzer, trace, segmentation, attribution, progress.get(name))
            results[name] = MethodResult(
                name, "attribution", scores.values, None, {}, scores.checks, scores.notes, scores.cost, scores.stderr
            )
    assert segmentation is not None
    for name, result in results.items():
        _keep_cost(analyzer, trace, segmentation, name, options.get(name, {}), result)
    return Comparison(trace, segmentation, results)


def remember_cost(
    analyzer: Analyzer,
    trace: Trace,
    segmentation: Segmentation,
    name: str,
    options: dict[str, Any],
    cost: CallCost,
    by: str | None = None,
) -> None:
    """Keep what computing method ``name`` with ``options`` on these segments cost, when, and by what (``by``: a
    background job) (memory and store)."""
    context = analyzer.context(trace)
    key = method_cost_key(context.key, segmentation, name, options)
    payload = {**cost.as_dict(), "computed_at": time.time(), "computed_by": by}
    context.cache.put_result(context.key, key, "method-cost", name, dict(options), payload, cost.as_dict())


def remembered_cost(
    analyzer: Analyzer, trace: Trace, segmentation: Segmentation, name: str, options: dict[str, Any]
) -> tuple[CallCost, float | None] | None:
    """What computing method ``name`` cost when it was computed, when, and by what (None: not recorded)."""
    context = analyzer.context(trace)
    stored = context.cache.result(context.key, method_cost_key(context.key, segmentation, name, options))
    if stored is None:
        return None
    cost = CallCost(**{k: stored[k] for k in CallCost.__dataclass_fields__ if k in stored})
    return cost, stored.get("computed_at"), stored.get("computed_by")


def method_cost_key(context_key: str, segmentation: Segmentation, name: str, options: dict[str, Any]) -> str:
    settings = json.dumps(options, sort_keys=True, default=str)
    return content_key("method-cost", context_key, name, settings, segmentation.cuts, segmentation.state_prefixes[-1])


def _keep_cost(
    analyzer: Analyzer,
    trace: Trace,
    segmentation: Segmentation,
    name: str,
    options: dict[str, Any],
    result: MethodResult,
) -> None:
    """Record a computed method's cost, or give a cached one the cost it had when it was computed."""
    if result.cost.calls:
        remember_cost(analyzer, trace, segmentation, name, options, result.cost)
        return
    before = remembered_cost(analyzer, trace, segmentation, name, options)
    if before is not None:
        (result.cost, result.computed_at, result.computed_by), result.cached = before, True


def run_sampling(
    analyzer: Analyzer,
    trace: Trace,
    segmenter: Segmenter,
    name: str,
    options: dict[str, Any],
    progress: ProgressFn | None = None,
) -> None:
    """Draw a sampling estimator's rollouts for ``compare`` (the slow part, run as a job) and keep what they
    cost."""
    estimator = estimators.get(name)(**options)
    analysis = analyzer.analyze(trace, segmenter, estimator, progress)
    if analysis.cost.calls:
        job = f"the {estimator.title or name} job"
        remember_cost(analyzer, trace, analysis.segmentation, name, options, analysis.cost, job)
