"""``Analyzer``: segment a trace, estimate its state values and redistribute the outcome.

The first analysis of a trace runs one model call that yields the token stats (for entropy-based
segmentation) and the scores at every candidate boundary (``boundaries="all"``: the cuts of every segmenter
that declares ``scored_up_front``, e.g. every newline, keyword, paragraph and sentence cut, plus the chosen
segmenter's candidates). Any later segmentation whose cuts are
among them, e.g. the hybrid segmenter with another K, is assembled from the cache with zero model calls.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from rredcot_viz.estimators.base import ValueEstimator
from rredcot_viz.estimators.redistribution import Variant, redistribute
from rredcot_viz.model.backends import Sampler, build_sampler
from rredcot_viz.model.core import ProgressFn
from rredcot_viz.model.lm import LanguageModel
from rredcot_viz.model.meter import measure
from rredcot_viz.scoring.cache import BoundaryCache
from rredcot_viz.scoring.context import PromptConfig, TraceContext
from rredcot_viz.segmenters.base import Segmentation, Segmenter, segmenters
from rredcot_viz.segmenters.scope import Scope, region_end
from rredcot_viz.settings import Settings, setting
from rredcot_viz.traces.needs import missing
from rredcot_viz.traces.trace import Trace
from rredcot_viz.types import CallCost, StateValues

Boundaries = Literal["all", "segmenter", "states"]
LIVE_CONTEXTS = 32
"""Trace contexts an analyzer keeps (their token ids and segmenter input; the scores themselves live in its
``BoundaryCache``, which is sized apart: the app's holds far more traces' scores than it keeps contexts)."""


@dataclass(frozen=True)
class AnalysisConfig(Settings):
    prompt: PromptConfig = field(default_factory=PromptConfig)
    scope: Scope = setting("reasoning", "what is segmented: the reasoning (before </think> or the final-answer "
                           "sentence), the whole response, or everything before </think>", advanced=True)  # fmt: skip
    boundaries: Boundaries = setting("all", "cuts the first model call scores: every text candidate (then any K "
                                     "is free), the segmenter's, or only the final states", advanced=True)  # fmt: skip
    variant: Variant = setting("exact_sum", "redistribution: exact_sum gives sum(sigma) = R exactly, difference "
                               "sum(sigma) = R - Q-hat_1, proportional is for teaching only")  # fmt: skip


@dataclass
class AnalysisResult:
    trace: Trace
    segmentation: Segmentation
    values: StateValues
    sigma: np.ndarray  # (K,) sigma[i] is sigma_{i+1}
    variant: str
    cost: CallCost  # what this call cost the model (zero when everything came from the cache)
    warnings: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> float:
        return float(self.values.values[-1])

    @property
    def k(self) -> int:
        return self.segmentation.k

    @property
    def model_calls(self) -> int:
        return self.cost.calls

    def rows(self, preview: int | None = 60) -> list[dict[str, Any]]:
        """One row per segment t: its text (cut to ``preview`` characters; None: whole, as written), the values at
        the state s_t it starts from, and sigma_t."""
        rows = []
        for segment, sigma in zip(self.segmentation.segments, self.sigma, strict=True):
            state = segment.index  # segment t starts from state s_t: 0-based state index = segment index
            text = " ".join(segment.text.split()) if preview is not None else segment.text
            row: dict[str, Any] = {
                "segment": segment.index + 1,
                "text": text if preview is None or len(text) <= preview else text[: preview - 1] + "…",
                "tokens": segment.n_tokens,
                "boundary": segment.boundary_kind,
            }
            for name, series in self.values.components.items():
                if name in ("R_hat", "v_hat"):
                    row[name] = float(series[state])
            row["Q_hat"] = float(self.values.values[state])
            row["sigma"] = float(sigma)
            rows.append(row)
        return rows

    def record(self) -> dict[str, Any]:
        """The whole result as JSON-ready data (one line of an exported ``.jsonl``): the trace's ids, the
        settings' names, every state value and component, sigma, each segment's spans, warnings and cost."""
        segmentation = self.segmentation
        return {
            "trace_id": self.trace.trace_id,
            "trace_hash": self.trace.content_hash,
            "segmenter": segmentation.strategy,
            "estimator": self.values.estimator,
            "variant": self.variant,
            "k": self.k,
            "outcome": self.outcome,
            "values": self.values.values.tolist(),
            "components": {name: series.tolist() for name, series in self.values.components.items()},
            "sigma": self.sigma.tolist(),
            "segments": [
                {"text": s.text, "char_span": s.char_span, "token_span": s.token_span} for s in segmentation.segments
            ],
            "warnings": self.warnings,
            "cost": self.cost.as_dict(),
        }

    def export_rows(self) -> list[dict[str, Any]]:
        """``rows`` with whole texts and the trace's ids in front (one CSV row per segment)."""
        ids = {"trace_id": self.trace.trace_id, "trace_hash": self.trace.short_id}
        return [{**ids, **row} for row in self.rows(preview=10_000)]


class Analyzer:
    """Runs analyses for one model, keeping token contexts and the all-boundary cache between calls. Scores come
    from ``lm``; rollouts (Monte Carlo, resets, sampling detectors) from ``sampler`` (default: ``lm`` itself)."""

    def __init__(
        self,
        lm: LanguageModel,
        config: AnalysisConfig | None = None,
        cache: BoundaryCache | None = None,
        sampler: Sampler | None = None,
    ):
        self.lm = lm
        self.config = config or AnalysisConfig()
        self.cache = cache or BoundaryCache()
        self.sampler = sampler or build_sampler(lm)
        self._contexts: OrderedDict[tuple[str, PromptConfig], TraceContext] = OrderedDict()

    def context(self, trace: Trace) -> TraceContext:
        key = (trace.content_hash, self.config.prompt)
        if key not in self._contexts:
            self._contexts[key] = TraceContext(trace, self.lm, self.config.prompt, self.cache, self.sampler)
            while len(self._contexts) > LIVE_CONTEXTS:
                self._contexts.popitem(last=False)
        self._contexts.move_to_end(key)
        return self._contexts[key]

    def scope_for(self, segmenter: Segmenter) -> Scope:
        return getattr(segmenter, "scope", None) or self.config.scope

    def candidate_prefixes(self, context: TraceContext, segmenter: Segmenter) -> set[int]:
        """The state prefixes the first model call scores, by ``config.boundaries``."""
        scope = self.scope_for(segmenter)
        prefixes = {0, context.region_tokens(scope)}
        if self.config.boundaries == "states":
            return set()
        if segmenter.text_based:
            prefixes |= set(segmenter.candidate_cuts(context.segmenter_input(scope, with_entropies=False)))
        if self.config.boundaries == "all":
            for name in segmenters.having(scored_up_front=True):
                boundary = segmenters.get(name)()
                if missing(context.trace, boundary.needs):
                    continue
                region = self.scope_for(boundary)
                prefixes |= set(boundary.candidate_cuts(context.segmenter_input(region, with_entropies=False)))
                prefixes.add(context.region_tokens(region))
        return prefixes

    def pending(self, trace: Trace, segmenter: Segmenter, estimator: ValueEstimator) -> int:
        """Model work ``analyze`` would still do (score items or rollouts, plus the token stats when missing);
        0 means the analysis comes from the cache, instantly and with no model call. An estimator that cannot run
        on ``trace`` says what it lacks here, before anything asks it what to score."""
        estimator.check(trace)
        context = self.context(trace)
        if not context.has_stats:
            return 1 + estimator.pending(context, self.candidate_prefixes(context, segmenter), ())
        states = self.segment(trace, segmenter).state_prefixes
        return estimator.pending(context, self.candidate_prefixes(context, segmenter), states)

    def segment(self, trace: Trace, segmenter: Segmenter) -> Segmentation:
        """``segmenter``'s segments of the trace's region; a scope that had to widen says so in the warnings."""
        context = self.context(trace)
        scope = self.scope_for(segmenter)
        segmentation = segmenter.segment(context.segmenter_input(scope))
        widened = region_end(trace.cot, scope)[1]
        if widened:
            segmentation.warnings.append(widened)
        return segmentation

    def precompute(
        self, trace: Trace, segmenter: Segmenter, estimator: ValueEstimator, progress: ProgressFn | None = None
    ) -> CallCost:
        """The first, combined model call: token stats plus scores at every candidate prefix."""
        context = self.context(trace)
        estimator.check(trace)
        prefixes = self.candidate_prefixes(context, segmenter)
        return context.ensure(
            estimator.series(context), prefixes, estimator=estimator, need_stats=True, progress=progress
        )

    def analyze(
        self, trace: Trace, segmenter: Segmenter, estimator: ValueEstimator, progress: ProgressFn | None = None
    ) -> AnalysisResult:
        """Segment ``trace``, estimate its state values and redistribute; ``progress(done, total)`` is called
        per model pass of the first (expensive) call."""
        with measure() as spent:
            self.precompute(trace, segmenter, estimator, progress)
            segmentation = self.segment(trace, segmenter)
            values = estimator.estimate(self.context(trace), segmentation, progress)
        sigma = redistribute(values.values, self.config.variant)
        cost = values.cost = spent.cost
        return AnalysisResult(
            trace, segmentation, values, sigma, self.config.variant, cost, list(segmentation.warnings)
        )
